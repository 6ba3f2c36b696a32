import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { heapF32, sizeOf, WasmBackend } from './wasmHeap';

/**
 * Where the native kernels find their operands and put their results, without copies: the cpu
 * backend keeps each tensor as its own Float32Array; the wasm backend keeps them all on its
 * WebAssembly heap, which the addon reads and writes through Float32Array views.
 *
 * Order matters on wasm: allocating an output may grow the heap, which detaches every view
 * taken before. So a kernel allocates its output first ({@link NativeHost.output}) and takes the
 * views of its inputs and output after ({@link NativeHost.values}), and allocates nothing on the
 * backend between taking a view and the last use of it.
 */
export interface NativeHost {
  /** `"cpu"` or `"wasm"`. */
  name: 'cpu' | 'wasm';
  /** A new float32 tensor of `shape` on the backend (contents undefined). */
  output(shape: number[]): tf.TensorInfo;
  /** The float32 values of a tensor of this backend, in place. */
  values(t: tf.TensorInfo): Float32Array;
  /** The backend object itself (for the stock kernels a native kernel hands over to). */
  backend: unknown;
}

/** The host of the cpu backend's typed arrays. */
export function cpuHost(backend: CpuBackend): NativeHost {
  return {
    name: 'cpu',
    output: (shape) => backend.makeTensorInfo(shape, 'float32', new Float32Array(sizeOf(shape))),
    values: (t) => cpuValues(backend, t),
    backend,
  };
}

/** The host of the wasm backend's heap. */
export function wasmHost(backend: WasmBackend): NativeHost {
  return {
    name: 'wasm',
    output: (shape) => backend.makeOutput(shape, 'float32'),
    values: (t) => heapF32(backend, t),
    backend,
  };
}

/**
 * Each backend's host, made once: every native kernel call asks for one, and a new host per call
 * was an object and two closures (which tsx also names with a property write) per kernel, 0.7% of
 * a native MLP window's profile. The closures read the backend when called, so a heap that grew
 * since is still read right.
 */
const hosts = new WeakMap<object, NativeHost>();

/** The host of a kernel's backend, by the name the kernel was registered for. */
export function hostOf(backendName: 'cpu' | 'wasm', backend: unknown): NativeHost {
  const known = hosts.get(backend as object);
  if (known !== undefined && known.name === backendName) return known;
  const host = backendName === 'cpu' ? cpuHost(backend as CpuBackend) : wasmHost(backend as WasmBackend);
  hosts.set(backend as object, host);
  return host;
}
