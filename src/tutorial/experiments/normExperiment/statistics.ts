import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger } from '../../../core/errors';

/** How far micro-batch statistics are from the population's at one normalization layer. */
export interface StatisticsDeviation {
  /** Index of the layer in `model.layers`. */
  layer: number;
  /** Values each per-channel statistic averages: microBatchSize x spatial positions. */
  valuesPerStatistic: number;
  /** Mean over micro-batches and channels of |mu_B - mu| / sigma (Ioffe's |d|). */
  meanShift: number;
  /** Mean over micro-batches and channels of |sigma_B / sigma - 1| (Ioffe's |r - 1|). */
  scaleShift: number;
}

/**
 * Measures, at every BatchNormalization or BatchRenormalization layer of a sequential model, how
 * far the statistics of micro-batches of `microBatchSize` samples are from the statistics of
 * the whole of `xs` (the population, here): the noise that training-mode batch normalization
 * puts into every forward pass. A convolution layer's statistic averages `microBatchSize` x
 * height x width values, a dense layer's only `microBatchSize`: this is why the effect of small
 * micro-batches is much weaker in a CNN than in an MLP.
 *
 * @param model A `tf.Sequential`; the layers before each measured layer run in inference mode.
 * @param xs Samples, e.g. a few hundred training images; whole micro-batches of them are used.
 * @param microBatchSize Samples per micro-batch.
 */
export function batchStatisticsDeviation(model: tf.Sequential, xs: tf.Tensor, microBatchSize: number): StatisticsDeviation[] {
  const owner = 'batchStatisticsDeviation';
  if (!(model instanceof tf.Sequential)) throw argumentError(owner, 'model', 'a tf.Sequential', model);
  if (!isPositiveInteger(microBatchSize) || !(xs instanceof tf.Tensor) || xs.shape[0] < 2 * microBatchSize) {
    throw argumentError(owner, 'microBatchSize', `a positive integer, at most half the samples in xs (${xs?.shape?.[0]})`, microBatchSize);
  }
  const found: StatisticsDeviation[] = [];
  tf.tidy(() => {
    let h = xs;
    model.layers.forEach((layer, index) => {
      const name = layer.getClassName();
      if (name === 'BatchNormalization' || name === 'BatchRenormalization') {
        const epsilon = (layer as unknown as { epsilon: number }).epsilon;
        const channels = h.shape[h.rank - 1];
        const spatial = h.shape.slice(1, -1) as number[];
        const positions = spatial.reduce((a, b) => a * b, 1);
        const groups = Math.floor(h.shape[0] / microBatchSize);
        const population = tf.moments(h, [...Array(h.rank - 1).keys()]);
        // [groups, microBatchSize * positions, channels]: one row of statistics per micro-batch.
        const grouped = tf.reshape(h.slice(0, groups * microBatchSize), [groups, microBatchSize * positions, channels]);
        const micro = tf.moments(grouped, 1);
        const sigma = tf.sqrt(tf.add(population.variance, epsilon));
        const meanShift = tf.mean(tf.div(tf.abs(tf.sub(micro.mean, population.mean)), sigma));
        const scaleShift = tf.mean(tf.abs(tf.sub(tf.div(tf.sqrt(tf.add(micro.variance, epsilon)), sigma), 1)));
        found.push({ layer: index, valuesPerStatistic: microBatchSize * positions, meanShift: meanShift.dataSync()[0], scaleShift: scaleShift.dataSync()[0] });
      }
      h = layer.apply(h, { training: false }) as tf.Tensor;
    });
  });
  return found;
}
