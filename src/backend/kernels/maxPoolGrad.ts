import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, WasmBackend } from './wasmHeap';
import { simdKernels } from './wasmSimd';

/**
 * The gradient of 2-D max pooling: each output's gradient goes to the input element that was
 * the window's maximum.
 *
 * The stock cpu kernel first builds a position buffer through `TensorBuffer.get`, then visits
 * every input element and every window that could contain it; the wasm one is a scalar loop
 * over the same structure. Here one pass over the windows finds each maximum, vectorized over
 * the channels (contiguous in NHWC), and adds the output gradient at its position.
 *
 * Ties go to the first maximum in row-major window order, and windows whose values are all NaN
 * or −Infinity pass no gradient, exactly as in the stock cpu kernel.
 *
 * On wasm, 2x2 windows with stride 2 (what CNNs use) run in WebAssembly SIMD (`wasmSimd.ts`):
 * the same comparisons as masks, so no branch depends on the data. In JS the maximum's position
 * is a data-dependent branch that random activations mispredict about half the time (~4 ns per
 * input element, against ~1.4 ns when the data is constant).
 */
export interface PoolGeometry {
  batchSize: number;
  inHeight: number;
  inWidth: number;
  inChannels: number;
  outHeight: number;
  outWidth: number;
  strideHeight: number;
  strideWidth: number;
  dilationHeight: number;
  dilationWidth: number;
  effectiveFilterHeight: number;
  effectiveFilterWidth: number;
  padInfo: { top: number; left: number };
}

/** Writes the max-pool input gradient into `dx` (overwriting it). */
export function maxPoolGradLoops(x: Float32Array, dy: Float32Array, dx: Float32Array, g: PoolGeometry): void {
  const { batchSize, inHeight, inWidth, inChannels: c, outHeight, outWidth } = g;
  const { strideHeight: sh, strideWidth: sw, dilationHeight: dh, dilationWidth: dw } = g;
  const top = g.padInfo.top;
  const left = g.padInfo.left;
  dx.fill(0);
  if (sh >= g.effectiveFilterHeight && sw >= g.effectiveFilterWidth && dh === 1 && dw === 1) {
    disjointWindows(x, dy, dx, g);
    return;
  }
  const best = new Float32Array(c);
  const where = new Int32Array(c);
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      const rowStart = oh * sh - top;
      let rMin = rowStart;
      while (rMin < 0) rMin += dh;
      const rMax = Math.min(inHeight, rowStart + g.effectiveFilterHeight);
      for (let ow = 0; ow < outWidth; ow++) {
        const colStart = ow * sw - left;
        let cMin = colStart;
        while (cMin < 0) cMin += dw;
        const cMax = Math.min(inWidth, colStart + g.effectiveFilterWidth);
        best.fill(-Infinity);
        where.fill(-1);
        for (let r = rMin; r < rMax; r += dh) {
          for (let col = cMin; col < cMax; col += dw) {
            const base = ((n * inHeight + r) * inWidth + col) * c;
            for (let k = 0; k < c; k++) {
              const v = x[base + k];
              if (v > best[k]) {
                best[k] = v;
                where[k] = base + k;
              }
            }
          }
        }
        const dyBase = ((n * outHeight + oh) * outWidth + ow) * c;
        for (let k = 0; k < c; k++) if (where[k] >= 0) dx[where[k]] += dy[dyBase + k];
      }
    }
  }
}

/**
 * The common case (2x2 windows with stride 2): windows do not overlap, so every input gets at
 * most one gradient and the maximum can live in scalars, channel by channel.
 */
function disjointWindows(x: Float32Array, dy: Float32Array, dx: Float32Array, g: PoolGeometry): void {
  const { batchSize, inHeight, inWidth, inChannels: c, outHeight, outWidth } = g;
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      const r0 = Math.max(0, oh * g.strideHeight - g.padInfo.top);
      const r1 = Math.min(inHeight, oh * g.strideHeight - g.padInfo.top + g.effectiveFilterHeight);
      for (let ow = 0; ow < outWidth; ow++) {
        const c0 = Math.max(0, ow * g.strideWidth - g.padInfo.left);
        const c1 = Math.min(inWidth, ow * g.strideWidth - g.padInfo.left + g.effectiveFilterWidth);
        const dyBase = ((n * outHeight + oh) * outWidth + ow) * c;
        if (r1 - r0 === 2 && c1 - c0 === 2) {
          // A full 2x2 window: four fixed offsets, compared in row-major order.
          const i0 = ((n * inHeight + r0) * inWidth + c0) * c;
          const i1 = i0 + c;
          const i2 = i0 + inWidth * c;
          const i3 = i2 + c;
          for (let k = 0; k < c; k++) {
            let best = -Infinity;
            let where = -1;
            let v = x[i0 + k];
            if (v > best) {
              best = v;
              where = i0 + k;
            }
            v = x[i1 + k];
            if (v > best) {
              best = v;
              where = i1 + k;
            }
            v = x[i2 + k];
            if (v > best) {
              best = v;
              where = i2 + k;
            }
            v = x[i3 + k];
            if (v > best) where = i3 + k;
            if (where >= 0) dx[where] = dy[dyBase + k];
          }
          continue;
        }
        for (let k = 0; k < c; k++) {
          let best = -Infinity;
          let where = -1;
          for (let r = r0; r < r1; r++) {
            for (let col = c0; col < c1; col++) {
              const i = ((n * inHeight + r) * inWidth + col) * c + k;
              const v = x[i];
              if (v > best) {
                best = v;
                where = i;
              }
            }
          }
          if (where >= 0) dx[where] = dy[dyBase + k];
        }
      }
    }
  }
}

