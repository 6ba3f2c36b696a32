import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { gemm, transposeInto } from './gemm';
import { im2col } from './im2col';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { disposeAll, heapF32, runStock, sizeOf, WasmBackend, zerosOutput } from './wasmHeap';

/**
 * The filter gradient of a 2-D convolution, `dW[kh, kw, ci, co] = Σ_{n, oh, ow}
 * x[n, oh·s + kh − pad, ow·s + kw − pad, ci] · dy[n, oh, ow, co]`.
 *
 * wasm has no such kernel, so a CNN cannot train there at all; cpu's reads every element through
 * `TensorBuffer.get` (~0.01 GFLOP/s, most of a CNN step).
 *
 * - wasm, one input channel: `dW = patches · dy` on XNNPACK's matrix product (see
 *   `singleChannel`).
 * - wasm, otherwise: the sum above is itself a convolution. With the batch and channel axes of `x` swapped
 *   (`x' = [ci, H, W, n]`) and `dy` used as the filter (`dy' = [oh, ow, n, co]`), a forward
 *   convolution with stride 1 and dilation `s` gives `[ci, kh, kw, co]`, so XNNPACK's convolution
 *   does the work. Padding is passed explicitly; rows the forward pass never read (a valid
 *   padding that drops the last row) are computed and cropped.
 * - cpu: `dW = patches^T · dy` (im2col) in the register-blocked JS product, accumulated in
 *   float64 like the stock kernel.
 */

/** The geometry both implementations need, from tfjs's own conv bookkeeping. */
function geometry(x: tf.TensorInfo, dy: tf.TensorInfo, attrs: tf.Conv2DBackpropFilterAttrs) {
  const info = tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    attrs.filterShape,
    attrs.strides,
    1,
    attrs.pad,
    attrs.dimRoundingMode,
    false,
    'channelsLast',
  );
  // tfjs may round the output size; the gradient must use the size dy actually has.
  return { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
}

function supported(x: tf.TensorInfo, dy: tf.TensorInfo, attrs: tf.Conv2DBackpropFilterAttrs): boolean {
  return x.dtype === 'float32' && dy.dtype === 'float32' && (attrs.dataFormat ?? 'NHWC') === 'NHWC';
}

function conv2dBackpropFilterWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { x, dy } = args.inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
    if (!supported(x, dy, attrs)) {
      if (stock) return stock(args);
      throw new Error(`tfjs-accumulate: Conv2DBackpropFilter on wasm supports float32 NHWC only; got dataFormat ${attrs.dataFormat}.`);
    }
    const g = geometry(x, dy, attrs);
    // No output pixel (an empty batch): the sum is empty and the gradient zero.
    if (sizeOf(dy.shape) === 0 || sizeOf(x.shape) === 0) return zerosOutput(backend, attrs.filterShape);
    if (g.inChannels === 1) return singleChannel(backend, x, dy, g);
    const { filterHeight: kh, filterWidth: kw, inChannels: ci, outChannels: co } = g;
    const top = g.padInfo.top;
    const left = g.padInfo.left;
    // Output rows of the swapped convolution: inH + top + bottom − (oh−1)·s. Choose bottom so it
    // is exactly kh, or 0 (then crop) when the forward pass left input rows unread.
    const bottomExact = kh - g.inHeight - top + (g.outHeight - 1) * g.strideHeight;
    const rightExact = kw - g.inWidth - left + (g.outWidth - 1) * g.strideWidth;
    const bottom = Math.max(0, bottomExact);
    const right = Math.max(0, rightExact);
    const outKh = kh + (bottom - bottomExact);
    const outKw = kw + (right - rightExact);

    const xT = runStock('Transpose', 'wasm', backend, { x }, { perm: [3, 1, 2, 0] });
    const dyT = runStock('Transpose', 'wasm', backend, { x: dy }, { perm: [1, 2, 0, 3] });
    let conv: tf.TensorInfo | null = null;
    try {
      conv = runStock('Conv2D', 'wasm', backend, { x: xT, filter: dyT }, {
        strides: [1, 1],
        dilations: [g.strideHeight, g.strideWidth],
        pad: [[0, 0], [top, bottom], [left, right], [0, 0]],
        dataFormat: 'NHWC',
      });
      // conv is [ci, outKh, outKw, co]; the gradient is [kh, kw, ci, co]: permute and crop in
      // one pass (filter-sized, so plain JS is fine).
      const out = backend.makeOutput([kh, kw, ci, co], 'float32');
      const src = heapF32(backend, conv);
      const dst = heapF32(backend, out);
      for (let a = 0; a < kh; a++) {
        for (let b = 0; b < kw; b++) {
          for (let c = 0; c < ci; c++) {
            const from = ((c * outKh + a) * outKw + b) * co;
            dst.set(src.subarray(from, from + co), ((a * kw + b) * ci + c) * co);
          }
        }
      }
      return out;
    } finally {
      disposeAll(backend, xT, dyT, conv);
    }
  };
}

