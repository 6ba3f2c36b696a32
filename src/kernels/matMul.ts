import * as tf from '@tensorflow/tfjs';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { disposeAll, runStock, sizeOf, WasmBackend } from './wasmHeap';
import { derivedWeight } from './weightCache';

/**
 * Transposed matrix products on wasm through XNNPACK.
 *
 * The stock wasm `BatchMatMul` uses XNNPACK only when neither operand is transposed and both
 * are single matrices; anything else falls to a scalar triple loop (~1 GFLOP/s). Backprop of
 * `y = x W` needs `x^T dy` and `dy W^T`, both transposed, so every dense layer's backward pass
 * took the slow loop. Here the transposed operand is materialized with the stock (fast)
 * `Transpose` and the product runs on the XNNPACK path. A transposed weight (`W^T` for the
 * input gradient) is cached for as long as the weight lives, so XNNPACK packs it once per
 * update, not once per micro-step.
 *
 * Exact: the same products and sums as the stock kernel, only in a different order, so results
 * agree to float32 rounding.
 */
function batchMatMulWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    const singleA = sizeOf(a.shape.slice(0, -2)) === 1;
    const singleB = sizeOf(b.shape.slice(0, -2)) === 1;
    if ((!transposeA && !transposeB) || !singleA || !singleB || a.dtype !== 'float32' || b.dtype !== 'float32') {
      return (stock as KernelFn)(args);
    }
    const a2 = transposeA ? transpose2d(backend, a) : null;
    // The right-hand operand is what XNNPACK packs; when it is a weight, keep its transpose.
    const b2 = transposeB ? derivedWeight(backend, b, 'matMul.transposeB', () => transpose2d(backend, b)) : null;
    try {
      return runStock('BatchMatMul', 'wasm', backend, { a: a2 ?? a, b: b2 ? b2.info : b }, { transposeA: false, transposeB: false });
    } finally {
      disposeAll(backend, a2, b2?.owned ? b2.info : null);
    }
  };
}

/** Transposes the last two axes of a single (batch 1) matrix, keeping its leading unit dims. */
function transpose2d(backend: WasmBackend, x: tf.TensorInfo): tf.TensorInfo {
  const rank = x.shape.length;
  const rows = x.shape[rank - 2];
  const cols = x.shape[rank - 1];
  const x2: tf.TensorInfo = { dataId: x.dataId, shape: [rows, cols], dtype: x.dtype };
  const t = runStock('Transpose', 'wasm', backend, { x: x2 }, { perm: [1, 0] });
  t.shape = [...x.shape.slice(0, -2), cols, rows];
  return t;
}

/** The wasm patches of this file. */
export const matMulPatches: KernelPatch[] = [
  {
    kernelName: 'BatchMatMul',
    backendName: 'wasm',
    description: 'transposed products through an explicit transpose and XNNPACK (the stock kernel loops in scalar code); transposed weights cached per update',
    build: batchMatMulWasm,
  },
];
