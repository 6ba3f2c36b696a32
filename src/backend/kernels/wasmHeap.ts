import * as tf from '@tensorflow/tfjs';
import { KernelFn, stockKernel } from './registry';

/**
 * The small part of the wasm backend (`BackendWasm` of @tensorflow/tfjs-backend-wasm) that the
 * kernels here use. Typed structurally so that the library does not import the wasm package.
 */
export interface WasmBackend {
  wasm: { HEAPU8: Uint8Array };
  dataIdMap: { get(dataId: object): { id: number; memoryOffset: number } | undefined; has(dataId: object): boolean };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  disposeData(dataId: object, force?: boolean): boolean;
  incRef(dataId: object): void;
}

/**
 * A Float32Array view of a tensor on the wasm heap.
 *
 * Views go stale when the heap grows (any allocation can grow it), so take them only after the
 * last `makeOutput` of a kernel.
 */
export function heapF32(backend: WasmBackend, t: tf.TensorInfo): Float32Array {
  const data = backend.dataIdMap.get(t.dataId);
  if (!data) throw new Error('tfjs-accumulate: a tensor of this kernel is not on the wasm heap.');
  return new Float32Array(backend.wasm.HEAPU8.buffer, data.memoryOffset, sizeOf(t.shape));
}

/**
 * A new float32 tensor of zeros: the answer of a product whose sum is empty (an empty batch, no
 * channels to reduce over). XNNPACK leaves such an output unwritten, holding whatever a freed
 * tensor left on the heap.
 */
export function zerosOutput(backend: WasmBackend, shape: number[]): tf.TensorInfo {
  const out = backend.makeOutput(shape, 'float32');
  heapF32(backend, out).fill(0);
  return out;
}

/** Number of elements of a shape. */
export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Runs a stock kernel of `backendName` directly on TensorInfos (no engine, no tape). */
export function runStock(
  kernelName: string,
  backendName: string,
  backend: unknown,
  inputs: tf.NamedTensorInfoMap,
  attrs: tf.NamedAttrMap = {},
): tf.TensorInfo {
  const fn: KernelFn = stockKernel(kernelName, backendName);
  return fn({ inputs, backend, attrs }) as tf.TensorInfo;
}

/** Frees intermediate TensorInfos made inside a kernel. */
export function disposeAll(backend: WasmBackend, ...infos: (tf.TensorInfo | null | undefined)[]): void {
  for (const t of infos) if (t) backend.disposeData(t.dataId);
}

/**
 * A kernel's reshape: a new TensorInfo sharing the data, as the stock wasm `Reshape` makes it
 * (it bumps the reference count, so the result is disposed like any other output).
 */
export function reshapeInfo(backend: unknown, x: tf.TensorInfo, shape: number[], backendName: string): tf.TensorInfo {
  return runStock('Reshape', backendName, backend, { x }, { shape });
}
