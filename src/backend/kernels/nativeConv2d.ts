import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { notingAttrs } from './fusedGradients';
import { col2im, ConvGeometry, im2col } from './im2col';
import { biasAndActivation, FUSED_ACTIVATIONS } from './matMul';
import { nativeAddon, sgemm } from './nativeBlas';
import { columnBias, fillRows } from './nativeMatMul';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { sizeOf } from './wasmHeap';

/**
 * 2-D convolutions and both of their gradients on the cpu backend as CBLAS products over
 * im2col patch matrices (the optional native addon):
 *
 * - `Conv2D`, `FusedConv2D`: `y (rows x co) = patches (rows x depth) · W (depth x co)`; the
 *   filter `[kh, kw, ci, co]` already is that matrix, and a bias is written into `y` first.
 * - `Conv2DBackpropFilter`: `dW (depth x co) = patchesᵀ · dy` (a transposed-A product).
 * - `Conv2DBackpropInput`: `cols = dy · Wᵀ` (a transposed-B product), then col2im.
 *
 * (`rows` = batch · outHeight · outWidth, `depth` = kh · kw · ci.) A 1x1 convolution with stride
 * 1 and no padding reads the input itself as the patch matrix.
 *
 * The patch (and col2im) matrix lives in one scratch buffer reused by every call, grown to the
 * largest layer's and kept: kernels run one at a time, so one suffices, it costs no allocation
 * and garbage per micro-step, and, being outside tfjs's tensors, it adds nothing to the peak
 * tensor memory of a step or window (what `measureAccumulation` compares). NCHW and non-float32
 * inputs go to the stock (or the project's JS) kernels.
 */
type CpuWithDispose = CpuBackend & { disposeData(dataId: object): void };

let scratchBuffer = new Float32Array(0);

/** A scratch view of `size` floats (contents undefined), valid until the next call. */
function scratch(size: number): Float32Array {
  if (scratchBuffer.length < size) scratchBuffer = new Float32Array(size);
  return scratchBuffer.subarray(0, size);
}

/** Floats held by the shared patch buffer (for tests and memory accounting). */
export function nativeScratchSize(): number {
  return scratchBuffer.length;
}

/** Frees the shared patch buffer (the next convolution allocates it again). */
export function releaseNativeScratch(): void {
  scratchBuffer = new Float32Array(0);
}

/** True when the patch matrix is the input itself: 1x1 filter, stride 1, no padding, no dilation. */
function isPointwise(g: ConvGeometry): boolean {
  return g.filterHeight === 1 && g.filterWidth === 1 && g.strideHeight === 1 && g.strideWidth === 1 && g.padInfo.top === 0 && g.padInfo.left === 0 && g.outHeight === g.inHeight && g.outWidth === g.inWidth;
}

/** The patch matrix of `x` (rows x depth): `x` itself for a pointwise convolution. */
function patchesOf(x: Float32Array, g: ConvGeometry): Float32Array {
  if (isPointwise(g)) return x;
  const p = scratch(g.batchSize * g.outHeight * g.outWidth * g.filterHeight * g.filterWidth * g.inChannels);
  im2col(x, g, p);
  return p;
}

/** The forward convolution (plus an optional per-channel bias) into a new NHWC tensor, or null for the stock kernel. */
function conv2dNative(backend: CpuBackend, x: tf.TensorInfo, filter: tf.TensorInfo, attrs: tf.NamedAttrMap, bias: Float32Array | null): tf.TensorInfo | null {
  if (((attrs.dataFormat as string) ?? 'NHWC') !== 'NHWC' || x.dtype !== 'float32' || filter.dtype !== 'float32') return null;
  const g = tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filter.shape as [number, number, number, number],
    attrs.strides as number | [number, number],
    attrs.dilations as number | [number, number],
    attrs.pad as 'same' | 'valid' | number,
    attrs.dimRoundingMode as 'floor' | 'round' | 'ceil' | undefined,
    false,
    'channelsLast',
  );
  const rows = g.batchSize * g.outHeight * g.outWidth;
  const depth = g.filterHeight * g.filterWidth * g.inChannels;
  const out = new Float32Array(rows * g.outChannels);
  if (bias !== null) fillRows(out, bias);
  const addon = nativeAddon('Conv2D');
  sgemm(addon, { transA: false, transB: false, m: rows, n: g.outChannels, k: depth, beta: bias === null ? 0 : 1 }, patchesOf(cpuValues(backend, x), g), cpuValues(backend, filter), out);
  return backend.makeTensorInfo(g.outShape, 'float32', out);
}

