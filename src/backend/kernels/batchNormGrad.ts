import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { GradientPatch, KernelArgs, KernelFn, KernelPatch } from './registry';
import { BLOCK_ROWS } from './leadingAxisReduce';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';
import { SimdKernels, simdKernels } from './wasmSimd';

/**
 * A fused backward pass for `FusedBatchNorm` (`tf.batchNorm`, which tfjs-layers'
 * BatchNormalization calls).
 *
 * With `y = (x − mean)·s·scale + offset`, `s = 1/sqrt(variance + ε)`, per channel:
 *
 *     dx = dy·scale·s                      dmean = −scale·s·Σdy
 *     dvariance = −½·scale·s³·Σdy(x−mean)   dscale = s·Σdy(x−mean)     doffset = Σdy
 *
 * tfjs's registered gradient builds these from ~14 full-size ops (a tiled `1/sqrt(variance)`, a
 * `x − mean`, products, and sums that the wasm backend can only do after a transpose). All five
 * only need two per-channel sums, Σdy and Σdy·(x−mean), and one pass to write dx: this kernel
 * does exactly that, with the sums in float64.
 *
 * The gradient stays tfjs's on backends where the kernel is not registered (webgl, tensorflow),
 * and for parameter shapes it does not cover (anything but one value per channel).
 *
 * With the attribute `training`, the kernel gives the input gradient of a training step instead,
 * where `mean` and `variance` are the batch's own moments of `x` (M values per channel):
 *
 *     dx = scale·s·(dy − Σdy/M − (x − mean)·s²·Σdy(x−mean)/M)
 *
 * the same two sums and still one pass to write dx (batchNormTraining.ts).
 */
export const BATCH_NORM_GRAD = 'TfjsAccumulateBatchNormGrad';

interface Params {
  x: Float32Array;
  dy: Float32Array;
  mean: Float32Array;
  variance: Float32Array;
  scale: Float32Array | null;
  epsilon: number;
  channels: number;
  /** dx of a training step, the moments being the batch's (see above). */
  training: boolean;
}

/**
 * A channel's coefficients of dx = dy·a + (x − mean)·b + c, from its `s = 1/sqrt(variance + ε)`,
 * its scale `g` and the two sums over its `count` values: b = c = 0 outside training.
 */
function dxCoefficients(training: boolean, s: number, g: number, count: number, sumDy: number, sumDyXc: number): [number, number, number] {
  const a = g * s;
  if (!training) return [a, 0, 0];
  return [a, (-a * s * s * sumDyXc) / count, (-a * sumDy) / count];
}

/** Writes dx and returns [dmean, dvariance, dscale, doffset] per channel. */
export function batchNormGradLoops(p: Params, dx: Float32Array): Float32Array[] {
  const { x, dy, mean, variance, scale, epsilon, channels: c } = p;
  const n = x.length;
  const sumDy = new Float64Array(c);
  const sumDyXc = new Float64Array(c);
  // Channel by channel with scalar accumulators (kept in registers), inside blocks of rows that
  // stay in cache while each channel is walked.
  const block = BLOCK_ROWS * c;
  for (let start = 0; start < n; start += block) {
    const end = Math.min(n, start + block);
    for (let k = 0; k < c; k++) {
      const m = mean[k];
      let a = 0;
      let b = 0;
      for (let i = start + k; i < end; i += c) {
        const g = dy[i];
        a += g;
        b += g * (x[i] - m);
      }
      sumDy[k] += a;
      sumDyXc[k] += b;
    }
  }
  const dmean = new Float32Array(c);
  const dvariance = new Float32Array(c);
  const dscale = new Float32Array(c);
  const doffset = new Float32Array(c);
  const a = new Float64Array(c);
  const b = new Float64Array(c);
  const shift = new Float64Array(c);
  const count = c === 0 ? 0 : n / c;
  for (let k = 0; k < c; k++) {
    const s = 1 / Math.sqrt(variance[k] + epsilon);
    const g = scale ? scale[k] : 1;
    [a[k], b[k], shift[k]] = dxCoefficients(p.training, s, g, count, sumDy[k], sumDyXc[k]);
    dmean[k] = -g * s * sumDy[k];
    dvariance[k] = -0.5 * g * s * s * s * sumDyXc[k];
    dscale[k] = s * sumDyXc[k];
    doffset[k] = sumDy[k];
  }
  if (p.training) {
    for (let base = 0; base < n; base += c) {
      for (let k = 0; k < c; k++) dx[base + k] = dy[base + k] * a[k] + (x[base + k] - mean[k]) * b[k] + shift[k];
    }
  } else {
    for (let base = 0; base < n; base += c) {
      for (let k = 0; k < c; k++) dx[base + k] = dy[base + k] * Math.fround(a[k]);
    }
  }
  return [dmean, dvariance, dscale, doffset];
}