/**
 * 2x2 windows with stride 2 that cover the input exactly, over a multiple of 4 channels: the
 * case of the WebAssembly SIMD loop (every window full, every input element in one window).
 */
function tilesExactly2x2(g: PoolGeometry): boolean {
  return (
    g.effectiveFilterHeight === 2 && g.effectiveFilterWidth === 2 && g.strideHeight === 2 && g.strideWidth === 2 &&
    g.dilationHeight === 1 && g.dilationWidth === 1 && g.padInfo.top === 0 && g.padInfo.left === 0 &&
    g.inHeight === 2 * g.outHeight && g.inWidth === 2 * g.outWidth && g.inChannels % 4 === 0 && g.batchSize * g.outHeight * g.outWidth > 0
  );
}

/**
 * The pooling geometry, with the output size taken from `dy`: tfjs's gradient of `maxPool` does
 * not pass `dimRoundingMode` on, so with a numeric pad and `ceil` (or `round`) rounding the size
 * recomputed from the attributes is smaller than the one the forward pass had (as in the conv
 * gradients, `dy` is the truth).
 */
function geometry(x: tf.TensorInfo, dy: tf.TensorInfo, attrs: tf.MaxPoolGradAttrs): PoolGeometry {
  const info = tf.backend_util.computePool2DInfo(
    x.shape as [number, number, number, number],
    attrs.filterSize,
    attrs.strides,
    1,
    attrs.pad,
    attrs.dimRoundingMode,
  );
  return { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
}

function maxPoolGradWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { dy, input } = args.inputs as { dy: tf.TensorInfo; input: tf.TensorInfo };
    if (input.dtype !== 'float32' || dy.dtype !== 'float32') return (stock as KernelFn)(args);
    const g = geometry(input, dy, args.attrs as unknown as tf.MaxPoolGradAttrs);
    const dx = backend.makeOutput(input.shape, 'float32');
    const simd = tilesExactly2x2(g) ? simdKernels(backend) : null;
    if (simd) {
      const at = (t: tf.TensorInfo) => (backend.dataIdMap.get(t.dataId) as { memoryOffset: number }).memoryOffset;
      const channelBytes = 4 * g.inChannels;
      simd.maxPoolGrad2x2(at(input), at(dy), at(dx), g.outWidth, g.batchSize * g.outHeight, channelBytes, g.inWidth * channelBytes);
      return dx;
    }
    maxPoolGradLoops(heapF32(backend, input), heapF32(backend, dy), heapF32(backend, dx), g);
    return dx;
  };
}

function maxPoolGradCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { dy, input } = args.inputs as { dy: tf.TensorInfo; input: tf.TensorInfo };
    if (input.dtype !== 'float32' || dy.dtype !== 'float32') return (stock as KernelFn)(args);
    const g = geometry(input, dy, args.attrs as unknown as tf.MaxPoolGradAttrs);
    const dx = new Float32Array(input.shape.reduce((a, b) => a * b, 1));
    maxPoolGradLoops(cpuValues(backend, input), cpuValues(backend, dy), dx, g);
    return backend.makeTensorInfo(input.shape, 'float32', dx);
  };
}

/** The patches of this file. */
export const maxPoolGradPatches: KernelPatch[] = [
  { kernelName: 'MaxPoolGrad', backendName: 'wasm', description: 'one pass over the windows, branch-free in WebAssembly SIMD for 2x2 windows with stride 2', build: maxPoolGradWasm },
  { kernelName: 'MaxPoolGrad', backendName: 'cpu', description: 'one pass over the windows instead of TensorBuffer.get per element', build: maxPoolGradCpu },
];
