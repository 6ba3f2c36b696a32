import * as tf from '@tensorflow/tfjs';
import { notingAttrs } from './fusedGradients';
import { ConvGeometry, forwardGeometry } from './im2col';
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
 * 1 and no padding reads the input itself as the patch matrix. im2col and col2im run in the
 * addon too (native/patches.cc): in JS they took longer than the products.
 *
 * The patch matrix is made a block of rows at a time ({@link NATIVE_PATCH_BLOCK_FLOATS}): each
 * block is gathered, multiplied (the filter gradient adds its blocks' products with beta = 1)
 * and, for the input gradient, scattered back while it is still in the core's cache. The block
 * lives in one scratch buffer reused by every call and kept: kernels run one at a time, so one
 * suffices; it costs no allocation or garbage per micro-step and, being outside tfjs's tensors,
 * adds nothing to the peak tensor memory of a step or window (what `measureAccumulation`
 * compares). NCHW and non-float32 inputs go to the stock (or the project's JS) kernels.
 */
let scratchBuffer = new Float32Array(0);

/**
 * Floats of one block of patch rows: 64 Ki floats, 256 KiB, half this machine's per-core L2
 * (AMD EPYC: 512 KiB), so the block and the product's packed panels stay in cache between the
 * gather and the product. A block is never less than one row.
 */
export const NATIVE_PATCH_BLOCK_FLOATS = 1 << 16;

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

/** The 14 integers of a geometry in the addon's order (native/patches.cc). */
export function geometryArray(g: ConvGeometry): number[] {
  return [
    g.batchSize, g.inHeight, g.inWidth, g.inChannels, g.outHeight, g.outWidth, g.filterHeight, g.filterWidth,
    g.strideHeight, g.strideWidth, g.dilationHeight, g.dilationWidth, g.padInfo.top, g.padInfo.left,
  ];
}

/** Rows, depth and the row blocks of a geometry's patch matrix. */
interface PatchPlan {
  rows: number;
  depth: number;
  geometry: number[];
  /** Rows per block (the last block may be shorter). */
  block: number;
}

function planOf(g: ConvGeometry, blockFloats: number): PatchPlan {
  const rows = g.batchSize * g.outHeight * g.outWidth;
  const depth = g.filterHeight * g.filterWidth * g.inChannels;
  return { rows, depth, geometry: geometryArray(g), block: Math.max(1, Math.min(rows, Math.floor(blockFloats / Math.max(1, depth)))) };
}

/**
 * The products (cblas_sgemm calls) one of these kernels makes for a geometry: one per block of
 * patch rows, and one for a pointwise convolution, which needs no patch matrix.
 */
export function nativePatchBlocks(g: ConvGeometry, blockFloats: number = NATIVE_PATCH_BLOCK_FLOATS): number {
  if (isPointwise(g)) return 1;
  const p = planOf(g, blockFloats);
  return Math.ceil(p.rows / p.block);
}

/** Calls `fn(start, count)` for each block of rows. */
function eachBlock(p: PatchPlan, fn: (start: number, count: number) => void): void {
  for (let start = 0; start < p.rows; start += p.block) fn(start, Math.min(p.block, p.rows - start));
}

/** The forward convolution (plus an optional per-channel bias) into a new NHWC tensor, or null for the stock kernel. */
function conv2dNative(host: NativeHost, x: tf.TensorInfo, filter: tf.TensorInfo, attrs: tf.NamedAttrMap, bias: tf.TensorInfo | null, blockFloats: number): tf.TensorInfo | null {
  if (((attrs.dataFormat as string) ?? 'NHWC') !== 'NHWC' || x.dtype !== 'float32' || filter.dtype !== 'float32') return null;
  const g = forwardGeometry(x, filter, attrs);
  const p = planOf(g, blockFloats);
  const co = g.outChannels;
  const addon = nativeAddon('Conv2D');
  const result = host.output(g.outShape);
  // Views after the allocation (on wasm it may move the heap).
  const out = host.values(result);
  const input = host.values(x);
  const w = host.values(filter);
  if (bias !== null) fillRows(out, host.values(bias));
  const beta = bias === null ? 0 : 1;
  if (isPointwise(g)) {
    sgemm(addon, { transA: false, transB: false, m: p.rows, n: co, k: p.depth, beta }, input, w, out);
    return result;
  }
  const patches = scratch(p.block * p.depth);
  eachBlock(p, (start, count) => {
    addon.im2col(input, p.geometry, start, count, patches);
    sgemm(addon, { transA: false, transB: false, m: count, n: co, k: p.depth, beta }, patches, w, out.subarray(start * co, (start + count) * co));
  });
  return result;
}

/** Options of {@link nativeConv2dPatches}. */
export interface NativeConv2dArgs {
  /** Floats of one block of patch rows. Default {@link NATIVE_PATCH_BLOCK_FLOATS}. */
  blockFloats?: number;
}

interface Options {
  backendName: 'cpu' | 'wasm';
  blockFloats: number;
}

function conv2dPatch(o: Options): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const { x, filter } = args.inputs as { x: tf.TensorInfo; filter: tf.TensorInfo };
    return conv2dNative(hostOf(o.backendName, args.backend), x, filter, args.attrs as tf.NamedAttrMap, null, o.blockFloats) ?? (stock as KernelFn)(args);
  };
}

