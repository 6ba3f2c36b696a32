import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger } from '../../core/errors';

/**
 * Causal multi-head self-attention (Vaswani et al. 2017, as in GPT-2), the pure part: from the
 * queries, keys and values of every position to each position's mix of the values of the
 * positions up to it. The projections around it are the model's layers.
 */

/**
 * The additive mask of causal attention, `[time, time]`: 0 where a query may look (the key is
 * at or before it), −1e9 where it may not. Note: a large finite number rather than −∞, as
 * PyTorch's `masked_fill(-inf)` would use, so that the softmax of a fully masked row (none
 * occur here) gives no NaN; after the softmax both are exactly 0.
 */
export function causalMask(time: number): tf.Tensor2D {
  if (!isPositiveInteger(time)) throw argumentError('causalMask', 'time', 'a positive integer', time);
  return tf.tidy(() => {
    const positions = tf.range(0, time, 1, 'int32');
    const future = tf.greater(tf.expandDims(positions, 0), tf.expandDims(positions, 1));
    return tf.where(future, tf.fill([time, time], -1e9), tf.zeros([time, time])) as tf.Tensor2D;
  });
}

/**
 * `softmax(q kᵀ / √d + mask) v` for every head, with the heads split from and merged back into
 * the channels.
 *
 * @param qkv `[batch, time, 3 · width]`: queries, keys and values side by side, each `width`
 *   channels that the `heads` heads share equally.
 * @param heads Heads; must divide `width`.
 * @returns `[batch, time, width]`, the heads' outputs side by side.
 */
export function causalSelfAttention(qkv: tf.Tensor, heads: number): tf.Tensor3D {
  const owner = 'causalSelfAttention';
  if (!(qkv instanceof tf.Tensor) || qkv.rank !== 3 || (qkv.shape[2] as number) % 3 !== 0) {
    throw argumentError(owner, 'qkv', 'a tensor [batch, time, 3 · width]', qkv);
  }
  const [batch, time, threeWidth] = qkv.shape as [number, number, number];
  const width = threeWidth / 3;
  if (!isPositiveInteger(heads) || width % heads !== 0) throw argumentError(owner, 'heads', `a positive divisor of the width (${width})`, heads);
  const depth = width / heads;
  return tf.tidy(() => {
    // [batch, time, width] -> [batch, heads, time, depth]
    const split = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [batch, time, heads, depth]), [0, 2, 1, 3]);
    const [q, k, v] = tf.split(qkv, 3, 2).map(split) as [tf.Tensor, tf.Tensor, tf.Tensor];
    const scores = tf.add(tf.div(tf.matMul(q, k, false, true), Math.sqrt(depth)), causalMask(time));
    const mixed = tf.matMul(tf.softmax(scores), v);
    return tf.reshape(tf.transpose(mixed, [0, 2, 1, 3]), [batch, time, width]) as tf.Tensor3D;
  });
}
