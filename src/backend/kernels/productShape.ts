import * as tf from '@tensorflow/tfjs';
import { gemm, transposeInto } from './gemm';
import { sizeOf } from './wasmHeap';

/**
 * The sizes of a batched float32 product `op(a) · op(b)` and which matrices of `a` and `b` meet
 * in each output matrix, shared by the JS and native products.
 *
 * The leading ("batch") axes broadcast as numpy's do, axis by axis: `[1, 3]` against `[3, 1]`
 * gives nine matrices. tfjs's own kernels (cpu and wasm, 4.22) only compare the *counts* of
 * batch matrices, so there `[1, 3, m, k] · [3, 1, k, n]` computes three products into a
 * nine-matrix output (the cpu kernel returns 12 values for a 36-value shape, wasm leaves 24 of 36
 * values uninitialized). Here the common cases (equal batch axes, or one side a single matrix)
 * stay one strided loop, and any other broadcast pairs the matrices explicitly.
 */
export interface ProductShape {
  m: number;
  k: number;
  n: number;
  /** Matrices in a and in b (1: one matrix shared by the whole batch). */
  batchA: number;
  batchB: number;
  /** Matrices in the output: the product of {@link outer}. */
  batch: number;
  /** The broadcast leading dims of the output. */
  outer: number[];
  /**
   * For a broadcast that is neither (output matrix i meets a's matrix i or 0, and b's matrix i
   * or 0), the matrix of a and of b for each output matrix; null otherwise.
   */
  pairs: { a: Int32Array; b: Int32Array } | null;
}

/**
 * The sizes of `op(a) · op(b)`, or null for what the replacements leave to the stock kernel:
 * other dtypes, rank below 2, and shapes that do not multiply or broadcast (its checks and
 * messages).
 */
export function productShape(a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): ProductShape | null {
  if (a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2) return null;
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
  const k = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
  const n = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
  const kb = transposeB ? b.shape[rb - 1] : b.shape[rb - 2];
  if (k !== kb) return null;
  const outerA = a.shape.slice(0, -2);
  const outerB = b.shape.slice(0, -2);
  let outer: number[];
  try {
    outer = tf.backend_util.assertAndGetBroadcastShape(outerA, outerB);
  } catch {
    return null;
  }
  const batchA = sizeOf(outerA);
  const batchB = sizeOf(outerB);
  const batch = sizeOf(outer);
  const linear = (dims: number[], count: number) => count === 1 || sameDims(dims, outer);
  const pairs = linear(outerA, batchA) && linear(outerB, batchB) ? null : pairMatrices(outerA, outerB, outer);
  return { m, k, n, batchA, batchB, batch, outer, pairs };
}

/** True when `dims`, padded with leading 1s, is `outer` (so its matrix i is output matrix i). */
function sameDims(dims: number[], outer: number[]): boolean {
  const pad = outer.length - dims.length;
  return outer.every((d, i) => (i < pad ? d === 1 : dims[i - pad] === d));
}

/** For each output matrix, the index of the matrix of a and of b it multiplies. */
function pairMatrices(outerA: number[], outerB: number[], outer: number[]): { a: Int32Array; b: Int32Array } {
  const batch = sizeOf(outer);
  const strides = (dims: number[]) => {
    // Strides of `dims` seen through `outer`: 0 on an axis it broadcasts along.
    const out = new Array<number>(outer.length).fill(0);
    let stride = 1;
    for (let i = dims.length - 1; i >= 0; i--) {
      const axis = outer.length - dims.length + i;
      out[axis] = dims[i] === 1 ? 0 : stride;
      stride *= dims[i];
    }
    return out;
  };
  const sa = strides(outerA);
  const sb = strides(outerB);
  const a = new Int32Array(batch);
  const b = new Int32Array(batch);
  for (let i = 0; i < batch; i++) {
    let rest = i;
    for (let axis = outer.length - 1; axis >= 0; axis--) {
      const coord = rest % outer[axis];
      rest = (rest - coord) / outer[axis];
      a[i] += coord * sa[axis];
      b[i] += coord * sb[axis];
    }
  }
  return { a, b };
}

/** The matrix of a (`which` 0) or of b (1) that output matrix `i` multiplies. */
export function matrixOf(s: ProductShape, which: 0 | 1, i: number): number {
  if (s.pairs !== null) return which === 0 ? s.pairs.a[i] : s.pairs.b[i];
  return (which === 0 ? s.batchA : s.batchB) === 1 ? 0 : i;
}

/**
 * `out = op(a) · op(b)` for every output matrix, in the register-blocked JS {@link gemm}, with
 * operands transposed into the layout it reads (A by rows, B by columns) first; a matrix shared
 * by consecutive outputs is packed once.
 */
export function productInto(av: Float32Array, bv: Float32Array, out: Float32Array, s: ProductShape, transposeA: boolean, transposeB: boolean): void {
  const { m, k, n } = s;
  const aRows = transposeA ? new Float32Array(m * k) : null;
  const bCols = transposeB ? null : new Float32Array(n * k);
  let packedA = -1;
  let packedB = -1;
  for (let i = 0; i < s.batch; i++) {
    const ia = matrixOf(s, 0, i);
    const ib = matrixOf(s, 1, i);
    if (aRows && ia !== packedA) transposeInto(av, ia * m * k, k, m, aRows);
    if (bCols && ib !== packedB) transposeInto(bv, ib * k * n, k, n, bCols);
    packedA = ia;
    packedB = ib;
    gemm(aRows ?? av, aRows ? 0 : ia * m * k, bCols ?? bv, bCols ? 0 : ib * k * n, out, i * m * n, m, k, n);
  }
}
