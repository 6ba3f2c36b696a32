import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';

/**
 * `Sum` and `Mean` over leading axes (per-channel statistics of NHWC activations).
 *
 * Batch statistics and bias gradients reduce over every axis but the last. The stock wasm
 * and cpu kernels only reduce innermost axes, so they first transpose the whole activation to put the
 * reduced axes last: a full extra copy per reduction. Here the rows are added in place into a
 * float64 accumulator per channel (one read of the input, more accurate than float32 sums).
 * Other reductions go to the stock kernels.
 */

/** The number of leading axes reduced, or -1 when the axes are not a leading block. */
function leadingAxes(shape: number[], axis: number | number[]): number {
  const rank = shape.length;
  const axes = (Array.isArray(axis) ? axis : [axis]).map((a) => (a < 0 ? a + rank : a));
  const sorted = [...new Set(axes)].sort((a, b) => a - b);
  if (sorted.length === 0 || sorted.length >= rank) return -1;
  return sorted.every((a, i) => a === i) ? sorted.length : -1;
}

/** Rows per block of the column loops: a block stays in cache while each column is walked. */
export const BLOCK_ROWS = 256;

/**
 * Column sums of a row-major `rows x cols` matrix, in float64. Column by column inside blocks
 * of rows, with four partial sums: V8 keeps scalar accumulators in registers, where adding whole
 * rows into an accumulator array costs a load and a store per element; the blocks keep the
 * strided walk inside the cache for large activations.
 */
export function columnSums(x: Float32Array, rows: number, cols: number): Float64Array {
  const acc = new Float64Array(cols);
  for (let r0 = 0; r0 < rows; r0 += BLOCK_ROWS) {
    const start = r0 * cols;
    const end = Math.min(rows, r0 + BLOCK_ROWS) * cols;
    for (let c = 0; c < cols; c++) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let i = start + c;
      for (; i + 3 * cols < end; i += 4 * cols) {
        s0 += x[i];
        s1 += x[i + cols];
        s2 += x[i + 2 * cols];
        s3 += x[i + 3 * cols];
      }
      for (; i < end; i += cols) s0 += x[i];
      acc[c] += s0 + s1 + (s2 + s3);
    }
  }
  return acc;
}

/** The shape work every backend shares (nativeChannels.ts too); null when the stock kernel should run instead. */
export function leadingAxisPlan(args: KernelArgs): { x: tf.TensorInfo; rows: number; cols: number; outShape: number[] } | null {
  const { x } = args.inputs as { x: tf.TensorInfo };
  const { axis, keepDims } = args.attrs as unknown as tf.SumAttrs;
  const k = x.dtype === 'float32' ? leadingAxes(x.shape, axis) : -1;
  if (k < 0 || sizeOf(x.shape) === 0) return null;
  const kept = x.shape.slice(k);
  return { x, rows: sizeOf(x.shape.slice(0, k)), cols: sizeOf(kept), outShape: keepDims ? [...x.shape.slice(0, k).map(() => 1), ...kept] : kept };
}

/** Writes the float64 column sums (or means) into a float32 output. */
function store(acc: Float64Array, rows: number, mean: boolean, dst: Float32Array): Float32Array {
  for (let c = 0; c < acc.length; c++) dst[c] = mean ? acc[c] / rows : acc[c];
  return dst;
}

/**
 * `Sum` or `Mean` of an empty tensor on wasm: zeros, as on stock cpu (whose mean is a sum of
 * `x / n`). The stock wasm kernels allocate the output and never write it when the input is
 * empty (tfjs-backend-wasm 4.22): a sum over an empty axis returned whatever a freed tensor
 * left there, and a mean over one could trap.
 */
function emptyReduction(backend: WasmBackend, args: KernelArgs, mean: boolean): tf.TensorInfo {
  const { x } = args.inputs as { x: tf.TensorInfo };
  const { axis, keepDims } = args.attrs as unknown as tf.SumAttrs;
  const axes = tf.util.parseAxisParam(axis, x.shape);
  const [outShape] = tf.backend_util.computeOutAndReduceShapes(x.shape, axes);
  const dtype: tf.DataType = mean ? 'float32' : x.dtype === 'bool' ? 'int32' : x.dtype;
  const out = backend.makeOutput(keepDims ? tf.backend_util.expandShapeToKeepDim(outShape, axes) : outShape, dtype);
  (backend as WasmBackend & { typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array }).typedArrayFromHeap(out).fill(0);
  return out;
}

function reduceWasm(mean: boolean): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (sizeOf(x.shape) === 0) return emptyReduction(args.backend as WasmBackend, args, mean);
    const p = leadingAxisPlan(args);
    if (p === null) return (stock as KernelFn)(args);
    const backend = args.backend as WasmBackend;
    const out = backend.makeOutput(p.outShape, 'float32');
    store(columnSums(heapF32(backend, p.x), p.rows, p.cols), p.rows, mean, heapF32(backend, out));
    return out;
  };
}

function reduceCpu(mean: boolean): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const p = leadingAxisPlan(args);
    if (p === null) return (stock as KernelFn)(args);
    const backend = args.backend as CpuBackend;
    const acc = columnSums(cpuValues(backend, p.x), p.rows, p.cols);
    return backend.makeTensorInfo(p.outShape, 'float32', store(acc, p.rows, mean, new Float32Array(acc.length)));
  };
}

/** The patches of this file. */
export const leadingAxisReducePatches: KernelPatch[] = [
  { kernelName: 'Sum', backendName: 'wasm', description: 'per-channel sums without transposing the activation first', build: reduceWasm(false) },
  { kernelName: 'Mean', backendName: 'wasm', description: 'per-channel means without transposing the activation first', build: reduceWasm(true) },
  { kernelName: 'Sum', backendName: 'cpu', description: 'per-channel sums without transposing the activation first', build: reduceCpu(false) },
  { kernelName: 'Mean', backendName: 'cpu', description: 'per-channel means without transposing the activation first', build: reduceCpu(true) },
];
