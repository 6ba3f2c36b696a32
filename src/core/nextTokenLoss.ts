import * as tf from '@tensorflow/tfjs';
import { argumentError } from './errors';
import { gatherRows } from './gatherRows';
import type { CountedLoss } from './lossGradient';

const OWNER = 'nextTokenLoss';

/**
 * The loss of a causal language model in the form token-exact accumulation needs: the
 * cross-entropy of predicting token t+1 from the logits at position t, summed over the real
 * target tokens, and how many there are. Hand `{ loss, count }` to `GradientAccumulator.step`
 * and the window is divided once by its total count of target tokens, so uneven sequence lengths
 * and a short last window give the gradient of one batch of the same sequences.
 *
 * The count is taken after the shift: a row of n real tokens has n − 1 targets. Counting the
 * mask before the shift adds one token per row (transformers PR #46204).
 *
 * Sparse: the target's log-probability is picked by index (`gatherRows`), so no one-hot
 * `[batch, time, vocabulary]` label tensor is ever made. Note: tfjs-layers'
 * `sparseCategoricalCrossentropy` builds that one-hot internally.
 *
 * @param logits `[batch, time, vocabulary]`, float32, as the model computes them from `tokens`.
 * @param tokens `[batch, time]`, int32: the same token ids the model read.
 * @param mask `[batch, time]`, 1 for a real token and 0 for padding (any numeric dtype), or
 *   null when every token is real. Only the targets' entries (`mask[:, 1:]`) count.
 * @returns The summed loss (a float32 scalar) and the target count (a float32 scalar).
 */
export function nextTokenLoss(logits: tf.Tensor, tokens: tf.Tensor, mask: tf.Tensor | null = null): CountedLoss {
  if (!(logits instanceof tf.Tensor) || logits.rank !== 3 || logits.dtype !== 'float32') {
    throw argumentError(OWNER, 'logits', 'a float32 tensor [batch, time, vocabulary]', logits);
  }
  const [batch, time, vocabulary] = logits.shape;
  if (!(tokens instanceof tf.Tensor) || tokens.dtype !== 'int32' || tokens.rank !== 2 || tokens.shape[0] !== batch || tokens.shape[1] !== time) {
    throw argumentError(OWNER, 'tokens', `an int32 tensor [${batch}, ${time}] (the logits' batch and time)`, tokens);
  }
  if (time < 2) throw argumentError(OWNER, 'logits', 'a tensor with at least 2 positions (one input, one target)', logits);
  if (mask !== null && (!(mask instanceof tf.Tensor) || mask.rank !== 2 || mask.shape[0] !== batch || mask.shape[1] !== time)) {
    throw argumentError(OWNER, 'mask', `null or a tensor [${batch}, ${time}], 1 for real tokens and 0 for padding`, mask);
  }
  return tf.tidy(() => {
    const rows = batch * (time - 1);
    // The shift: positions 0..T-2 predict tokens 1..T-1.
    const predictions = tf.reshape(tf.slice(logits, [0, 0, 0], [batch, time - 1, vocabulary]), [rows, vocabulary]);
    const targets = tf.reshape(tf.slice(tokens, [0, 1], [batch, time - 1]), [rows]);
    const logProbabilities = tf.reshape(tf.logSoftmax(predictions), [rows * vocabulary]);
    const at = tf.add(tf.mul(tf.range(0, rows, 1, 'int32'), tf.scalar(vocabulary, 'int32')), targets) as tf.Tensor1D;
    const targetLogProbability = gatherRows(logProbabilities, at);
    const weights = mask === null ? tf.ones([rows]) : tf.cast(tf.reshape(tf.slice(mask, [0, 1], [batch, time - 1]), [rows]), 'float32');
    return {
      loss: tf.neg(tf.sum(tf.mul(targetLogProbability, weights))) as tf.Scalar,
      count: tf.sum(weights) as tf.Scalar,
    };
  });
}