/** The kernel's attributes: FusedBatchNorm's, and whether the moments are the batch's own (training). */
export interface BatchNormGradAttrs {
  varianceEpsilon: number;
  training?: boolean;
}

function paramsShape(x: tf.TensorInfo): number[] {
  return [x.shape[x.shape.length - 1]];
}

function batchNormGradWasm(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { x, dy, mean, variance, scale } = args.inputs as Record<string, tf.TensorInfo>;
    const { varianceEpsilon, training } = args.attrs as unknown as BatchNormGradAttrs;
    const c = x.shape[x.shape.length - 1];
    const outs = [backend.makeOutput(x.shape, 'float32'), ...[0, 1, 2, 3].map(() => backend.makeOutput(paramsShape(x), 'float32'))];
    const simd = c % 4 === 0 && sizeOf(x.shape) > 0 ? simdKernels(backend) : null;
    if (simd) {
      batchNormGradSimd(simd, backend, { x, dy, mean, variance, scale }, varianceEpsilon, training === true, outs);
      return outs;
    }
    const small = batchNormGradLoops(
      {
        x: heapF32(backend, x),
        dy: heapF32(backend, dy),
        mean: heapF32(backend, mean),
        variance: heapF32(backend, variance),
        scale: scale ? heapF32(backend, scale) : null,
        epsilon: varianceEpsilon,
        channels: c,
        training: training === true,
      },
      heapF32(backend, outs[0]),
    );
    small.forEach((v, i) => heapF32(backend, outs[i + 1]).set(v));
    return outs;
  };
}

/** Where a tensor's data starts on the wasm heap (bytes). */
function addressOf(backend: WasmBackend, t: tf.TensorInfo): number {
  return (backend.dataIdMap.get(t.dataId) as { memoryOffset: number }).memoryOffset;
}

/**
 * The same two passes in WebAssembly SIMD: the per-channel sums (float64, as above) and then
 * `dx = dy · factor` as a per-channel affine map with zero shift (`affine2` of dy and x in
 * training). Scratch space lives on the heap for the duration of the call.
 */
function batchNormGradSimd(
  simd: SimdKernels,
  backend: WasmBackend,
  t: Record<'x' | 'dy' | 'mean' | 'variance', tf.TensorInfo> & { scale?: tf.TensorInfo },
  epsilon: number,
  training: boolean,
  outs: tf.TensorInfo[],
): void {
  const c = t.x.shape[t.x.shape.length - 1];
  const rows = sizeOf(t.x.shape) / c;
  // Float64 sums and means (3·c doubles), then the dx pass's mean and coefficients (4·c floats).
  const scratch = backend.makeOutput([6 * c + 4 * c + 2], 'float32');
  try {
    // Align the float64 part to 8 bytes (the allocator gives at least 4).
    const base = addressOf(backend, scratch);
    const sums = base % 8 === 0 ? base : base + 4;
    const params = sums + 24 * c;
    const heap = backend.wasm.HEAPU8.buffer;
    const f64 = new Float64Array(heap, sums, 3 * c);
    const mean = heapF32(backend, t.mean);
    f64.fill(0, 0, 2 * c);
    for (let k = 0; k < c; k++) f64[2 * c + k] = mean[k];
    simd.batchNormGradSums(addressOf(backend, t.x), addressOf(backend, t.dy), sums, rows, 4 * c);
    const variance = heapF32(backend, t.variance);
    const scale = t.scale ? heapF32(backend, t.scale) : null;
    const p = new Float32Array(heap, params, 4 * c);
    const [dmean, dvariance, dscale, doffset] = outs.slice(1).map((o) => heapF32(backend, o));
    for (let k = 0; k < c; k++) {
      const s = 1 / Math.sqrt(variance[k] + epsilon);
      const g = scale ? scale[k] : 1;
      const sumDy = f64[k];
      const sumDyXc = f64[c + k];
      dmean[k] = -g * s * sumDy;
      dvariance[k] = -0.5 * g * s * s * s * sumDyXc;
      dscale[k] = s * sumDyXc;
      doffset[k] = sumDy;
      const [a, b, shift] = dxCoefficients(training, s, g, rows, sumDy, sumDyXc);
      if (training) [p[k], p[c + k], p[2 * c + k], p[3 * c + k]] = [mean[k], b, a, shift];
      else [p[k], p[c + k], p[2 * c + k]] = [0, a, 0];
    }
    if (training) simd.affine2(addressOf(backend, t.x), addressOf(backend, t.dy), addressOf(backend, outs[0]), params, rows, 4 * c);
    else simd.affine(addressOf(backend, t.dy), addressOf(backend, outs[0]), params, rows, 4 * c);
  } finally {
    backend.disposeData(scratch.dataId);
  }
}