type Geometry = ReturnType<typeof geometry>;

/**
 * One input channel (a network's first layer on grey images): `dW = patches · dy` with
 * `patches[(kh, kw), (n, oh, ow)]` gathered in JS, already in the layout XNNPACK wants, so the
 * product runs on its fast path with no transpose. The swapped convolution would give XNNPACK 9
 * output pixels with a 12,544-long reduction each (batch 16), which it runs ~3x slower. With
 * more input channels the patch matrix grows with them and the swapped convolution wins.
 */
function singleChannel(backend: WasmBackend, x: tf.TensorInfo, dy: tf.TensorInfo, g: Geometry): tf.TensorInfo {
  const { batchSize: n, inHeight, inWidth, outHeight, outWidth, outChannels: co, filterHeight: kh, filterWidth: kw } = g;
  const rows = n * outHeight * outWidth;
  const patches = backend.makeOutput([kh * kw, rows], 'float32');
  const src = heapF32(backend, x);
  const dst = heapF32(backend, patches);
  for (let a = 0; a < kh; a++) {
    for (let b = 0; b < kw; b++) {
      let q = (a * kw + b) * rows;
      for (let img = 0; img < n; img++) {
        for (let oh = 0; oh < outHeight; oh++) {
          const ih = oh * g.strideHeight - g.padInfo.top + a;
          if (ih < 0 || ih >= inHeight) {
            dst.fill(0, q, q + outWidth);
            q += outWidth;
            continue;
          }
          const rowBase = (img * inHeight + ih) * inWidth;
          for (let ow = 0; ow < outWidth; ow++, q++) {
            const iw = ow * g.strideWidth - g.padInfo.left + b;
            dst[q] = iw >= 0 && iw < inWidth ? src[rowBase + iw] : 0;
          }
        }
      }
    }
  }
  try {
    const product = runStock('BatchMatMul', 'wasm', backend, { a: patches, b: { dataId: dy.dataId, shape: [rows, co], dtype: 'float32' } }, { transposeA: false, transposeB: false });
    product.shape = [kh, kw, 1, co];
    return product;
  } finally {
    backend.disposeData(patches.dataId);
  }
}

function conv2dBackpropFilterCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { x, dy } = args.inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
    if (!supported(x, dy, attrs)) return (stock as KernelFn)(args);
    const g = geometry(x, dy, attrs);
    const rows = g.batchSize * g.outHeight * g.outWidth;
    const depth = g.filterHeight * g.filterWidth * g.inChannels;
    const co = g.outChannels;
    // dW (depth x co) = patches^T · dy: both operands transposed into the rows gemm reads, so
    // each filter element is one float64 dot product over all output pixels, like the stock sum.
    const patches = new Float32Array(rows * depth);
    im2col(cpuValues(backend, x), { ...g, dilationHeight: 1, dilationWidth: 1 }, patches);
    const patchesT = new Float32Array(rows * depth);
    transposeInto(patches, 0, rows, depth, patchesT);
    const dyT = new Float32Array(rows * co);
    transposeInto(cpuValues(backend, dy), 0, rows, co, dyT);
    const dW = new Float32Array(depth * co);
    gemm(patchesT, 0, dyT, 0, dW, 0, depth, rows, co);
    return backend.makeTensorInfo([g.filterHeight, g.filterWidth, g.inChannels, co], 'float32', dW);
  };
}

/** The patches of this file. */
export const conv2dBackpropFilterPatches: KernelPatch[] = [
  {
    kernelName: 'Conv2DBackpropFilter',
    backendName: 'wasm',
    description: 'added (wasm has none): a forward XNNPACK convolution with batch and channels swapped',
    build: conv2dBackpropFilterWasm,
  },
  {
    kernelName: 'Conv2DBackpropFilter',
    backendName: 'cpu',
    description: 'im2col + register-blocked JS product instead of TensorBuffer.get per element',
    build: conv2dBackpropFilterCpu,
  },
];