function fusedConv2dPatch(o: Options): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(o.backendName, args.backend);
    const inputs = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const x = inputs.x as tf.TensorInfo;
    const f = inputs.filter as tf.TensorInfo;
    const finish = nativeActivation(host, attrs, inputs, f.shape[3]);
    if (finish === null) return (stock as KernelFn)(args);
    const product = conv2dNative(host, x, f, attrs, columnBias(inputs.bias, f.shape[3]), o.blockFloats);
    if (!product) return (stock as KernelFn)(args);
    return finish(product);
  };
}

function backpropFilterPatch(o: Options): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(o.backendName, args.backend);
    const { x, dy } = args.inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
    if (x.dtype !== 'float32' || dy.dtype !== 'float32' || (attrs.dataFormat ?? 'NHWC') !== 'NHWC') return (stock as KernelFn)(args);
    const info = tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], attrs.filterShape, attrs.strides, 1, attrs.pad, attrs.dimRoundingMode, false, 'channelsLast');
    // tfjs may round the output size; the gradient uses the size dy actually has.
    const g = { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
    const p = planOf(g, o.blockFloats);
    const co = g.outChannels;
    const addon = nativeAddon('Conv2DBackpropFilter');
    const result = host.output(attrs.filterShape);
    const dW = host.values(result);
    const input = host.values(x);
    const gradient = host.values(dy);
    if (isPointwise(g)) {
      sgemm(addon, { transA: true, transB: false, m: p.depth, n: co, k: p.rows }, input, gradient, dW);
      return result;
    }
    // dW = Σ over blocks of patchesᵀ · dy: the first block writes, the others add (beta = 1).
    // An empty batch has no block: its gradient is zero.
    if (p.rows === 0) dW.fill(0);
    const patches = scratch(p.block * p.depth);
    eachBlock(p, (start, count) => {
      addon.im2col(input, p.geometry, start, count, patches);
      sgemm(addon, { transA: true, transB: false, m: p.depth, n: co, k: count, beta: start === 0 ? 0 : 1 }, patches, gradient.subarray(start * co, (start + count) * co), dW);
    });
    return result;
  };
}

