import * as tf from '@tensorflow/tfjs';
import type { LayerArgs } from '@tensorflow/tfjs-layers/dist/engine/topology';
import { argumentError } from '../errors';
import {
  channelBroadcastShape,
  checkAxisArgument,
  checkBoolean,
  checkEpsilon,
  reductionAxes,
  resolveChannelAxis, channelsOfInput } from './common';

const OWNER = 'FrozenBatchNormalization';

/** Options of {@link FrozenBatchNormalization}. */
export interface FrozenBatchNormalizationArgs extends LayerArgs {
  /** The channel axis. Default -1 (channels last). */
  axis?: number;
  /** Added to the moving variance before the square root. Default 1e-3 (tfjs BatchNormalization's). */
  epsilon?: number;
  /** Keep an offset `beta`. Default true. */
  center?: boolean;
  /** Keep a scale `gamma`. Default true. */
  scale?: boolean;
  /**
   * Whether `gamma` and `beta` stay trainable while the statistics are frozen. Default true
   * (the usual fine-tuning setup: statistics frozen, affine part trained). With false the layer
   * is a fixed per-channel affine map.
   */
  trainAffine?: boolean;
}

/**
 * Batch normalization whose statistics are frozen: it always normalizes with its moving mean and
 * variance, in training as in inference, and never updates them. The output for a sample then
 * does not depend on the rest of its micro-batch, so accumulation over micro-batches of 1 gives
 * exactly the large-batch gradient.
 *
 * Its weights are those of `tf.layers.batchNormalization`, in the same order (gamma, beta,
 * moving_mean, moving_variance), so `frozen.setWeights(trainedBatchNorm.getWeights())` freezes
 * a trained layer's statistics. For a model trained from scratch, set the statistics from data
 * first with {@link recomputeBatchNormStatistics}.
 *
 * Note: tfjs's own BatchNormalization uses the micro-batch's statistics whenever `training` is
 * true, even with `trainable: false` (Keras 2 froze them in that case); this layer is the way to
 * get frozen statistics in tfjs.
 */
export class FrozenBatchNormalization extends tf.layers.Layer {
  /** Registered name for tfjs serialization. */
  static className = 'FrozenBatchNormalization';
  readonly axis: number;
  readonly epsilon: number;
  readonly center: boolean;
  readonly scale: boolean;
  readonly trainAffine: boolean;
  private gamma: tf.LayerVariable | null = null;
  private beta: tf.LayerVariable | null = null;
  private movingMean: tf.LayerVariable | null = null;
  private movingVariance: tf.LayerVariable | null = null;

  constructor(args: FrozenBatchNormalizationArgs = {}) {
    super(args);
    this.axis = checkAxisArgument(OWNER, args.axis ?? -1);
    this.epsilon = checkEpsilon(OWNER, args.epsilon ?? 1e-3);
    this.center = checkBoolean(OWNER, 'center', args.center, true);
    this.scale = checkBoolean(OWNER, 'scale', args.scale, true);
    this.trainAffine = checkBoolean(OWNER, 'trainAffine', args.trainAffine, true);
    this.supportsMasking = true;
  }

  override build(inputShape: tf.Shape | tf.Shape[]): void {
    const channels = channelsOfInput(OWNER, this.axis, inputShape);
    if (this.scale) this.gamma = this.addWeight('gamma', [channels], 'float32', tf.initializers.ones(), undefined, this.trainAffine);
    if (this.center) this.beta = this.addWeight('beta', [channels], 'float32', tf.initializers.zeros(), undefined, this.trainAffine);
    this.movingMean = this.addWeight('moving_mean', [channels], 'float32', tf.initializers.zeros(), undefined, false);
    this.movingVariance = this.addWeight('moving_variance', [channels], 'float32', tf.initializers.ones(), undefined, false);
    this.built = true;
  }

  override call(inputs: tf.Tensor | tf.Tensor[]): tf.Tensor {
    const x = Array.isArray(inputs) ? inputs[0] : inputs;
    return tf.tidy(() => {
      const axis = resolveChannelAxis(OWNER, this.axis, x.rank);
      const shape = channelBroadcastShape(x.rank, axis, x.shape[axis]);
      const mean = tf.reshape(this.movingMean!.read(), shape);
      const variance = tf.reshape(this.movingVariance!.read(), shape);
      const gamma = this.gamma ? tf.reshape(this.gamma.read(), shape) : undefined;
      const beta = this.beta ? tf.reshape(this.beta.read(), shape) : undefined;
      return normalizeWith(x, mean, variance, gamma, beta, this.epsilon);
    });
  }

