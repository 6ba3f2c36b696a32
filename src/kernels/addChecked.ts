import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from '../errors';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';
import { simdKernels } from './wasmSimd';

/**
 * An accumulator's micro-step in one pass over the weights: the new running sum
 * `sum + weight · gradient` and the check that every element of it is finite.
 *
 * As tfjs ops this is an add (after a multiply when the weight is not 1) and then a reduction
 * that reads the result again, two or three kernels and passes per weight. Here one kernel reads
 * the sum and the gradient once, writes the new sum, and adds `x − x` of each new element into
 * the check: exactly 0 when every element is finite, NaN as soon as one is ±Infinity or NaN
 * (∞ − ∞ = NaN), whatever the magnitudes (a plain sum of the values could overflow to ∞ from
 * finite values). On wasm the loop is WebAssembly SIMD (src/kernels/wasmSimd.ts), on cpu a JS
 * loop; other backends run the same arithmetic as tfjs ops.
 *
 * Exact: the same float32 multiply and add as `tf.add(sum, tf.mul(gradient, weight))` (or
 * `tf.mul(gradient, weight)` without a sum), so the sums are bit-identical.
 */

/** The kernel's name in tfjs's registry. */
export const ADD_CHECKED = 'TfjsAccumulateAddChecked';

/** The result of {@link addChecked}. */
export interface CheckedSum {
  /** `sum + weight · gradient` (or `weight · gradient` without a sum), float32, the gradient's shape. */
  sum: tf.Tensor;
  /** A float32 scalar: 0 when every element of `sum` is finite, NaN otherwise. */
  check: tf.Scalar;
}

/**
 * Adds `weight · gradient` into `sum` (null: start a new sum) and checks the result for
 * non-finite values, in one pass where the active backend has the kernel (wasm, cpu with the
 * fast kernels installed), as tfjs ops elsewhere. Pure: neither input is changed or disposed.
 *
 * An accumulator checks several weights at once by adding their checks (`tf.addN`): the total is
 * 0 when all are finite, NaN otherwise.
 */
export function addChecked(sum: tf.Tensor | null, gradient: tf.Tensor, weight = 1): CheckedSum {
  if (!(gradient instanceof tf.Tensor)) throw argumentError('addChecked', 'gradient', 'a tf.Tensor', gradient);
  if (sum !== null && !(sum instanceof tf.Tensor && tf.util.arraysEqual(sum.shape, gradient.shape))) {
    throw argumentError('addChecked', 'sum', `null or a tf.Tensor of the gradient's shape [${gradient.shape}]`, sum instanceof tf.Tensor ? verbatim(`a tensor of shape [${sum.shape}]`) : sum);
  }
  if (typeof weight !== 'number' || !Number.isFinite(weight)) throw argumentError('addChecked', 'weight', 'a finite number', weight);
  if (gradient.dtype === 'float32' && (sum === null || sum.dtype === 'float32') && tf.getKernel(ADD_CHECKED, tf.getBackend())) {
    const inputs: tf.NamedTensorMap = sum === null ? { gradient } : { sum, gradient };
    const [out, check] = tf.engine().runKernel(ADD_CHECKED, inputs, { weight }) as unknown as [tf.Tensor, tf.Scalar];
    return { sum: out, check };
  }
  return tf.tidy(() => {
    const scaled = weight === 1 ? tf.cast(gradient, 'float32') : tf.mul(gradient, weight);
    const out = sum === null ? (weight === 1 ? tf.clone(scaled) : scaled) : tf.add(sum, scaled);
    return { sum: out, check: tf.sum(tf.sub(out, out)) as tf.Scalar };
  });
}

/** The finiteness check of the elements past the last whole SIMD vector, and of the cpu path. */
function scalarLoop(sum: Float32Array | null, gradient: Float32Array, out: Float32Array, from: number, weight: number): number {
  let bad = 0;
  // tfjs makes the weight a float32 scalar before multiplying.
  const w = Math.fround(weight);
  for (let i = from; i < gradient.length; i++) {
    // fround twice: a float32 multiply, then a float32 add (each exact in double, then rounded).
    const product = w === 1 ? gradient[i] : Math.fround(gradient[i] * w);
    const value = sum === null ? product : Math.fround(sum[i] + product);
    out[i] = value;
    bad += value - value;
  }
  return bad;
}

function addCheckedWasm(): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { sum, gradient } = args.inputs as { sum?: tf.TensorInfo; gradient: tf.TensorInfo };
    const weight = (args.attrs as { weight: number }).weight;
    const out = backend.makeOutput(gradient.shape, 'float32');
    const check = backend.makeOutput([], 'float32');
    // Views after the last allocation: a growing heap detaches older ones.
    const g = heapF32(backend, gradient);
    const s = sum ? heapF32(backend, sum) : null;
    const o = heapF32(backend, out);
    const simd = simdKernels(backend);
    const n = sizeOf(gradient.shape);
    const whole = simd ? n - (n % 4) : 0;
    let bad = 0;
    if (simd && whole > 0) {
      bad = s
        ? simd.addChecked(s.byteOffset, g.byteOffset, o.byteOffset, 4 * whole, weight)
        : simd.scaleChecked(g.byteOffset, o.byteOffset, 4 * whole, weight);
    }
    bad += scalarLoop(s, g, o, whole, weight);
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

/** The patches of this file: a new kernel, so there is no stock one to fall back to. */
export const addCheckedPatches: KernelPatch[] = [
  { kernelName: ADD_CHECKED, backendName: 'wasm', description: "an accumulator's add and finiteness check in one WebAssembly SIMD pass", build: addCheckedWasm },
  { kernelName: ADD_CHECKED, backendName: 'cpu', description: "an accumulator's add and finiteness check in one JS pass", build: addCheckedCpu },
];
