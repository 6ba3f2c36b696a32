import * as tf from '@tensorflow/tfjs';
import type { GradientAccumulator, StepResult } from '../core/gradientAccumulator';

/**
 * Adds gradients that are already summed over `count` samples (or micro-batches) to a
 * `GradientAccumulator` as one contribution, through its public `addGradients`.
 *
 * `addGradients(grads, sampleCount)` takes the gradient of a *mean* loss and adds
 * `grads × sampleCount`; passing `sums / count` with `sampleCount = count` therefore adds the sums
 * back, up to one float32 rounding of the divide and multiply (≤ 1 ulp per element), and counts
 * `count` towards the window's divisor. This is the whole interface the parallel reduction needs
 * from the accumulator: a core method `addGradientSums(sums, count)` that adds the sums as they
 * are would remove the round trip.
 *
 * @param sums The summed gradient of each variable (`null`: received none), in `vars` order. Not disposed.
 * @param count A positive integer: samples, tokens or micro-batches the sums are over.
 */
export function addSummedGradients(
  accumulator: GradientAccumulator,
  vars: readonly tf.Variable[],
  sums: (tf.Tensor | null)[],
  count: number,
): StepResult {
  const named: tf.NamedTensorMap = {};
  const means = sums.map((s) => (s === null ? null : tf.tidy(() => tf.div(s, count))));
  vars.forEach((v, i) => {
    const mean = means[i];
    if (mean !== null) named[v.name] = mean;
  });
  try {
    return accumulator.addGradients(named, count);
  } finally {
    tf.dispose(means.filter((m): m is tf.Tensor => m !== null));
  }
}
