import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';
import { SimdKernels, simdKernels } from './wasmSimd';
import { ADD_CHECKED, ADD_CHECKED_ALL } from '../../core/addChecked';

/**
 * The one-pass kernels behind `addChecked` and `addCheckedAll` (src/core/addChecked.ts),
 * registered by `installFastKernels` under the names the core looks up.
 */

/**
 * The elements past the SIMD loop's last whole iteration, and the whole cpu path. With a
 * divisor, `out` gets each new sum divided by it; the check is of the undivided sums.
 */
function scalarLoop(sum: Float32Array | null, gradient: Float32Array, out: Float32Array, from: number, weight: number, divisor: number | null = null): number {
  let bad = 0;
  // tfjs makes the weight and the divisor float32 scalars before using them.
  const w = Math.fround(weight);
  const d = divisor === null ? 1 : Math.fround(divisor);
  for (let i = from; i < gradient.length; i++) {
    // fround twice: a float32 multiply, then a float32 add (each exact in double, then rounded).
    const product = w === 1 ? gradient[i] : Math.fround(gradient[i] * w);
    const value = sum === null ? product : Math.fround(sum[i] + product);
    // A double quotient of two floats rounds to the float32 quotient: 53 ≥ 2·24 + 2 bits.
    out[i] = divisor === null ? value : value / d;
    bad += value - value;
  }
  return bad;
}

/** The check alone over `x` from `from` on (see `checkFinite` in wasmSimd.ts): Σ (x − x), 0 or NaN. */
function checkLoop(x: Float32Array, from: number): number {
  let bad = 0;
  for (let i = from; i < x.length; i++) bad += x[i] - x[i];
  return bad;
}

/**
 * Whether the new sum is the gradient itself, bit for bit: no running sum, a weight that is 1 in
 * float32 and no divisor (every window's first micro-step of `GradientAccumulator.step`, whose
 * objective carries the scale). The kernel then checks the gradient and hands its data out
 * shared, as the project's `Identity` does (identity.ts: tfjs tensors are immutable), instead of
 * copying it into a new buffer: one read of the gradient instead of a read and a write, and no
 * allocation of a weight-sized output.
 */
function adopts(sum: tf.TensorInfo | undefined, weight: number, divisor: number | null): boolean {
  return sum === undefined && divisor === null && Math.fround(weight) === 1;
}

/** The gradient's data as the output, its reference count raised (the engine wraps it in a new tensor). */
function shared(backend: { incRef(dataId: object): void }, gradient: tf.TensorInfo): tf.TensorInfo {
  backend.incRef(gradient.dataId);
  return { dataId: gradient.dataId, shape: gradient.shape, dtype: 'float32' };
}

/** The check of a gradient on the wasm heap, read-only. */
function checkOnHeap(backend: WasmBackend, simd: SimdKernels | null, gradient: tf.TensorInfo): number {
  const g = heapF32(backend, gradient);
  const whole = simd ? g.length - (g.length % 16) : 0;
  const bad = simd && whole > 0 ? simd.checkFinite(g.byteOffset, 4 * whole) : 0;
  return bad + checkLoop(g, whole);
}

/** One sum on the wasm heap, its output already allocated; returns its check. */
function addOnHeap(backend: WasmBackend, simd: SimdKernels | null, sum: tf.TensorInfo | undefined, gradient: tf.TensorInfo, out: tf.TensorInfo, weight: number, divisor: number | null = null): number {
  const g = heapF32(backend, gradient);
  const s = sum ? heapF32(backend, sum) : null;
  const o = heapF32(backend, out);
  const n = g.length;
  // The SIMD loop takes 16 floats an iteration; the scalar loop finishes the rest.
  const whole = simd ? n - (n % 16) : 0;
  let bad = 0;
  if (simd && whole > 0) {
    const [sp, gp, op, bytes] = [s?.byteOffset ?? 0, g.byteOffset, o.byteOffset, 4 * whole];
    if (divisor === null) bad = s ? simd.addChecked(sp, gp, op, bytes, weight) : simd.scaleChecked(gp, op, bytes, weight);
    else bad = s ? simd.addCheckedDiv(sp, gp, op, bytes, weight, divisor) : simd.scaleCheckedDiv(gp, op, bytes, weight, divisor);
  }
  return bad + scalarLoop(s, g, o, whole, weight, divisor);
}

function addCheckedWasm(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { sum, gradient } = args.inputs as { sum?: tf.TensorInfo; gradient: tf.TensorInfo };
    const out = backend.makeOutput(gradient.shape, 'float32');
    const check = backend.makeOutput([], 'float32');
    // Views after the last allocation: a growing heap detaches older ones.
    const bad = addOnHeap(backend, simdKernels(backend), sum, gradient, out, (args.attrs as { weight: number }).weight);
    heapF32(backend, check)[0] = bad;
    return [out, check];
  };
}