function conv2dPatch(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const { x, filter } = args.inputs as { x: tf.TensorInfo; filter: tf.TensorInfo };
    return conv2dNative(args.backend as CpuBackend, x, filter, args.attrs as tf.NamedAttrMap, null) ?? (stock as KernelFn)(args);
  };
}

function fusedConv2dPatch(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuWithDispose;
    const { x, filter, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const activation = (attrs.activation as string) ?? 'linear';
    if (!FUSED_ACTIVATIONS.includes(activation) || (activation === 'prelu' && !preluActivationWeights)) return (stock as KernelFn)(args);
    const f = filter as tf.TensorInfo;
    const inBias = columnBias(backend, bias, f.shape[3]);
    const product = conv2dNative(backend, x as tf.TensorInfo, f, attrs, inBias);
    if (!product) return (stock as KernelFn)(args);
    return biasAndActivation(backend, product, inBias ? undefined : bias, attrs, preluActivationWeights) as tf.TensorInfo;
  };
}

function backpropFilterPatch(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { x, dy } = args.inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
    if (x.dtype !== 'float32' || dy.dtype !== 'float32' || (attrs.dataFormat ?? 'NHWC') !== 'NHWC') return (stock as KernelFn)(args);
    const info = tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], attrs.filterShape, attrs.strides, 1, attrs.pad, attrs.dimRoundingMode, false, 'channelsLast');
    // tfjs may round the output size; the gradient uses the size dy actually has.
    const g = { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
    const rows = g.batchSize * g.outHeight * g.outWidth;
    const depth = g.filterHeight * g.filterWidth * g.inChannels;
    const dW = new Float32Array(depth * g.outChannels);
    const addon = nativeAddon('Conv2DBackpropFilter');
    sgemm(addon, { transA: true, transB: false, m: depth, n: g.outChannels, k: rows }, patchesOf(cpuValues(backend, x), g), cpuValues(backend, dy), dW);
    return backend.makeTensorInfo(attrs.filterShape, 'float32', dW);
  };
}

function backpropInputPatch(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { dy, filter } = args.inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropInputAttrs;
    if ((attrs.dataFormat ?? 'NHWC') !== 'NHWC' || dy.dtype !== 'float32' || filter.dtype !== 'float32') return (stock as KernelFn)(args);
    const info = tf.backend_util.computeConv2DInfo(attrs.inputShape, filter.shape as [number, number, number, number], attrs.strides, 1, attrs.pad, attrs.dimRoundingMode, false, 'channelsLast');
    const g = { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
    const rows = g.batchSize * g.outHeight * g.outWidth;
    const depth = g.filterHeight * g.filterWidth * g.inChannels;
    const dx = new Float32Array(sizeOf(g.inShape));
    const addon = nativeAddon('Conv2DBackpropInput');
    const shape = { transA: false, transB: true, m: rows, n: depth, k: g.outChannels };
    if (isPointwise(g)) {
      sgemm(addon, shape, cpuValues(backend, dy), cpuValues(backend, filter), dx);
    } else {
      const cols = scratch(rows * depth);
      sgemm(addon, shape, cpuValues(backend, dy), cpuValues(backend, filter), cols);
      col2im(cols, g, dx);
    }
    return backend.makeTensorInfo(g.inShape, 'float32', dx);
  };
}

/** The patches of this file (registered by `installFastKernels("native")` in place of the JS ones). */
export const nativeConv2dPatches: KernelPatch[] = [
  { kernelName: 'Conv2D', backendName: 'cpu', description: 'native: im2col + cblas_sgemm (a 1x1 convolution reads the input as is)', build: conv2dPatch },
  {
    kernelName: 'FusedConv2D',
    backendName: 'cpu',
    description: 'native: the same convolution onto the bias written into the output, then the stock activation',
    build: (stock) => notingAttrs(fusedConv2dPatch(stock)),
  },
  { kernelName: 'Conv2DBackpropFilter', backendName: 'cpu', description: 'native: patchesᵀ · dy in cblas_sgemm (transposed-A flag, no copy)', build: backpropFilterPatch },
  { kernelName: 'Conv2DBackpropInput', backendName: 'cpu', description: 'native: col2im of dy · Wᵀ from cblas_sgemm (transposed-B flag)', build: backpropInputPatch },
];