function backpropInputPatch(o: Options): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(o.backendName, args.backend);
    const { dy, filter } = args.inputs as { dy: tf.TensorInfo; filter: tf.TensorInfo };
    const attrs = args.attrs as unknown as tf.Conv2DBackpropInputAttrs;
    if ((attrs.dataFormat ?? 'NHWC') !== 'NHWC' || dy.dtype !== 'float32' || filter.dtype !== 'float32') return (stock as KernelFn)(args);
    const info = tf.backend_util.computeConv2DInfo(attrs.inputShape, filter.shape as [number, number, number, number], attrs.strides, 1, attrs.pad, attrs.dimRoundingMode, false, 'channelsLast');
    const g = { ...info, outHeight: dy.shape[1], outWidth: dy.shape[2] };
    const p = planOf(g, o.blockFloats);
    const co = g.outChannels;
    const addon = nativeAddon('Conv2DBackpropInput');
    const result = host.output(g.inShape);
    const dx = host.values(result);
    const gradient = host.values(dy);
    const w = host.values(filter);
    if (isPointwise(g)) {
      sgemm(addon, { transA: false, transB: true, m: p.rows, n: p.depth, k: co }, gradient, w, dx);
      return result;
    }
    // Each block of dy · Wᵀ is scattered back onto dx (zeroed by the first) before the next; an
    // empty dy has no block, and dx is zero.
    if (p.rows === 0) dx.fill(0);
    const cols = scratch(p.block * p.depth);
    eachBlock(p, (start, count) => {
      sgemm(addon, { transA: false, transB: true, m: count, n: p.depth, k: co }, gradient.subarray(start * co, (start + count) * co), w, cols);
      addon.col2im(cols, p.geometry, start, count, dx, start === 0);
    });
    return result;
  };
}

/**
 * The patches of this file for a backend (registered by `installFastKernels("native")` in place
 * of the project's others, which they hand the cases they skip to).
 *
 * All four kernels on both backends, because each measured faster than what it replaces on wasm
 * once im2col and col2im ran in the addon: process CPU time per call, native / XNNPACK (the
 * project's flipped-filter input gradient and gathered-patch filter gradient), fresh weights per
 * call as in a plain step, the digit CNN's shapes (build/tmp-style A/B of each kernel alone,
 * 2026-12-01 21:53 UTC, load average 2.9-4.0 on the shared 2-core machine):
 *
 *     batch 16, conv1 28x28x1 -> 16:   forward 0.295 / 0.288 ms (a tie), filter gradient 0.285 / 0.644
 *     batch 16, conv2 14x14x16 -> 32:  forward 0.431 / 0.990, filter gradient 0.449 / 1.950,
 *                                      input gradient 0.457 / 1.047
 *     batch 64, conv1:                 forward 1.152 / 1.163, filter gradient 1.205 / 2.553
 *     batch 64, conv2:                 forward 1.807 / 4.231, filter gradient 1.819 / 7.545,
 *                                      input gradient 1.829 / 4.087
 *
 * (im2col has been made 1.4-3.3x faster since for these shapes, col2im 1.1x: native/patches.cc.)
 * With im2col/col2im in JS the forward and input gradient had lost (1.46 vs 1.07 ms and 1.82 vs
 * 1.10 for conv2 at batch 16). Blocks of 32 Ki, 64 Ki and 128 Ki floats measured within 10% of
 * each other; the whole patch matrix at once was up to 1.5x slower for conv2's filter gradient
 * at batch 64 (2.66 against 1.85 ms).
 */
export function nativeConv2dPatches(backendName: 'cpu' | 'wasm', args: NativeConv2dArgs = {}): KernelPatch[] {
  const o: Options = { backendName, blockFloats: args.blockFloats ?? NATIVE_PATCH_BLOCK_FLOATS };
  return [
    { kernelName: 'Conv2D', backendName, description: 'native: im2col + cblas_sgemm by blocks of rows (a 1x1 convolution reads the input as is)', build: conv2dPatch(o) },
    {
      kernelName: 'FusedConv2D',
      backendName,
      description: 'native: the same convolution onto the bias written into the output, then the activation',
      build: (stock) => notingAttrs(fusedConv2dPatch(o)(stock)),
    },
    { kernelName: 'Conv2DBackpropFilter', backendName, description: 'native: Σ of patchesᵀ · dy over blocks of rows in cblas_sgemm (transposed-A flag, beta = 1)', build: backpropFilterPatch(o) },
    { kernelName: 'Conv2DBackpropInput', backendName, description: 'native: col2im of dy · Wᵀ from cblas_sgemm, block by block (transposed-B flag)', build: backpropInputPatch(o) },
  ];
}
