import * as tf from '@tensorflow/tfjs';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { CpuBackend, cpuValues } from './cpuData';
import { gemm } from './gemm';
import { col2im } from './im2col';
import { disposeAll, heapF32, runStock, sizeOf, WasmBackend, zerosOutput } from './wasmHeap';
import { derivedWeight } from './weightCache';

/**
 * The input gradient of a 2-D convolution on wasm, as a forward XNNPACK convolution.
 *
 * `dx` is the "full" correlation of the output gradient with the filter flipped in space and
 * with its channel axes swapped: `dx = conv(pad(dilate(dy, s)), W'[a, b, o, c] =
 * W[kh−1−a, kw−1−b, c, o])`, with stride 1 and padding `kh−1−top` on top (and what makes the
 * output exactly the input's size at the bottom). Strides above 1 insert zeros between the rows
 * and columns of `dy` first. The stock wasm kernel is a scalar loop; this runs XNNPACK's
 * convolution, and the flipped filter is cached per weight so XNNPACK packs it once per update.
 *
 * Padding larger than the filter (which that convolution cannot express) runs as the cpu
 * kernel's product and col2im on the heap; NCHW and other dtypes go to the stock kernel. The
 * stock kernel is never handed a float32 NHWC case: it recomputes the output size from the
 * attributes, which tfjs's gradient passes without `dimRoundingMode`, so with a rounded numeric
 * pad it read `dy` with the wrong row length.
 */
/**
 * The inputs and geometry both backends need, the output size taken from `dy` (tfjs may have
 * rounded it, and its gradient does not pass the rounding on); null for what goes to the stock
 * kernel (NCHW, non-float32).
 */
function planBackpropInput(args: KernelArgs): { dy: tf.TensorInfo; filter: tf.TensorInfo; g: tf.backend_util.Conv2DInfo } | null {
  const { dy, filter } = args.inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
  const attrs = args.attrs as unknown as tf.Conv2DBackpropInputAttrs;
  if ((attrs.dataFormat ?? 'NHWC') !== 'NHWC' || dy.dtype !== 'float32' || filter.dtype !== 'float32') return null;
  const g = tf.backend_util.computeConv2DInfo(
    attrs.inputShape,
    filter.shape as [number, number, number, number],
    attrs.strides,
    1,
    attrs.pad,
    attrs.dimRoundingMode,
    false,
    'channelsLast',
  );
  return { dy, filter, g: { ...g, outHeight: dy.shape[1], outWidth: dy.shape[2] } };
}

/** `dx = col2im(dy · Wᵀ)` in the register-blocked JS product: the filter [kh, kw, ci, co] read as a (kh·kw·ci) x co matrix is already the transposed operand gemm wants. */
function productAndCol2im(dy: Float32Array, filter: Float32Array, g: tf.backend_util.Conv2DInfo, dx: Float32Array): void {
  const rows = g.batchSize * g.outHeight * g.outWidth;
  const depth = g.filterHeight * g.filterWidth * g.inChannels;
  const cols = new Float32Array(rows * depth);
  gemm(dy, 0, filter, 0, cols, 0, rows, g.outChannels, depth);
  col2im(cols, g, dx);
}

