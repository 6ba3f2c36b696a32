import * as tf from '@tensorflow/tfjs';

/**
 * The small part of tfjs's cpu backend (`MathBackendCPU`) that the kernels here use, typed
 * structurally: its tensors are plain typed arrays in `backend.data`.
 */
export interface CpuBackend {
  data: { get(dataId: object): { values: unknown } };
  makeTensorInfo(shape: number[], dtype: tf.DataType, values: Float32Array): tf.TensorInfo;
  incRef(dataId: object): void;
}

/** The float32 values of a cpu tensor (shared, not copied: read them, never write). */
export function cpuValues(backend: CpuBackend, t: tf.TensorInfo): Float32Array {
  return backend.data.get(t.dataId).values as Float32Array;
}