function batchNormGradCpu(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { x, dy, mean, variance, scale } = args.inputs as Record<string, tf.TensorInfo>;
    const { varianceEpsilon, training } = args.attrs as unknown as BatchNormGradAttrs;
    const dx = new Float32Array(sizeOf(x.shape));
    const small = batchNormGradLoops(
      {
        x: cpuValues(backend, x),
        dy: cpuValues(backend, dy),
        mean: cpuValues(backend, mean),
        variance: cpuValues(backend, variance),
        scale: scale ? cpuValues(backend, scale) : null,
        epsilon: varianceEpsilon,
        channels: x.shape[x.shape.length - 1],
        training: training === true,
      },
      dx,
    );
    return [backend.makeTensorInfo(x.shape, 'float32', dx), ...small.map((v) => backend.makeTensorInfo(paramsShape(x), 'float32', v))];
  };
}

/** One float32 value per channel: shape [C], or [1, …, 1, C]. */
export function perChannel(t: tf.Tensor | undefined, c: number): boolean {
  if (t === undefined) return true;
  return t.size === c && t.shape[t.shape.length - 1] === c && t.dtype === 'float32';
}

function batchNormGradient(stock: tf.GradConfig | undefined): tf.GradConfig {
  return {
    kernelName: 'FusedBatchNorm',
    inputsToSave: ['x', 'mean', 'variance', 'scale'],
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: tf.NamedAttrMap) => {
      const [x, mean, variance, scale] = saved;
      const g = dy as tf.Tensor;
      const c = x.shape[x.shape.length - 1];
      const fused =
        tf.getKernel(BATCH_NORM_GRAD, tf.getBackend()) !== undefined &&
        x.dtype === 'float32' &&
        g.dtype === 'float32' &&
        perChannel(mean, c) &&
        perChannel(variance, c) &&
        perChannel(scale ?? undefined, c);
      if (!fused) {
        if (!stock?.gradFunc) throw new Error('tfjs-accumulate: no stock gradient for FusedBatchNorm.');
        return stock.gradFunc(dy, saved, attrs);
      }
      const inputs: tf.NamedTensorMap = { x, dy: g, mean, variance };
      if (scale) inputs.scale = scale;
      const [dx, dmean, dvariance, dscale, doffset] = tf.engine().runKernel(BATCH_NORM_GRAD, inputs, attrs) as tf.Tensor[];
      return {
        x: () => dx,
        mean: () => tf.reshape(dmean, mean.shape),
        variance: () => tf.reshape(dvariance, variance.shape),
        scale: () => (scale ? tf.reshape(dscale, scale.shape) : dscale),
        // offset is not saved; its gradient has one value per channel, shaped like mean's.
        offset: () => tf.reshape(doffset, mean.shape),
      };
    },
  };
}

/** The kernel patches of this file. */
export const batchNormGradPatches: KernelPatch[] = [
  { kernelName: BATCH_NORM_GRAD, backendName: 'wasm', description: 'added: BatchNorm backward in two passes (used by the FusedBatchNorm gradient below)', build: batchNormGradWasm },
  { kernelName: BATCH_NORM_GRAD, backendName: 'cpu', description: 'added: BatchNorm backward in two passes (used by the FusedBatchNorm gradient below)', build: batchNormGradCpu },
];

/** The gradient patch of this file. */
export const batchNormGradientPatch: GradientPatch = {
  kernelName: 'FusedBatchNorm',
  description: 'FusedBatchNorm gradient: one fused kernel instead of ~14 full-size ops, where the backend has it',
  build: batchNormGradient,
};