function conv2dBackpropInputWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const plan = planBackpropInput(args);
    if (plan === null) return (stock as KernelFn)(args);
    const { dy, filter, g } = plan;
    const [kh, kw, ci] = filter.shape;
    const [n, outH, outW] = dy.shape;
    if (sizeOf(g.inShape) === 0) return backend.makeOutput(g.inShape, 'float32');
    // Nothing to sum (no output pixel, or no output channel): the gradient is zero.
    if (sizeOf(dy.shape) === 0 || sizeOf(filter.shape) === 0) return zerosOutput(backend, g.inShape);
    const { strideHeight: sh, strideWidth: sw, inHeight, inWidth } = g;
    const dilatedH = (outH - 1) * sh + 1;
    const dilatedW = (outW - 1) * sw + 1;
    const top = kh - 1 - g.padInfo.top;
    const left = kw - 1 - g.padInfo.left;
    const bottom = inHeight + kh - 1 - dilatedH - top;
    const right = inWidth + kw - 1 - dilatedW - left;
    if (top < 0 || left < 0 || bottom < 0 || right < 0) {
      const dx = backend.makeOutput(g.inShape, 'float32');
      productAndCol2im(heapF32(backend, dy), heapF32(backend, filter), g, heapF32(backend, dx));
      return dx;
    }
    if (ci === 1) return singleInputChannel(backend, dy, filter, g);

    const flipped = derivedWeight(backend, filter, shapeTag('conv2dBackpropInput.flipped', filter), () => flipFilter(backend, filter));
    const dilated = sh === 1 && sw === 1 ? null : dilate(backend, dy, sh, sw, dilatedH, dilatedW);
    try {
      const dx = runStock('Conv2D', 'wasm', backend, { x: dilated ?? dy, filter: flipped.info }, {
        strides: [1, 1],
        dilations: [1, 1],
        pad: [[0, 0], [top, bottom], [left, right], [0, 0]],
        dataFormat: 'NHWC',
      });
      dx.shape = [n, inHeight, inWidth, ci];
      return dx;
    } finally {
      disposeAll(backend, dilated, flipped.owned ? flipped.info : null);
    }
  };
}

/**
 * One input channel (a network's first layer on grey images): `dx = col2im(dy · W^T)`, the
 * product on XNNPACK with the transposed filter (`[co, kh·kw]`, cached per weight) and the
 * kh·kw patch gradients of each pixel added back in JS. The flipped-filter convolution would
 * give XNNPACK a single output channel, which it runs at ~1.5 GFLOP/s; the product takes about
 * a quarter of that time.
 */
function singleInputChannel(backend: WasmBackend, dy: tf.TensorInfo, filter: tf.TensorInfo, g: tf.backend_util.Conv2DInfo): tf.TensorInfo {
  const [kh, kw, , co] = filter.shape;
  const rows = g.batchSize * g.outHeight * g.outWidth;
  const filterT = derivedWeight(backend, filter, shapeTag('conv2dBackpropInput.transposed', filter), () => {
    const t = runStock('Transpose', 'wasm', backend, { x: { dataId: filter.dataId, shape: [kh * kw, co], dtype: 'float32' } }, { perm: [1, 0] });
    t.shape = [1, co, kh * kw];
    return t;
  });
  let cols: tf.TensorInfo | null = null;
  try {
    cols = runStock('BatchMatMul', 'wasm', backend, { a: { dataId: dy.dataId, shape: [1, rows, co], dtype: 'float32' }, b: { ...filterT.info, shape: [1, co, kh * kw] } }, { transposeA: false, transposeB: false });
    const dx = backend.makeOutput([g.batchSize, g.inHeight, g.inWidth, 1], 'float32');
    gatherOneChannel(heapF32(backend, cols), g, heapF32(backend, dx));
    return dx;
  } finally {
    disposeAll(backend, cols, filterT.owned ? filterT.info : null);
  }
}

/**
 * col2im for one channel, as a gather: each input pixel sums the patch entries that read it
 * (no zero fill and no read-modify-write of dx; the generic col2im made this path slower than
 * the convolution it replaces).
 */
function gatherOneChannel(cols: Float32Array, g: tf.backend_util.Conv2DInfo, dx: Float32Array): void {
  const { batchSize, inHeight, inWidth, outHeight, outWidth, filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw } = g;
  const top = g.padInfo.top;
  const left = g.padInfo.left;
  const taps = kh * kw;
  let q = 0;
  for (let n = 0; n < batchSize; n++) {
    for (let ih = 0; ih < inHeight; ih++) {
      for (let iw = 0; iw < inWidth; iw++, q++) {
        let sum = 0;
        for (let a = 0; a < kh; a++) {
          const rowOffset = ih + top - a;
          const oh = (rowOffset / sh) | 0;
          if (rowOffset < 0 || oh * sh !== rowOffset || oh >= outHeight) continue;
          const rowBase = (n * outHeight + oh) * outWidth;
          for (let b = 0; b < kw; b++) {
            const colOffset = iw + left - b;
            const ow = (colOffset / sw) | 0;
            if (colOffset < 0 || ow * sw !== colOffset || ow >= outWidth) continue;
            sum += cols[(rowBase + ow) * taps + a * kw + b];
          }
        }
        dx[q] = sum;
      }
    }
  }
}

