import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { sizeOf } from './wasmHeap';

/**
 * `Add`, `Sub`, `Multiply` and `RealDiv` on cpu, with and without broadcasting.
 *
 * When shapes differ the stock cpu kernels convert every output index to coordinates and back
 * (`indexToLoc`/`locToIndex`, allocating arrays per element): a per-channel scale of a CNN
 * activation then costs ~7 ms. Here the operands' strides are computed once (0 on broadcast
 * axes) and the output is written row by row, the innermost axis in a tight loop (the stock
 * same-shape loop calls a closure and takes a modulo per element). Non-float32 cases go to the
 * stock kernels.
 */
type Row = (out: Float32Array, o: number, a: Float32Array, ia: number, sa: number, b: Float32Array, ib: number, sb: number, n: number) => void;

const rows: Record<string, Row> = {
  Add: (out, o, a, ia, sa, b, ib, sb, n) => {
    for (let i = 0; i < n; i++, ia += sa, ib += sb) out[o + i] = a[ia] + b[ib];
  },
  Sub: (out, o, a, ia, sa, b, ib, sb, n) => {
    for (let i = 0; i < n; i++, ia += sa, ib += sb) out[o + i] = a[ia] - b[ib];
  },
  Multiply: (out, o, a, ia, sa, b, ib, sb, n) => {
    for (let i = 0; i < n; i++, ia += sa, ib += sb) out[o + i] = a[ia] * b[ib];
  },
  RealDiv: (out, o, a, ia, sa, b, ib, sb, n) => {
    for (let i = 0; i < n; i++, ia += sa, ib += sb) out[o + i] = a[ia] / b[ib];
  },
};

/** Element strides of `shape` seen through the broadcast `outShape` (0 on broadcast axes). */
function broadcastStrides(shape: number[], outShape: number[]): number[] {
  const rank = outShape.length;
  const strides = new Array<number>(rank).fill(0);
  let stride = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    const axis = rank - shape.length + i;
    strides[axis] = shape[i] === 1 && outShape[axis] !== 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

/** `op(a, b)` with numpy broadcasting, written into a new array. */
export function broadcastBinary(op: keyof typeof rows, a: Float32Array, aShape: number[], b: Float32Array, bShape: number[]): { values: Float32Array; shape: number[] } {
  const shape = tf.backend_util.assertAndGetBroadcastShape(aShape, bShape);
  const out = new Float32Array(sizeOf(shape));
  if (out.length === 0) return { values: out, shape };
  const rank = shape.length;
  if (rank === 0) {
    rows[op](out, 0, a, 0, 0, b, 0, 0, 1);
    return { values: out, shape };
  }
  const sa = broadcastStrides(aShape, shape);
  const sb = broadcastStrides(bShape, shape);
  const inner = shape[rank - 1];
  const row = rows[op];
  const index = new Array<number>(rank - 1).fill(0);
  let ia = 0;
  let ib = 0;
  for (let o = 0; o < out.length; o += inner) {
    row(out, o, a, ia, sa[rank - 1], b, ib, sb[rank - 1], inner);
    // Advance the odometer over the outer axes.
    for (let d = rank - 2; d >= 0; d--) {
      index[d]++;
      ia += sa[d];
      ib += sb[d];
      if (index[d] < shape[d]) break;
      ia -= sa[d] * shape[d];
      ib -= sb[d] * shape[d];
      index[d] = 0;
    }
  }
  return { values: out, shape };
}

function binaryCpu(op: keyof typeof rows): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return (stock as KernelFn)(args);
    const { values, shape } = broadcastBinary(op, cpuValues(backend, a), a.shape, cpuValues(backend, b), b.shape);
    return backend.makeTensorInfo(shape, 'float32', values);
  };
}

/** The patches of this file. */
export const broadcastBinaryPatches: KernelPatch[] = (['Add', 'Sub', 'Multiply', 'RealDiv'] as const).map((op) => ({
  kernelName: op,
  backendName: 'cpu',
  description: 'broadcasting by precomputed strides instead of per-element index mapping',
  build: binaryCpu(op),
}));
