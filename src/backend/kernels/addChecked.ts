import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';
import { simdKernels } from './wasmSimd';
import { ADD_CHECKED } from '../../core/addChecked';

/**
 * The one-pass kernels behind `addChecked` (src/core/addChecked.ts), registered by `installFastKernels`
 * under the name the core looks up.
 */

/** The elements past the SIMD loop's last whole iteration, and the whole cpu path. */
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
    // The SIMD loop takes 16 floats an iteration; the scalar loop finishes the rest.
    const whole = simd ? n - (n % 16) : 0;
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