function addCheckedCpu(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { sum, gradient } = args.inputs as { sum?: tf.TensorInfo; gradient: tf.TensorInfo };
    const weight = (args.attrs as { weight: number }).weight;
    const out = new Float32Array(sizeOf(gradient.shape));
    const bad = scalarLoop(sum ? cpuValues(backend, sum) : null, cpuValues(backend, gradient), out, 0, weight);
    return [backend.makeTensorInfo(gradient.shape, 'float32', out), backend.makeTensorInfo([], 'float32', new Float32Array([bad]))];
  };
}

/** The inputs of `addCheckedAll`'s kernel: `g<i>` for every gradient, `s<i>` where it has a running sum. */
function inputsOfAll(args: KernelArgs): { sums: (tf.TensorInfo | undefined)[]; gradients: tf.TensorInfo[]; weight: number; divisor: number | null; carry: tf.TensorInfo[] } {
  const { count, weight, divide, divisor, carried } = args.attrs as { count: number; weight: number; divide: boolean; divisor: number; carried?: number };
  const gradients: tf.TensorInfo[] = [];
  const sums: (tf.TensorInfo | undefined)[] = [];
  for (let i = 0; i < count; i++) {
    gradients.push(args.inputs[`g${i}`] as tf.TensorInfo);
    sums.push(args.inputs[`s${i}`]);
  }
  const carry: tf.TensorInfo[] = [];
  for (let j = 0; j < (carried ?? 0); j++) carry.push(args.inputs[`r${j}`] as tf.TensorInfo);
  return { sums, gradients, weight, divisor: divide ? divisor : null, carry };
}

/** The shape of the check output: a scalar, or the carried scalars and the check (`addCheckedAllRead`). */
function checkShape(carry: readonly tf.TensorInfo[]): number[] {
  return carry.length === 0 ? [] : [carry.length + 1];
}

function addCheckedAllWasm(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { sums, gradients, weight, divisor, carry } = inputsOfAll(args);
    const adopted = sums.map((s) => adopts(s, weight, divisor));
    const outs = gradients.map((g, i) => (adopted[i] ? shared(backend, g) : backend.makeOutput(g.shape, 'float32')));
    const check = backend.makeOutput(checkShape(carry), 'float32');
    // Views after the last allocation: a growing heap detaches older ones.
    const simd = simdKernels(backend);
    let bad = 0;
    gradients.forEach((g, i) => (bad += adopted[i] ? checkOnHeap(backend, simd, g) : addOnHeap(backend, simd, sums[i], g, outs[i], weight, divisor)));
    const read = heapF32(backend, check);
    carry.forEach((t, j) => (read[j] = heapF32(backend, t)[0]));
    read[carry.length] = bad;
    return [...outs, check];
  };
}

function addCheckedAllCpu(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { sums, gradients, weight, divisor, carry } = inputsOfAll(args);
    let bad = 0;
    const outs = gradients.map((g, i) => {
      const s = sums[i];
      if (adopts(s, weight, divisor)) {
        bad += checkLoop(cpuValues(backend, g), 0);
        return shared(backend, g);
      }
      const out = new Float32Array(sizeOf(g.shape));
      bad += scalarLoop(s ? cpuValues(backend, s) : null, cpuValues(backend, g), out, 0, weight, divisor);
      return backend.makeTensorInfo(g.shape, 'float32', out);
    });
    const read = Float32Array.from([...carry.map((t) => cpuValues(backend, t)[0]), bad]);
    return [...outs, backend.makeTensorInfo(checkShape(carry), 'float32', read)];
  };
}

/** The patches of this file: new kernels, so there is no stock one to fall back to. */
export const addCheckedPatches: KernelPatch[] = [
  { kernelName: ADD_CHECKED, backendName: 'wasm', description: "an accumulator's add and finiteness check in one WebAssembly SIMD pass", build: addCheckedWasm },
  { kernelName: ADD_CHECKED, backendName: 'cpu', description: "an accumulator's add and finiteness check in one JS pass", build: addCheckedCpu },
  { kernelName: ADD_CHECKED_ALL, backendName: 'wasm', description: "an accumulator's micro-step, every variable's add and one finiteness check, in one kernel call of WebAssembly SIMD passes", build: addCheckedAllWasm },
  { kernelName: ADD_CHECKED_ALL, backendName: 'cpu', description: "an accumulator's micro-step, every variable's add and one finiteness check, in one kernel call of JS passes", build: addCheckedAllCpu },
];
