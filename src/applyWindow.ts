import * as tf from '@tensorflow/tfjs';
import { clipByGlobalNorm } from './accumulation';
import { snapshotOptimizer } from './optimizerSnapshot';
import { tidy } from './tidy';

/** What {@link applyWindow} needs: the window's sums and the optimizer that applies them. */
export interface ApplyWindowArgs {
  /** The wrapped optimizer. */
  optimizer: tf.Optimizer;
  /** Every known variable, in the fixed order the optimizer sees them. */
  variables: tf.Variable[];
  /** The window's summed gradient per variable; null for a variable untouched in this window. */
  sums: (tf.Tensor | null)[];
  /** Samples (or units) the window holds: the sums are divided by it. */
  weight: number;
  /** Clip the averaged gradient to this global norm; null for no clipping. */
  clipNorm: number | null;
}

/**
 * Averages the sums, clips them if asked and applies them. If the optimizer throws, its slots,
 * iteration count and the weights are restored before the error is rethrown.
 *
 * @returns The global norm before clipping, or null without clipping.
 */
export function applyWindow({ optimizer, variables: order, sums, weight, clipNorm }: ApplyWindowArgs): number | null {
  const present = sums.filter((s): s is tf.Tensor => s !== null);
  const { gradients, factors } = tidy(() => {
    const averaged = present.map((s) => tf.div(s, weight));
    if (clipNorm === null) return { gradients: averaged, factors: null };
    const { clipped, maxAbs, scaledNorm } = clipByGlobalNorm(averaged, clipNorm);
    return { gradients: clipped, factors: tf.stack([maxAbs, scaledNorm]) };
  });
  let gradientNorm: number | null = null;
  if (factors !== null) {
    const [maxAbs, scaledNorm] = factors.dataSync();
    factors.dispose();
    gradientNorm = maxAbs * scaledNorm; // in float64: finite for every finite gradient
  }
  const named: tf.NamedTensorMap = {};
  let k = 0;
  // Every known variable, in a fixed order: tfjs optimizers keep their slots by position.
  // Untouched ones reach it as null, exactly as optimizer.minimize passes them.
  order.forEach((v, i) => {
    named[v.name] = (sums[i] === null ? null : gradients[k++]) as tf.Tensor;
  });
  const snapshot = snapshotOptimizer(optimizer, order);
  try {
    optimizer.applyGradients(named);
  } catch (error) {
    snapshot.restore();
    throw error;
  } finally {
    tf.dispose(gradients);
  }
  snapshot.release();
  return gradientNorm;
}
