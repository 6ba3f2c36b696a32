import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { notingAttrs } from './fusedGradients';
import { biasAndActivation, FUSED_ACTIVATIONS } from './matMul';
import { nativeAddon, sgemm } from './nativeBlas';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { sizeOf } from './wasmHeap';

/**
 * Matrix products on the cpu backend through the system CBLAS (the optional native addon):
 * `BatchMatMul` and `_FusedMatMul`, so a Dense layer's forward product and both of its gradient
 * products (`dy · Wᵀ`, `xᵀ · dy`, which tfjs runs as transposed BatchMatMuls) run in OpenBLAS.
 *
 * The cpu backend keeps each tensor as one Float32Array, so the addon reads the operands and
 * writes the result in place: no copy in, no copy out. Transposes are CBLAS flags, not copies.
 * A batch of A against one shared B (`[batch, m, k] · [k, n]`) is one product with `batch·m`
 * rows. A fused bias whose size is the column count is written into the output first and the
 * product added onto it (CBLAS's beta = 1), instead of a separate Add kernel over the output.
 *
 * Exact: the same sums of products as the stock kernel, in another order, within float32
 * rounding. Integer dtypes, unusual broadcasts and shape errors go to the stock kernel.
 */
type CpuWithDispose = CpuBackend & { disposeData(dataId: object): void };

/** `a · b` (with the transposes) into a new cpu tensor, or null for the stock kernel's cases. */
export function nativeProduct(backend: CpuBackend, a: tf.TensorInfo, b: tf.TensorInfo, transA: boolean, transB: boolean, bias: Float32Array | null = null): tf.TensorInfo | null {
  if (a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2) return null;
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = transA ? a.shape[ra - 1] : a.shape[ra - 2];
  const k = transA ? a.shape[ra - 2] : a.shape[ra - 1];
  const n = transB ? b.shape[rb - 2] : b.shape[rb - 1];
  const kb = transB ? b.shape[rb - 1] : b.shape[rb - 2];
  const batchA = sizeOf(a.shape.slice(0, -2));
  const batchB = sizeOf(b.shape.slice(0, -2));
  if (k !== kb || (batchA !== batchB && batchA !== 1 && batchB !== 1)) return null;
  if (bias !== null && bias.length !== n) return null;
  const outer = tf.backend_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const batch = Math.max(batchA, batchB);
  const out = new Float32Array(batch * m * n);
  if (bias !== null) fillRows(out, bias);
  const addon = nativeAddon('nativeProduct');
  const av = cpuValues(backend, a);
  const bv = cpuValues(backend, b);
  const beta = bias === null ? 0 : 1;
  if (batchB === 1 && !transA) {
    // Every A matrix against the same B: one product of batch·m rows.
    sgemm(addon, { transA, transB, m: batch * m, n, k, beta }, av, bv, out);
  } else {
    sgemm(addon, { transA, transB, m, n, k, batch, strideA: batchA === 1 ? 0 : m * k, strideB: batchB === 1 ? 0 : k * n, beta }, av, bv, out);
  }
  return backend.makeTensorInfo([...outer, m, n], 'float32', out);
}

/** Writes `row` into every consecutive row of `out` (a bias, before the product is added). */
export function fillRows(out: Float32Array, row: Float32Array): void {
  const n = row.length;
  if (n === 0) return;
  out.set(row, 0);
  // Doubling copies: log2(rows) calls of the engine's memmove instead of one per row.
  for (let filled = n; filled < out.length; filled *= 2) out.copyWithin(filled, 0, Math.min(filled, out.length - filled));
}

function batchMatMulNative(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    return nativeProduct(args.backend as CpuBackend, a, b, transposeA, transposeB) ?? (stock as KernelFn)(args);
  };
}

/**
 * The bias values to write into a product's output first: a float32 bias with one value per
 * output column (what Dense layers have). Anything else is added by the stock Add kernel.
 */
export function columnBias(backend: CpuBackend, bias: tf.TensorInfo | undefined, columns: number): Float32Array | null {
  if (!bias || bias.dtype !== 'float32' || sizeOf(bias.shape) !== columns || bias.shape[bias.shape.length - 1] !== columns) return null;
  return cpuValues(backend, bias);
}

function fusedMatMulNative(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuWithDispose;
    const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const activation = (attrs.activation as string) ?? 'linear';
    if (!FUSED_ACTIVATIONS.includes(activation) || (activation === 'prelu' && !preluActivationWeights)) return (stock as KernelFn)(args);
    const transB = attrs.transposeB as boolean;
    const bShape = (b as tf.TensorInfo).shape;
    const n = transB ? bShape[bShape.length - 2] : bShape[bShape.length - 1];
    const inBias = columnBias(backend, bias, n);
    const product = nativeProduct(backend, a as tf.TensorInfo, b as tf.TensorInfo, attrs.transposeA as boolean, transB, inBias);
    if (!product) return (stock as KernelFn)(args);
    return biasAndActivation(backend, product, inBias ? undefined : bias, attrs, preluActivationWeights) as tf.TensorInfo;
  };
}

/** The patches of this file (registered by `installFastKernels("native")` in place of the JS ones). */
export const nativeMatMulPatches: KernelPatch[] = [
  {
    kernelName: 'BatchMatMul',
    backendName: 'cpu',
    description: 'native: cblas_sgemm on the cpu tensors in place (transposes as flags, a shared weight as one product)',
    build: batchMatMulNative,
  },
  {
    kernelName: '_FusedMatMul',
    backendName: 'cpu',
    description: 'native: cblas_sgemm onto the bias written into the output (beta = 1), then the stock activation',
    build: (stock) => notingAttrs(fusedMatMulNative(stock)),
  },
];
