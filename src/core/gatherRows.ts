import * as tf from '@tensorflow/tfjs';
import { argumentError } from './errors';

const OWNER = 'gatherRows';

/**
 * `tf.gather(table, indices)` along axis 0, with a gradient that works on every tfjs backend:
 * the rows of `dy` scattered back with `tf.scatterND`, which sums the rows of repeated indices.
 *
 * Why not `tf.gather` itself: its gradient is an `UnsortedSegmentSum`, a kernel the wasm
 * backend does not have (tfjs 4.22), so an embedding lookup or a sparse loss built on
 * `tf.gather` trains on `cpu` and fails on `wasm` with "Kernel 'UnsortedSegmentSum' not
 * registered". Nothing is saved for the backward pass but the indices.
 *
 * @param table Any float32 tensor of rank >= 1; rows are taken along its first axis.
 * @param indices An int32 tensor of rank 1, each in [0, table.shape[0]).
 * @returns `[indices.length, ...table.shape.slice(1)]`.
 */
export function gatherRows(table: tf.Tensor, indices: tf.Tensor1D): tf.Tensor {
  if (!(table instanceof tf.Tensor) || table.rank < 1 || table.dtype !== 'float32') {
    throw argumentError(OWNER, 'table', 'a float32 tf.Tensor of rank >= 1', table);
  }
  if (!(indices instanceof tf.Tensor) || indices.rank !== 1 || indices.dtype !== 'int32') {
    throw argumentError(OWNER, 'indices', 'an int32 tf.Tensor of rank 1', indices);
  }
  const lookup = tf.customGrad((...args) => {
    const [t, save] = args as [tf.Tensor, tf.GradSaveFunc];
    // The indices are saved, not captured: a tensor made inside a loss function is disposed
    // when the forward pass ends, before the backward pass reads it.
    save([indices]);
    return {
      value: tf.gather(t, indices),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => tf.scatterND(tf.expandDims(saved[0], 1), dy as tf.Tensor, t.shape),
    };
  });
  return lookup(table);
}
