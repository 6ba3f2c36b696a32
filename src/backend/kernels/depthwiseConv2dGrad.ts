import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';

/**
 * The gradients of a depthwise 2-D convolution (`tf.depthwiseConv2d`, `tf.layers.depthwiseConv2d`
 * and separable convolutions), with filter `[kh, kw, c, m]` (m = channel multiplier):
 *
 *     dfilter[a, b, c, q] = Σ_{n,oh,ow} x[n, oh·s + a·d − top, ow·s + b·d − left, c] · dy[n, oh, ow, c·m + q]
 *     dx[n, ih, iw, c]    = Σ over the (oh, ow, a, b) that read x[n, ih, iw, c] of filter[a, b, c, q] · dy[n, oh, ow, c·m + q]
 *
 * wasm has neither kernel (so depthwise models cannot train there); cpu's read through
 * `TensorBuffer.get`. Both are written here as loops over the typed arrays, the channel axis
 * innermost (contiguous in NHWC), accumulating in float64 as the stock cpu kernels do.
 */
type Geometry = tf.backend_util.Conv2DInfo;

/** Filter gradient into a new array of shape [kh, kw, c, m]. */
export function depthwiseFilterGradLoops(x: Float32Array, dy: Float32Array, g: Geometry): Float32Array {
  const { batchSize, inHeight, inWidth, inChannels: c, outHeight, outWidth, outChannels } = g;
  const m = outChannels / c;
  const kh = g.filterHeight;
  const kw = g.filterWidth;
  const acc = new Float64Array(kh * kw * c * m);
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      for (let ow = 0; ow < outWidth; ow++) {
        const dyBase = ((n * outHeight + oh) * outWidth + ow) * outChannels;
        for (let a = 0; a < kh; a++) {
          const ih = oh * g.strideHeight - g.padInfo.top + a * g.dilationHeight;
          if (ih < 0 || ih >= inHeight) continue;
          for (let b = 0; b < kw; b++) {
            const iw = ow * g.strideWidth - g.padInfo.left + b * g.dilationWidth;
            if (iw < 0 || iw >= inWidth) continue;
            const xBase = ((n * inHeight + ih) * inWidth + iw) * c;
            const fBase = (a * kw + b) * c * m;
            for (let k = 0; k < c; k++) {
              const xv = x[xBase + k];
              for (let q = 0; q < m; q++) acc[fBase + k * m + q] += xv * dy[dyBase + k * m + q];
            }
          }
        }
      }
    }
  }
  return Float32Array.from(acc);
}

/** Input gradient into `dx` (shape of x), overwriting it. */
export function depthwiseInputGradLoops(dy: Float32Array, filter: Float32Array, g: Geometry, dx: Float32Array): void {
  const { batchSize, inHeight, inWidth, inChannels: c, outHeight, outWidth, outChannels } = g;
  const m = outChannels / c;
  const kh = g.filterHeight;
  const kw = g.filterWidth;
  const acc = new Float64Array(dx.length);
  for (let n = 0; n < batchSize; n++) {
    for (let oh = 0; oh < outHeight; oh++) {
      for (let ow = 0; ow < outWidth; ow++) {
        const dyBase = ((n * outHeight + oh) * outWidth + ow) * outChannels;
        for (let a = 0; a < kh; a++) {
          const ih = oh * g.strideHeight - g.padInfo.top + a * g.dilationHeight;
          if (ih < 0 || ih >= inHeight) continue;
          for (let b = 0; b < kw; b++) {
            const iw = ow * g.strideWidth - g.padInfo.left + b * g.dilationWidth;
            if (iw < 0 || iw >= inWidth) continue;
            const xBase = ((n * inHeight + ih) * inWidth + iw) * c;
            const fBase = (a * kw + b) * c * m;
            for (let k = 0; k < c; k++) {
              let s = 0;
              for (let q = 0; q < m; q++) s += filter[fBase + k * m + q] * dy[dyBase + k * m + q];
              acc[xBase + k] += s;
            }
          }
        }
      }
    }
  }
  for (let i = 0; i < dx.length; i++) dx[i] = acc[i];
}