/**
 * A cache tag with the filter's shape in it: the same weight data can reach this kernel under
 * several shapes (a reshape shares it), and a flip or transpose made for one shape is another
 * tensor's layout, or another size, for the next.
 */
function shapeTag(tag: string, filter: tf.TensorInfo): string {
  return `${tag}:${filter.shape.join('x')}`;
}

/** `W'[a, b, o, c] = W[kh−1−a, kw−1−b, c, o]`: the filter of the transposed convolution. */
function flipFilter(backend: WasmBackend, filter: tf.TensorInfo): tf.TensorInfo {
  const [kh, kw, ci, co] = filter.shape;
  const out = backend.makeOutput([kh, kw, co, ci], 'float32');
  const src = heapF32(backend, filter);
  const dst = heapF32(backend, out);
  for (let a = 0; a < kh; a++) {
    for (let b = 0; b < kw; b++) {
      const from = ((kh - 1 - a) * kw + (kw - 1 - b)) * ci * co;
      const to = (a * kw + b) * co * ci;
      for (let c = 0; c < ci; c++) {
        for (let o = 0; o < co; o++) dst[to + o * ci + c] = src[from + c * co + o];
      }
    }
  }
  return out;
}

/** `dy` with `s − 1` zero rows (columns) between its rows (columns). */
function dilate(backend: WasmBackend, dy: tf.TensorInfo, sh: number, sw: number, dilatedH: number, dilatedW: number): tf.TensorInfo {
  const [n, outH, outW, co] = dy.shape;
  const out = backend.makeOutput([n, dilatedH, dilatedW, co], 'float32');
  const src = heapF32(backend, dy);
  const dst = heapF32(backend, out);
  dst.fill(0);
  for (let b = 0; b < n; b++) {
    for (let r = 0; r < outH; r++) {
      for (let c = 0; c < outW; c++) {
        const from = ((b * outH + r) * outW + c) * co;
        dst.set(src.subarray(from, from + co), ((b * dilatedH + r * sh) * dilatedW + c * sw) * co);
      }
    }
  }
  return out;
}

/**
 * cpu: `dx = col2im(dy · W^T)`. The filter [kh, kw, ci, co] read as a (kh·kw·ci) x co matrix is
 * already the transposed operand gemm wants, so the product needs no packing; col2im then adds
 * every patch gradient back onto the input pixels it came from.
 */
function conv2dBackpropInputCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const plan = planBackpropInput(args);
    if (plan === null) return (stock as KernelFn)(args);
    const { dy, filter, g } = plan;
    const dx = new Float32Array(sizeOf(g.inShape));
    productAndCol2im(cpuValues(backend, dy), cpuValues(backend, filter), g, dx);
    return backend.makeTensorInfo(g.inShape, 'float32', dx);
  };
}

/** The patches of this file. */
export const conv2dBackpropInputPatches: KernelPatch[] = [
  {
    kernelName: 'Conv2DBackpropInput',
    backendName: 'cpu',
    description: 'col2im of a register-blocked JS product instead of nested loops',
    build: conv2dBackpropInputCpu,
  },
  {
    kernelName: 'Conv2DBackpropInput',
    backendName: 'wasm',
    description: 'a forward XNNPACK convolution with the flipped filter (the stock kernel loops in scalar code); flipped filter cached per update',
    build: conv2dBackpropInputWasm,
  },
];
