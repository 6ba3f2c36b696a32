import * as tf from '@tensorflow/tfjs';

/**
 * `tf.tidy` for results that hold nulls beside tensors (a gradient per variable, null where a
 * variable has none). tfjs walks such containers and skips the nulls at run time; only its
 * `TensorContainer` type refuses them.
 */
export function tidy<T>(fn: () => T): T {
  return tf.tidy(fn as unknown as () => tf.TensorContainer) as unknown as T;
}
