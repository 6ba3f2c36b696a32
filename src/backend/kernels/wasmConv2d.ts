import * as tf from '@tensorflow/tfjs';
import { notingAttrs } from './fusedGradients';
import { biasAndActivation, knownActivation } from './matMul';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend, zerosOutput } from './wasmHeap';

/**
 * The stock wasm convolutions (`Conv2D`, `DepthwiseConv2dNative` and their fused forms), kept,
 * but only handed what XNNPACK computes right (tfjs-backend-wasm 4.22):
 *
 * - *Empty tensors.* XNNPACK aborts the WebAssembly module on an empty batch, image or channel
 *   axis, after which every later op on the backend traps ("memory access out of bounds"). An
 *   empty output is returned as is; an output whose sum is empty (no input channel, an image of
 *   nothing but padding) is zeros, plus the bias and activation of a fused one.
 * - *A numeric pad whose output size tfjs and XNNPACK disagree on* (`ceil` or `round` rounding,
 *   or a filter or stride that differs between the axes: tfjs sizes both axes with the
 *   height's). XNNPACK wrote its smaller or larger output into tfjs's with the wrong row length;
 *   see {@link throughXnnpack}.
 * - *Fused activations other than a clamp.* The fused kernels apply linear, relu and relu6 as
 *   XNNPACK's output clamp, right; prelu, leakyrelu, sigmoid and elu went wrong for some shapes.
 *   Those run as the convolution, then the registered bias and activation kernels.
 *
 * - *`same` padding* where the image is smaller than the filter: XNNPACK's own split of it
 *   dropped the image; tfjs's split is passed explicitly.
 *
 * Everything else goes to the stock kernel unchanged: O(1) checks per call.
 */

/** tfjs's geometry of a wasm convolution from its kernel attributes. */
function geometryOf(x: tf.TensorInfo, filter: tf.TensorInfo, attrs: tf.NamedAttrMap, depthwise: boolean): tf.backend_util.Conv2DInfo {
  return tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filter.shape as [number, number, number, number],
    attrs.strides as number | [number, number],
    (attrs.dilations as number | [number, number] | undefined) ?? 1,
    attrs.pad as 'same' | 'valid' | number,
    attrs.dimRoundingMode as 'floor' | 'round' | 'ceil' | undefined,
    depthwise,
  );
}

/** XNNPACK's output size along one axis: `floor((in + before + after − extent) / stride) + 1`. */
function xnnpackSize(inSize: number, before: number, after: number, extent: number, stride: number): number {
  return Math.floor((inSize + before + after - extent) / stride) + 1;
}

/**
 * Runs a stock XNNPACK kernel so that its output is tfjs's: as it is when XNNPACK's size is
 * tfjs's, else with explicit padding after the image that reaches exactly tfjs's last window.
 * `same` padding is always made explicit (tfjs's own split of it): XNNPACK's TensorFlow-SAME
 * mode got images smaller than the filter wrong (x [1, 1, 2, 1], filter [2, 1, 1, 1], strides
 * [1, 2] gave 0 for x·w).
 * When tfjs's size is below what even no padding after the image gives (tfjs sizes both axes of
 * a numeric pad with the filter height and stride, `computeOutputShape2D`), XNNPACK writes the
 * wider output and the rows and columns tfjs has are copied out of it.
 */
export function throughXnnpack(stock: KernelFn, args: KernelArgs, g: tf.backend_util.Conv2DInfo): tf.TensorInfo {
  const { top, left } = g.padInfo;
  if (
    g.padInfo.type !== 'SAME' &&
    xnnpackSize(g.inHeight, top, g.padInfo.bottom, g.effectiveFilterHeight, g.strideHeight) === g.outHeight &&
    xnnpackSize(g.inWidth, left, g.padInfo.right, g.effectiveFilterWidth, g.strideWidth) === g.outWidth
  ) {
    return stock(args) as tf.TensorInfo;
  }
  const bottom = Math.max(0, (g.outHeight - 1) * g.strideHeight + g.effectiveFilterHeight - g.inHeight - top);
  const right = Math.max(0, (g.outWidth - 1) * g.strideWidth + g.effectiveFilterWidth - g.inWidth - left);
  const attrs = { ...args.attrs, pad: [[0, 0], [top, bottom], [left, right], [0, 0]], dimRoundingMode: undefined } as unknown as tf.NamedAttrMap;
  const wide = stock({ ...args, attrs }) as tf.TensorInfo;
  const [n, h, w, c] = wide.shape;
  if (h === g.outHeight && w === g.outWidth) return wide;
  const backend = args.backend as WasmBackend;
  const out = backend.makeOutput(g.outShape, 'float32');
  const src = heapF32(backend, wide);
  const dst = heapF32(backend, out);
  const row = g.outWidth * c;
  for (let b = 0; b < n; b++) {
    for (let r = 0; r < g.outHeight; r++) dst.set(src.subarray(((b * h + r) * w) * c, ((b * h + r) * w) * c + row), (b * g.outHeight + r) * row);
  }
  backend.disposeData(wide.dataId);
  return out;
}

