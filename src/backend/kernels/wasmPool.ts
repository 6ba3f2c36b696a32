import * as tf from '@tensorflow/tfjs';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';

/**
 * The stock wasm `MaxPool` (XNNPACK) kept for what it computes right, and a loop over the heap
 * for the rest (tfjs-backend-wasm 4.22):
 *
 * - an empty input or output aborted the WebAssembly module (every later op on the backend then
 *   traps), as did an input narrower than the window whose output tfjs sizes as empty;
 * - a numeric pad with `ceil` or `round` rounding, or a filter or stride that differs between the
 *   axes (tfjs sizes both axes of a numeric pad with the height's), gave XNNPACK another output
 *   size than tfjs's, written with the wrong row length;
 * - padding as wide as the window (a numeric pad), which XNNPACK refuses, leaving the output
 *   unwritten; tfjs gives −Infinity for a window of nothing but padding.
 *
 * The loop is stock cpu's definition: the window's largest value, NaN never chosen, −Infinity
 * for a window with none. Only these rare geometries pay for it: O(1) checks per call.
 */
export type PoolGeometry = tf.backend_util.Conv2DInfo;

/** `y[n, oh, ow, c]` = the largest `x` in the window (NaN skipped; −Infinity for none). */
export function maxPoolLoops(x: Float32Array, g: PoolGeometry, y: Float32Array): void {
  const { batchSize, inHeight, inWidth, inChannels: c, outHeight, outWidth } = g;
  const best = new Float32Array(c);
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      const r0 = Math.max(0, oh * g.strideHeight - g.padInfo.top);
      const r1 = Math.min(inHeight, oh * g.strideHeight - g.padInfo.top + g.effectiveFilterHeight);
      for (let ow = 0; ow < outWidth; ow++) {
        const c0 = Math.max(0, ow * g.strideWidth - g.padInfo.left);
        const c1 = Math.min(inWidth, ow * g.strideWidth - g.padInfo.left + g.effectiveFilterWidth);
        best.fill(-Infinity);
        for (let r = r0; r < r1; r++) {
          for (let col = c0; col < c1; col++) {
            const base = ((n * inHeight + r) * inWidth + col) * c;
            for (let k = 0; k < c; k++) if (x[base + k] > best[k]) best[k] = x[base + k];
          }
        }
        y.set(best, ((n * outHeight + oh) * outWidth + ow) * c);
      }
    }
  }
}

/** True when XNNPACK, given tfjs's padding, computes tfjs's output: sizes agree and no pad reaches a window's width. */
function xnnpackPools(g: PoolGeometry): boolean {
  const { top, bottom, left, right } = g.padInfo;
  const size = (inSize: number, before: number, after: number, extent: number, stride: number) => Math.floor((inSize + before + after - extent) / stride) + 1;
  return (
    Math.max(top, bottom) < g.effectiveFilterHeight &&
    Math.max(left, right) < g.effectiveFilterWidth &&
    size(g.inHeight, top, bottom, g.effectiveFilterHeight, g.strideHeight) === g.outHeight &&
    size(g.inWidth, left, right, g.effectiveFilterWidth, g.strideWidth) === g.outWidth
  );
}

function maxPoolWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (x.dtype !== 'float32') return (stock as KernelFn)(args);
    const { filterSize, strides, pad, dimRoundingMode } = args.attrs as unknown as tf.MaxPoolAttrs;
    const g = tf.backend_util.computePool2DInfo(x.shape as [number, number, number, number], filterSize, strides, 1, pad, dimRoundingMode);
    const backend = args.backend as WasmBackend;
    const y = sizeOf(x.shape) !== 0 && sizeOf(g.outShape) !== 0 && xnnpackPools(g) ? null : backend.makeOutput(g.outShape, 'float32');
    if (y === null) return (stock as KernelFn)(args);
    maxPoolLoops(heapF32(backend, x), g, heapF32(backend, y));
    return y;
  };
}

/** The patches of this file. */
export const wasmPoolPatches: KernelPatch[] = [
  {
    kernelName: 'MaxPool',
    backendName: 'wasm',
    description: 'the stock XNNPACK max pooling, except empty inputs and numeric pads it sizes differently from tfjs (a loop over the heap)',
    build: maxPoolWasm,
  },
];
