import * as tf from '@tensorflow/tfjs';

/**
 * The pure tensor math of gradient accumulation. Nothing here owns state or touches a Variable:
 * `GradientAccumulator` and `AccumulatingOptimizer` keep the state and call these functions
 * inside `tf.tidy`, and the tests check them directly.
 */

/**
 * Adds one micro-batch's gradient into a running sum: `sum + weight * gradient`.
 *
 * A missing gradient (the variable did not influence this micro-batch's loss) adds nothing.
 * A weight of 1 skips the multiply, because that is the common case and the multiply would be
 * a full extra pass over the parameters on every micro-step.
 */
export function addWeighted(sum: tf.Tensor, gradient: tf.Tensor | null | undefined, weight: number): tf.Tensor {
  if (gradient == null) return sum.clone();
  return weight === 1 ? tf.add(sum, gradient) : tf.add(sum, tf.mul(gradient, weight));
}

/**
 * Turns summed gradients into the gradient of the mean loss over the window.
 *
 * Dividing once at the end, by the weight actually seen, is what makes uneven micro-batches and
 * a short last window exact. For a full window of equal micro-batches it equals the usual rule
 * of scaling every micro-batch loss by `1 / accumulationSteps`.
 */
export function averageGradients(sums: tf.Tensor[], totalWeight: number): tf.Tensor[] {
  if (!(totalWeight > 0)) throw new Error(`averageGradients: totalWeight must be > 0; got ${totalWeight}.`);
  return sums.map((s) => tf.div(s, totalWeight));
}

/** The global L2 norm of a list of tensors: the norm of all their elements taken together. */
export function globalNorm(tensors: tf.Tensor[]): tf.Scalar {
  return tf.tidy(() => {
    if (tensors.length === 0) return tf.scalar(0);
    const squares = tensors.map((t) => tf.sum(tf.square(t)));
    return tf.sqrt(tf.addN(squares)) as tf.Scalar;
  });
}

/**
 * Scales the tensors so that their global norm is at most `clipNorm`, as
 * `torch.nn.utils.clip_grad_norm_` and `optax.clip_by_global_norm` do.
 *
 * Note: the factor is `clipNorm / max(norm, clipNorm)` with no epsilon, so a gradient already
 * inside the ball is returned unchanged, bit for bit.
 *
 * @returns The clipped tensors and the norm they had before clipping.
 */
export function clipByGlobalNorm(tensors: tf.Tensor[], clipNorm: number): { clipped: tf.Tensor[]; norm: tf.Scalar } {
  if (!(clipNorm > 0) || !Number.isFinite(clipNorm)) {
    throw new Error(`clipByGlobalNorm: clipNorm must be a finite number > 0; got ${clipNorm}.`);
  }
  const norm = globalNorm(tensors);
  const clipped = tf.tidy(() => {
    const factor = tf.div(clipNorm, tf.maximum(norm, clipNorm));
    return tensors.map((t) => tf.mul(t, factor));
  });
  return { clipped, norm };
}
