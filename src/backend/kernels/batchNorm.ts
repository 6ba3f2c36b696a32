import * as tf from '@tensorflow/tfjs';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';
import { simdKernels } from './wasmSimd';

/**
 * `FusedBatchNorm` (`tf.batchNorm`, BatchNormalization's forward pass) on wasm as one
 * WebAssembly SIMD pass: `y = (x − mean)·f + offset` with `f = scale / sqrt(variance + ε)`
 * computed once per channel.
 *
 * The stock wasm kernel takes ~4.5 ns per element (its loop re-derives each parameter's index
 * per element), as much as the XNNPACK convolution before it in a small CNN; this pass runs at
 * memory speed. It covers float32 inputs whose statistics, scale and offset hold one value per
 * channel and whose channel count is a multiple of 4; everything else goes to the stock kernel.
 *
 * Exact to float32 rounding: the stock cpu kernel computes `offset + (x − mean)·scale/sqrt(…)`
 * in float64 and rounds once; here the subtraction, product and sum round in float32.
 */
function perChannel(t: tf.TensorInfo | undefined, c: number): boolean {
  return t === undefined || (t.dtype === 'float32' && sizeOf(t.shape) === c);
}

function batchNormWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { x, mean, variance, offset, scale } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const { varianceEpsilon } = args.attrs as unknown as tf.FusedBatchNormAttrs;
    const input = x as tf.TensorInfo;
    const c = input.shape.length > 0 ? input.shape[input.shape.length - 1] : 0;
    const supported =
      input.dtype === 'float32' && c > 0 && c % 4 === 0 && sizeOf(input.shape) > 0 &&
      mean !== undefined && variance !== undefined && perChannel(mean, c) && perChannel(variance, c) && perChannel(offset, c) && perChannel(scale, c);
    const simd = supported ? simdKernels(backend) : null;
    if (!simd) return (stock as KernelFn)(args);
    const out = backend.makeOutput(input.shape, 'float32');
    const params = backend.makeOutput([3 * c], 'float32');
    try {
      const p = heapF32(backend, params);
      const m = heapF32(backend, mean as tf.TensorInfo);
      const v = heapF32(backend, variance as tf.TensorInfo);
      const o = offset ? heapF32(backend, offset) : null;
      const s = scale ? heapF32(backend, scale) : null;
      for (let k = 0; k < c; k++) {
        p[k] = m[k];
        p[c + k] = (s ? s[k] : 1) / Math.sqrt(v[k] + varianceEpsilon);
        p[2 * c + k] = o ? o[k] : 0;
      }
      const at = (t: tf.TensorInfo) => (backend.dataIdMap.get(t.dataId) as { memoryOffset: number }).memoryOffset;
      simd.affine(at(input), at(out), at(params), sizeOf(input.shape) / c, 4 * c);
      return out;
    } finally {
      backend.disposeData(params.dataId);
    }
  };
}

/** The patches of this file. */
export const batchNormPatches: KernelPatch[] = [
  {
    kernelName: 'FusedBatchNorm',
    backendName: 'wasm',
    description: 'one WebAssembly SIMD pass with a per-channel factor (the stock kernel re-indexes every parameter per element)',
    build: batchNormWasm,
  },
];