/** The geometry, with the output size taken from `dy` (what the forward pass had, whatever the rounding). */
function withOutputOf(g: Geometry, dy: tf.TensorInfo): Geometry {
  return { ...g, outHeight: dy.shape[1], outWidth: dy.shape[2] };
}

function filterGeometry(x: tf.TensorInfo, dy: tf.TensorInfo, attrs: tf.DepthwiseConv2dNativeBackpropFilterAttrs): Geometry {
  return withOutputOf(tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], attrs.filterShape, attrs.strides, attrs.dilations, attrs.pad, attrs.dimRoundingMode, true), dy);
}

function inputGeometry(filter: tf.TensorInfo, dy: tf.TensorInfo, attrs: tf.DepthwiseConv2dNativeBackpropInputAttrs): Geometry {
  return withOutputOf(tf.backend_util.computeConv2DInfo(attrs.inputShape, filter.shape as [number, number, number, number], attrs.strides, attrs.dilations, attrs.pad, attrs.dimRoundingMode, true), dy);
}

type Reader = (t: tf.TensorInfo) => Float32Array;

function filterGrad(read: Reader, args: KernelArgs): { values: Float32Array; shape: number[] } {
  const { x, dy } = args.inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const attrs = args.attrs as unknown as tf.DepthwiseConv2dNativeBackpropFilterAttrs;
  return { values: depthwiseFilterGradLoops(read(x), read(dy), filterGeometry(x, dy, attrs)), shape: attrs.filterShape };
}

function isFloat(args: KernelArgs): boolean {
  return Object.values(args.inputs).every((t) => t === undefined || t.dtype === 'float32');
}

function filterGradWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    if (!isFloat(args) && stock) return stock(args);
    const backend = args.backend as WasmBackend;
    const { values, shape } = filterGrad((t) => heapF32(backend, t), args);
    const out = backend.makeOutput(shape, 'float32');
    heapF32(backend, out).set(values);
    return out;
  };
}

function filterGradCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    if (!isFloat(args)) return (stock as KernelFn)(args);
    const backend = args.backend as CpuBackend;
    const { values, shape } = filterGrad((t) => cpuValues(backend, t), args);
    return backend.makeTensorInfo(shape, 'float32', values);
  };
}

function inputGradWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    if (!isFloat(args) && stock) return stock(args);
    const backend = args.backend as WasmBackend;
    const { dy, filter } = args.inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.DepthwiseConv2dNativeBackpropInputAttrs;
    const out = backend.makeOutput(attrs.inputShape, 'float32');
    depthwiseInputGradLoops(heapF32(backend, dy), heapF32(backend, filter), inputGeometry(filter, dy, attrs), heapF32(backend, out));
    return out;
  };
}

function inputGradCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    if (!isFloat(args)) return (stock as KernelFn)(args);
    const backend = args.backend as CpuBackend;
    const { dy, filter } = args.inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.DepthwiseConv2dNativeBackpropInputAttrs;
    const dx = new Float32Array(sizeOf(attrs.inputShape));
    depthwiseInputGradLoops(cpuValues(backend, dy), cpuValues(backend, filter), inputGeometry(filter, dy, attrs), dx);
    return backend.makeTensorInfo(attrs.inputShape, 'float32', dx);
  };
}

/** The patches of this file. */
export const depthwiseConv2dGradPatches: KernelPatch[] = [
  { kernelName: 'DepthwiseConv2dNativeBackpropFilter', backendName: 'wasm', description: 'added (wasm has none): loops over the heap, channels innermost', build: filterGradWasm },
  { kernelName: 'DepthwiseConv2dNativeBackpropInput', backendName: 'wasm', description: 'added (wasm has none): loops over the heap, channels innermost', build: inputGradWasm },
  { kernelName: 'DepthwiseConv2dNativeBackpropFilter', backendName: 'cpu', description: 'typed-array loops instead of TensorBuffer.get per element', build: filterGradCpu },
  { kernelName: 'DepthwiseConv2dNativeBackpropInput', backendName: 'cpu', description: 'typed-array loops instead of TensorBuffer.get per element', build: inputGradCpu },
];
