import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger, verbatim } from '../core/errors';
import type { TransferableTensor } from './protocol';

/** One tensor of a micro-batch: a tf.Tensor (copied out of tfjs), or a typed array plus its shape (transferred). */
export type MicroBatchTensor = tf.Tensor | TransferableTensor;

/** A micro-batch for a worker. */
export interface ParallelMicroBatch {
  /** The inputs: one tensor, or an array of one per model input, in `model.inputs` order. */
  xs: MicroBatchTensor | MicroBatchTensor[];
  /**
   * The targets: one tensor, or an array of one per model output, in `model.outputs` order. A
   * loss by name is applied to each output and summed; a loss from a module receives the arrays.
   */
  ys: MicroBatchTensor | MicroBatchTensor[];
}

/** A checked micro-batch, ready to post: one array per model input and output, the buffers to transfer and the bytes they hold. */
export interface CheckedMicroBatch {
  xs: TransferableTensor[];
  ys: TransferableTensor[];
  /** The micro-batch's samples (the first dimension every tensor shares). */
  samples: number;
  transfer: ArrayBuffer[];
  bytes: number;
}

/**
 * Checks a micro-batch against the model's inputs and outputs and turns it into transferable
 * arrays: one tensor per input (of its shape) and one per output, all of one batch size.
 *
 * A typed array that owns its whole `ArrayBuffer` is transferred as it is (the caller's array is
 * detached afterwards, which is what makes it cheap); a view into a larger or shared buffer is
 * copied first, so that transferring it cannot detach other data. Nothing is transferred before
 * every tensor passed its check.
 */
export function checkMicroBatch(owner: string, batch: unknown, model: tf.LayersModel): CheckedMicroBatch {
  if (batch === null || typeof batch !== 'object') {
    throw argumentError(owner, 'batch', 'an object { xs, ys } of tensors or { values, shape } typed arrays', batch);
  }
  const { xs, ys } = batch as { xs?: unknown; ys?: unknown };
  const x = tensorsFor(owner, 'batch.xs', xs, namesOf(model.inputs, model.inputNames), 'input');
  const y = tensorsFor(owner, 'batch.ys', ys, namesOf(model.outputs, model.outputNames), 'output');
  x.forEach(({ tensor }, k) => {
    const inputShape = model.inputs[k].shape;
    const fits = tensor.shape.length === inputShape.length && inputShape.every((d, i) => i === 0 || d === null || d === tensor.shape[i]);
    if (!fits) {
      const input = model.inputs.length === 1 ? "the model's input shape" : `the shape of model input ${k} ("${namesOf(model.inputs, model.inputNames)[k]}")`;
      throw argumentError(owner, itemName('batch.xs', k, x.length, xs), `a batch of ${input} [${inputShape.map((d) => d ?? 'batch').join(', ')}]`, verbatim(`shape [${tensor.shape.join(', ')}]`));
    }
  });
  const samples = x[0].tensor.shape[0];
  if (samples === 0) throw argumentError(owner, 'batch.xs', 'a non-empty batch', verbatim('a batch of 0 samples'));
  for (const [name, list, given] of [['batch.xs', x, xs], ['batch.ys', y, ys]] as const) {
    list.forEach(({ tensor }, k) => {
      if (tensor.shape[0] !== samples) {
        throw argumentError(owner, itemName(name, k, list.length, given), `a batch of the same size as ${name === 'batch.xs' ? 'the first input' : 'xs'} (${samples})`, verbatim(`shape [${tensor.shape.join(', ')}]`));
      }
    });
  }
  const all = [...x, ...y];
  // A tensor passed twice (the same typed array as xs and ys, say) is transferred once.
  const transfer = [...new Set(all.map((t) => t.transfer).filter((b): b is ArrayBuffer => b !== null))];
  return { xs: x.map((t) => t.tensor), ys: y.map((t) => t.tensor), samples, transfer, bytes: all.reduce((n, t) => n + t.tensor.values.byteLength, 0) };
}

/**
 * In a worker, a micro-batch's arrays as tensors, and as the model and the loss take them: one
 * tensor for a single input or output, an array for several.
 */
export function fromTransferable(data: TransferableTensor | TransferableTensor[]): { tensors: tf.Tensor[]; value: tf.Tensor | tf.Tensor[] } {
  const tensors = (Array.isArray(data) ? data : [data]).map((t) => tf.tensor(t.values, t.shape));
  return { tensors, value: tensors.length === 1 ? tensors[0] : tensors };
}

/** The checked tensors of `xs` or `ys`: one, or an array with one per model input or output. */
function tensorsFor(owner: string, name: string, value: unknown, names: string[], what: 'input' | 'output') {
  if (!Array.isArray(value)) {
    if (names.length === 1) return [toTransferable(owner, name, value)];
    throw argumentError(owner, name, `an array of ${names.length} tensors, one per model ${what} (${names.map((n) => `"${n}"`).join(', ')})`, value);
  }
  if (value.length !== names.length) {
    throw argumentError(owner, name, `${names.length === 1 ? 'one tensor, or an array of 1' : `an array of ${names.length} tensors`}, one per model ${what} (${names.map((n) => `"${n}"`).join(', ')})`, value);
  }
  return value.map((item, k) => toTransferable(owner, `${name}[${k}]`, item));
}

/** The names of a model's inputs or outputs (a Sequential fills `inputNames` only once built by a fit: then its tensors' names). */
function namesOf(tensors: tf.SymbolicTensor[], names: string[] | undefined): string[] {
  return tensors.map((t, k) => names?.[k] ?? t.name);
}

/** `batch.xs` for a single tensor, `batch.xs[k]` for an item of an array. */
function itemName(name: string, k: number, count: number, given: unknown): string {
  return count === 1 && !Array.isArray(given) ? name : `${name}[${k}]`;
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
