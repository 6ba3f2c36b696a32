import * as tf from '@tensorflow/tfjs';
import { notingAttrs } from './fusedGradients';
import { col2im, ConvGeometry, forwardGeometry, im2col } from './im2col';
import { nativeAddon, sgemm } from './nativeBlas';
import { hostOf, NativeHost } from './nativeHost';
import { columnBias, fillRows, nativeActivation } from './nativeMatMul';
import { KernelArgs, KernelFn, KernelPatch } from './registry';

/**
 * 2-D convolutions and both of their gradients as CBLAS products over im2col patch matrices
 * (the optional native addon), on the wasm heap or the cpu backend's arrays (nativeHost.ts):
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
function conv2dNative(host: NativeHost, x: tf.TensorInfo, filter: tf.TensorInfo, attrs: tf.NamedAttrMap, bias: tf.TensorInfo | null): tf.TensorInfo | null {
  if (((attrs.dataFormat as string) ?? 'NHWC') !== 'NHWC' || x.dtype !== 'float32' || filter.dtype !== 'float32') return null;
  const g = forwardGeometry(x, filter, attrs);
  const rows = g.batchSize * g.outHeight * g.outWidth;
  const depth = g.filterHeight * g.filterWidth * g.inChannels;
  const addon = nativeAddon('Conv2D');
  const result = host.output(g.outShape);
  // Views after the allocation (on wasm it may move the heap).
  const out = host.values(result);
  if (bias !== null) fillRows(out, host.values(bias));
  sgemm(addon, { transA: false, transB: false, m: rows, n: g.outChannels, k: depth, beta: bias === null ? 0 : 1 }, patchesOf(host.values(x), g), host.values(filter), out);
  return result;
}

function conv2dPatch(backendName: 'cpu' | 'wasm'): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const { x, filter } = args.inputs as { x: tf.TensorInfo; filter: tf.TensorInfo };
    return conv2dNative(hostOf(backendName, args.backend), x, filter, args.attrs as tf.NamedAttrMap, null) ?? (stock as KernelFn)(args);
  };
}

function fusedConv2dPatch(backendName: 'cpu' | 'wasm'): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(backendName, args.backend);
    const inputs = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const f = inputs.filter as tf.TensorInfo;
    const finish = nativeActivation(host, attrs, inputs, f.shape[3]);
    if (finish === null) return (stock as KernelFn)(args);
    const product = conv2dNative(host, inputs.x as tf.TensorInfo, f, attrs, columnBias(inputs.bias, f.shape[3]));
    if (!product) return (stock as KernelFn)(args);
    return finish(product);
  };
}

function backpropFilterPatch(backendName: 'cpu' | 'wasm'): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(backendName, args.backend);
    const { x, dy } = args.inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
    if (x.dtype !== 'float32' || dy.dtype !== 'float32' || (attrs.dataFormat ?? 'NHWC') !== 'NHWC') return (stock as KernelFn)(args);
    const info = tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], attrs.filterShape, attrs.strides, 1, attrs.pad, attrs.dimRoundingMode, false, 'channelsLast');
    // tfjs may round the output size; the gradient uses the size dy actually has.
    const g = { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
    // One input channel on wasm: the project's gathered-patch XNNPACK product is faster (k = kh·kw is tiny).
    if (host.name === 'wasm' && g.inChannels === 1) return (stock as KernelFn)(args);
    const rows = g.batchSize * g.outHeight * g.outWidth;
    const depth = g.filterHeight * g.filterWidth * g.inChannels;
    const addon = nativeAddon('Conv2DBackpropFilter');
    const result = host.output(attrs.filterShape);
    const dW = host.values(result);
    sgemm(addon, { transA: true, transB: false, m: depth, n: g.outChannels, k: rows }, patchesOf(host.values(x), g), host.values(dy), dW);
    return result;
  };
}

function backpropInputPatch(backendName: 'cpu' | 'wasm'): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(backendName, args.backend);
    const { dy, filter } = args.inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropInputAttrs;
    if ((attrs.dataFormat ?? 'NHWC') !== 'NHWC' || dy.dtype !== 'float32' || filter.dtype !== 'float32') return (stock as KernelFn)(args);
    const info = tf.backend_util.computeConv2DInfo(attrs.inputShape, filter.shape as [number, number, number, number], attrs.strides, 1, attrs.pad, attrs.dimRoundingMode, false, 'channelsLast');
    const g = { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
    const rows = g.batchSize * g.outHeight * g.outWidth;
    const depth = g.filterHeight * g.filterWidth * g.inChannels;
    const addon = nativeAddon('Conv2DBackpropInput');
    const result = host.output(g.inShape);
    const dx = host.values(result);
    const shape = { transA: false, transB: true, m: rows, n: depth, k: g.outChannels };
    if (isPointwise(g)) {
      sgemm(addon, shape, host.values(dy), host.values(filter), dx);
    } else {
      const cols = scratch(rows * depth);
      sgemm(addon, shape, host.values(dy), host.values(filter), cols);
      col2im(cols, g, dx);
    }
    return result;
  };
}

/**
 * The patches of this file for a backend (registered by `installFastKernels("native")` in place
 * of the project's others, which they hand the cases they skip to).
 *
 * On wasm only the filter gradient with more than one input channel: XNNPACK's own convolution
 * (forward) and the project's flipped-filter XNNPACK convolution (input gradient) measured faster
 * than im2col + OpenBLAS with the patch matrix and col2im in JS, e.g. 1.07 vs 1.46 ms (forward)
 * and 1.10 vs 1.82 ms (input gradient) for the digit CNN's second layer at batch 16, against
 * 2.04 vs 1.39 ms for its filter gradient (7.2 vs 21 ms at batch 64); fastest of 15 calls on the
 * loaded 2-core machine, build/tmp-style A/B of each kernel alone.
 */
export function nativeConv2dPatches(backendName: 'cpu' | 'wasm'): KernelPatch[] {
  const filterGradient: KernelPatch = {
    kernelName: 'Conv2DBackpropFilter',
    backendName,
    description: `native: patchesᵀ · dy in cblas_sgemm (transposed-A flag, no copy)${backendName === 'wasm' ? '; one input channel: the XNNPACK product' : ''}`,
    build: backpropFilterPatch(backendName),
  };
  if (backendName === 'wasm') return [filterGradient];
  return [
    { kernelName: 'Conv2D', backendName, description: 'native: im2col + cblas_sgemm (a 1x1 convolution reads the input as is)', build: conv2dPatch(backendName) },
    {
      kernelName: 'FusedConv2D',
      backendName,
      description: 'native: the same convolution onto the bias written into the output, then the activation',
      build: (stock) => notingAttrs(fusedConv2dPatch(backendName)(stock)),
    },
    filterGradient,
    { kernelName: 'Conv2DBackpropInput', backendName, description: 'native: col2im of dy · Wᵀ from cblas_sgemm (transposed-B flag)', build: backpropInputPatch(backendName) },
  ];
}
