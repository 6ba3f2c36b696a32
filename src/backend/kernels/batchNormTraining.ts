import * as tf from '@tensorflow/tfjs';
import { BATCH_NORM_GRAD, BatchNormGradAttrs, perChannel } from './batchNormGrad';

/**
 * BatchNormalization's training step as one differentiated op.
 *
 * In training, tfjs-layers' BatchNormalization normalizes with the batch's own moments
 * (`tf.moments`, then `tf.batchNorm`). The tape records every op of `tf.moments`, so the
 * backward pass runs the gradient of each of them on full-size tensors (a mean's broadcast, a
 * square's, a difference's, and the adds that join them with `tf.batchNorm`'s own), about eight
 * passes over the activations per layer and step, on top of `tf.batchNorm`'s gradient.
 * Differentiated as one op, the input gradient has a closed form that needs the same two
 * per-channel sums as `tf.batchNorm`'s and one more pass (see batchNormGrad.ts, `training`):
 *
 *     dx = γ·s·(dy − Σdy/M − (x − μ)·s²·Σdy(x − μ)/M),   s = 1/sqrt(σ² + ε)
 *
 * The forward pass runs the same tfjs ops as tfjs-layers (`tf.moments`, then `tf.batchNorm`),
 * so the output and the moving statistics are tfjs's, bit for bit; the gradients are the same
 * values up to rounding (the sums are in float64).
 */

/**
 * Whether {@link batchNormTraining} can run fused here: the kernel on this backend, and γ and β
 * of shape [C] (the custom gradient hands back the kernel's per-channel sums as they are).
 */
export function fusedTrainingAvailable(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor): boolean {
  const c = x.shape[x.rank - 1];
  const vector = (t: tf.Tensor) => t.rank === 1 && perChannel(t, c);
  return x.dtype === 'float32' && x.rank >= 2 && x.rank <= 4 && vector(gamma) && vector(beta) && tf.getKernel(BATCH_NORM_GRAD, tf.getBackend()) !== undefined;
}

/**
 * Normalizes `x` over every axis but the last with the batch's moments, then scales by `gamma`
 * and shifts by `beta`, as tfjs-layers does in training; `withMoments` gets the batch mean and
 * variance (for the moving statistics) while they exist. The gradients of `x`, `gamma` and `beta`
 * come from one fused kernel. Check {@link fusedTrainingAvailable} first.
 */
export function batchNormTraining(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, epsilon: number, withMoments: (mean: tf.Tensor, variance: tf.Tensor) => void): tf.Tensor {
  const axes = Array.from({ length: x.rank - 1 }, (_, i) => i);
  const forward = (xi: tf.Tensor, g: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
    const { mean, variance } = tf.moments(xi, axes);
    // Untaped here: the moving statistics are no part of the gradient, as in tfjs-layers.
    withMoments(mean, variance);
    save([xi, mean, variance, g]);
    return {
      value: tf.batchNorm(xi, mean, variance, b, g, epsilon),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [xs, m, v, scale] = saved;
        const attrs: BatchNormGradAttrs = { varianceEpsilon: epsilon, training: true };
        const [dx, dmean, dvariance, dscale, doffset] = tf.engine().runKernel(BATCH_NORM_GRAD, { x: xs, dy, mean: m, variance: v, scale }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor[];
        // The moments' own gradients are inside dx already.
        tf.dispose([dmean, dvariance]);
        return [dx, dscale, doffset];
      },
    };
  };
  return tf.customGrad(forward as unknown as Parameters<typeof tf.customGrad>[0])(x, gamma, beta) as tf.Tensor;
}