  override computeOutputShape(inputShape: tf.Shape | tf.Shape[]): tf.Shape | tf.Shape[] {
    return inputShape;
  }

  override getConfig(): tf.serialization.ConfigDict {
    return {
      ...super.getConfig(),
      axis: this.axis,
      epsilon: this.epsilon,
      center: this.center,
      scale: this.scale,
      trainAffine: this.trainAffine,
    };
  }
}
tf.serialization.registerClass(FrozenBatchNormalization);

/** `(x - mean) / sqrt(variance + epsilon) * gamma + beta`, all arguments already broadcastable. */
export function normalizeWith(
  x: tf.Tensor,
  mean: tf.Tensor,
  variance: tf.Tensor,
  gamma: tf.Tensor | undefined,
  beta: tf.Tensor | undefined,
  epsilon: number,
): tf.Tensor {
  return tf.tidy(() => {
    // Fold the scale into one per-channel multiplier so the big tensor is touched twice, not four times.
    let multiplier = tf.rsqrt(tf.add(variance, epsilon));
    if (gamma) multiplier = tf.mul(multiplier, gamma);
    let offset = tf.neg(tf.mul(mean, multiplier));
    if (beta) offset = tf.add(offset, beta);
    return tf.add(tf.mul(x, multiplier), offset);
  });
}

/** The layer classes whose moving statistics {@link recomputeBatchNormStatistics} sets. */
const STATISTICS_LAYERS = ['BatchNormalization', 'FrozenBatchNormalization', 'BatchRenormalization'];

/**
 * Sets the moving statistics of every batch-normalization layer of a sequential model
 * (tfjs `BatchNormalization`, {@link FrozenBatchNormalization}, `BatchRenormalization`) to the
 * population statistics of its input over `xs`, in one forward pass through the layers in
 * order: each layer sees the output of the already-recomputed layers before it.
 *
 * Uses: the statistics of a FrozenBatchNormalization before training from scratch (a
 * data-dependent initialization); or, after training, statistics estimated from a large batch
 * instead of a moving average of micro-batch statistics ("precise BN", Wu & Johnson 2021),
 * which separates the damage done by poor moving averages from the damage done by training on
 * micro-batch statistics.
 *
 * @param model A `tf.Sequential` (its layers must form a chain). Other layers are left alone;
 *   nested models are not entered.
 * @param xs A batch of inputs, processed whole, e.g. a few hundred training samples.
 * @returns The number of layers whose statistics were set.
 */
export function recomputeBatchNormStatistics(model: tf.Sequential, xs: tf.Tensor): number {
  const owner = 'recomputeBatchNormStatistics';
  if (!(model instanceof tf.Sequential)) {
    throw argumentError(owner, 'model', 'a tf.Sequential (a chain of layers)', model);
  }
  if (!(xs instanceof tf.Tensor) || xs.rank < 2 || xs.shape[0] < 2) {
    throw argumentError(owner, 'xs', 'a batch of at least 2 samples', xs);
  }
  let count = 0;
  tf.tidy(() => {
    let h = xs;
    for (const layer of model.layers) {
      if (STATISTICS_LAYERS.includes(layer.getClassName())) {
        const movingMean = layer.weights.find((w) => w.originalName.endsWith('moving_mean'));
        const movingVariance = layer.weights.find((w) => w.originalName.endsWith('moving_variance'));
        const axis = resolveChannelAxis(owner, (layer as unknown as { axis: number }).axis, h.rank);
        if (movingMean && movingVariance) {
          const { mean, variance } = tf.moments(h, reductionAxes(h.rank, axis));
          movingMean.write(mean);
          movingVariance.write(variance);
          count += 1;
        }
      }
      h = layer.apply(h, { training: false }) as tf.Tensor;
    }
  });
  return count;
}

/** Factory in the `tf.layers` style. */
export function frozenBatchNormalization(args: FrozenBatchNormalizationArgs = {}): FrozenBatchNormalization {
  return new FrozenBatchNormalization(args);
}
