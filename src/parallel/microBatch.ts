import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger, verbatim } from '../core/errors';
import type { TransferableTensor } from './protocol';

/** A micro-batch for a worker: tensors (copied out of tfjs), or typed arrays plus shapes (transferred). */
export interface ParallelMicroBatch {
  xs: tf.Tensor | TransferableTensor;
  ys: tf.Tensor | TransferableTensor;
}

/** A checked micro-batch, ready to post: the buffers to transfer and the bytes they hold. */
export interface CheckedMicroBatch {
  xs: TransferableTensor;
  ys: TransferableTensor;
  transfer: ArrayBuffer[];
  bytes: number;
}

/**
 * Checks a micro-batch against the model's input shape and turns it into transferable arrays.
 *
 * A typed array that owns its whole `ArrayBuffer` is transferred as it is (the caller's array is
 * detached afterwards, which is what makes it cheap); a view into a larger or shared buffer is
 * copied first, so that transferring it cannot detach other data.
 */
export function checkMicroBatch(owner: string, batch: unknown, model: tf.LayersModel): CheckedMicroBatch {
  if (batch === null || typeof batch !== 'object') {
    throw argumentError(owner, 'batch', 'an object { xs, ys } of tensors or { values, shape } typed arrays', batch);
  }
  const { xs, ys } = batch as { xs?: unknown; ys?: unknown };
  const x = toTransferable(owner, 'batch.xs', xs);
  const y = toTransferable(owner, 'batch.ys', ys);
  const inputShape = model.inputs[0].shape;
  const fits = x.tensor.shape.length === inputShape.length && inputShape.every((d, i) => i === 0 || d === null || d === x.tensor.shape[i]);
  if (!fits) {
    throw argumentError(owner, 'batch.xs', `a batch of the model's input shape [${inputShape.map((d) => d ?? 'batch').join(', ')}]`, verbatim(`shape [${x.tensor.shape.join(', ')}]`));
  }
  if (x.tensor.shape[0] === 0) throw argumentError(owner, 'batch.xs', 'a non-empty batch', verbatim('a batch of 0 samples'));
  if (y.tensor.shape[0] !== x.tensor.shape[0]) {
    throw argumentError(owner, 'batch.ys', `a batch of the same size as xs (${x.tensor.shape[0]})`, verbatim(`shape [${y.tensor.shape.join(', ')}]`));
  }
  const transfer = [x.transfer, y.transfer].filter((b): b is ArrayBuffer => b !== null);
  return { xs: x.tensor, ys: y.tensor, transfer, bytes: x.tensor.values.byteLength + y.tensor.values.byteLength };
}

function toTransferable(owner: string, name: string, value: unknown): { tensor: TransferableTensor; transfer: ArrayBuffer | null } {
  if (value instanceof tf.Tensor) {
    if (value.isDisposed) throw argumentError(owner, name, 'a live tensor', verbatim('a disposed tensor'));
    if (value.dtype !== 'float32' && value.dtype !== 'int32') throw argumentError(owner, name, 'a float32 or int32 tensor', verbatim(`a ${value.dtype} tensor`));
    const data = value.dataSync();
    const values = value.dtype === 'int32' ? Int32Array.from(data as Int32Array) : Float32Array.from(data as Float32Array);
    return { tensor: { values, shape: [...value.shape] }, transfer: values.buffer as ArrayBuffer };
  }
  const t = value as Partial<TransferableTensor> | null;
  const accepted = 'a tf.Tensor or { values: Float32Array | Int32Array, shape } whose shape has values.length elements';
  if (t === null || typeof t !== 'object' || !(t.values instanceof Float32Array || t.values instanceof Int32Array) || !Array.isArray(t.shape)) {
    throw argumentError(owner, name, accepted, value);
  }
  if (t.shape.length === 0 || !t.shape.every((d) => isPositiveInteger(d) || d === 0) || t.shape.reduce((a, b) => a * b, 1) !== t.values.length) {
    throw argumentError(owner, name, accepted, verbatim(`shape [${t.shape.join(', ')}] with ${t.values.length} values`));
  }
  const whole = t.values.buffer instanceof ArrayBuffer && t.values.byteOffset === 0 && t.values.byteLength === t.values.buffer.byteLength;
  const values = whole ? t.values : t.values.slice();
  return { tensor: { values, shape: [...t.shape] }, transfer: values.buffer as ArrayBuffer };
}