/** What an empty case returns without XNNPACK: the empty output, or zeros for an empty sum; null to compute. */
function emptyCase(backend: WasmBackend, x: tf.TensorInfo, filter: tf.TensorInfo, g: tf.backend_util.Conv2DInfo): tf.TensorInfo | null {
  if (sizeOf(g.outShape) === 0) return backend.makeOutput(g.outShape, 'float32');
  if (sizeOf(x.shape) === 0 || sizeOf(filter.shape) === 0) return zerosOutput(backend, g.outShape);
  return null;
}

function convolution(depthwise: boolean): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const { x, filter } = args.inputs as { x: tf.TensorInfo; filter: tf.TensorInfo };
    const attrs = args.attrs as tf.NamedAttrMap;
    if (x.dtype !== 'float32' || filter.dtype !== 'float32' || ((attrs.dataFormat as string | undefined) ?? 'NHWC') !== 'NHWC') return (stock as KernelFn)(args);
    const g = geometryOf(x, filter, attrs, depthwise);
    return emptyCase(args.backend as WasmBackend, x, filter, g) ?? throughXnnpack(stock as KernelFn, args, g);
  };
}

/** The fused activations the stock kernels apply as XNNPACK's output clamp. */
const CLAMP_ACTIVATIONS = ['linear', 'relu', 'relu6'];

function fusedConvolution(depthwise: boolean): (stock: KernelFn | undefined) => KernelFn {
  const plain = depthwise ? 'DepthwiseConv2dNative' : 'Conv2D';
  return (stock) => (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { x, filter, bias, preluActivationWeights } = args.inputs as unknown as { x: tf.TensorInfo; filter: tf.TensorInfo; bias?: tf.TensorInfo; preluActivationWeights?: tf.TensorInfo };
    const attrs = args.attrs as tf.NamedAttrMap;
    const activation = (attrs.activation as string | undefined) ?? 'linear';
    const nhwc = ((attrs.dataFormat as string | undefined) ?? 'NHWC') === 'NHWC';
    if (x.dtype !== 'float32' || filter.dtype !== 'float32' || !nhwc || !knownActivation(activation, preluActivationWeights)) return (stock as KernelFn)(args);
    const g = geometryOf(x, filter, attrs, depthwise);
    const empty = emptyCase(backend, x, filter, g);
    const columnBias = !bias || (bias.dtype === 'float32' && bias.shape.length === 1 && bias.shape[0] === g.outChannels);
    if (empty === null && columnBias && CLAMP_ACTIVATIONS.includes(activation)) {
      return throughXnnpack(stock as KernelFn, args, g);
    }
    const { strides, pad, dilations, dimRoundingMode, dataFormat } = attrs;
    const conv =
      empty ??
      ((tf.getKernel(plain, 'wasm') as tf.KernelConfig).kernelFunc({ inputs: { x, filter }, backend: backend as unknown as tf.KernelBackend, attrs: { strides, pad, dilations, dimRoundingMode, dataFormat } }) as tf.TensorInfo);
    return biasAndActivation('wasm', backend, conv, bias, attrs, preluActivationWeights) as tf.TensorInfo;
  };
}

/** The patches of this file. */
export const wasmConv2dPatches: KernelPatch[] = [
  { kernelName: 'Conv2D', backendName: 'wasm', description: 'the stock XNNPACK convolution, with empty shapes answered first and a rounded numeric pad made explicit (both broke it)', build: convolution(false) },
  {
    kernelName: 'DepthwiseConv2dNative',
    backendName: 'wasm',
    description: 'the stock XNNPACK depthwise convolution, with empty shapes answered first and a rounded numeric pad made explicit',
    build: convolution(true),
  },
  {
    kernelName: 'FusedConv2D',
    backendName: 'wasm',
    description: 'the stock fused convolution for clamp activations (linear, relu, relu6); others as the convolution, then the bias and activation kernels',
    build: (stock) => notingAttrs(fusedConvolution(false)(stock)),
  },
  {
    kernelName: 'FusedDepthwiseConv2D',
    backendName: 'wasm',
    description: 'the stock fused depthwise convolution for clamp activations; others as the convolution, then the bias and activation kernels',
    build: fusedConvolution(true),
  },
];
