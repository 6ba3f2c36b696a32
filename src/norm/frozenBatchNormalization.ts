import * as tf from '@tensorflow/tfjs';
import type { LayerArgs } from '@tensorflow/tfjs-layers/dist/engine/topology';
import { argumentError } from '../errors';
import {
  channelBroadcastShape,
  checkAxisArgument,
  checkBoolean,
  checkEpsilon,
  reductionAxes,
  resolveChannelAxis,
} from './common';

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
 * first with {@link calibrateFrozenBatchNorm}.
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
  /** Set by calibrateFrozenBatchNorm for one forward pass. */
  private calibrating = false;

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
    const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as tf.Shape;
    const axis = resolveChannelAxis(OWNER, this.axis, shape.length);
    const channels = shape[axis];
    if (channels == null) {
      throw argumentError(OWNER, 'input shape', `a known channel dimension at axis ${axis}`, `[${shape.join(', ')}]`);
    }
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
      if (this.calibrating) {
        // One pass over a calibration set: its statistics become the frozen ones.
        const { mean, variance } = tf.moments(x, reductionAxes(x.rank, axis));
        this.movingMean!.write(mean);
        this.movingVariance!.write(variance);
      }
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

  /** @internal Used by calibrateFrozenBatchNorm. */
  setCalibrating(on: boolean): void {
    this.calibrating = on;
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

/**
 * Sets the frozen statistics of every {@link FrozenBatchNormalization} in `model` to the
 * population statistics of its input over `xs`, in one forward pass: each layer sees the output
 * of the already-calibrated layers before it. Use it before training from scratch (a
 * data-dependent initialization), or to refresh statistics after training ("precise BN").
 *
 * @param model A model containing FrozenBatchNormalization layers (others are left alone).
 * @param xs A calibration batch, e.g. a few hundred training samples. It is processed whole.
 * @returns The number of layers calibrated.
 */
export function calibrateFrozenBatchNorm(model: tf.LayersModel, xs: tf.Tensor): number {
  if (!(model instanceof tf.LayersModel)) {
    throw argumentError('calibrateFrozenBatchNorm', 'model', 'a tf.LayersModel', model);
  }
  if (!(xs instanceof tf.Tensor) || xs.shape[0] < 2) {
    throw argumentError('calibrateFrozenBatchNorm', 'xs', 'a tensor batch of at least 2 samples', xs);
  }
  const layers = model.layers.filter((l): l is FrozenBatchNormalization => l instanceof FrozenBatchNormalization);
  layers.forEach((l) => l.setCalibrating(true));
  try {
    tf.tidy(() => {
      model.apply(xs, { training: false });
    });
  } finally {
    layers.forEach((l) => l.setCalibrating(false));
  }
  return layers.length;
}

/** Factory in the `tf.layers` style. */
export function frozenBatchNormalization(args: FrozenBatchNormalizationArgs = {}): FrozenBatchNormalization {
  return new FrozenBatchNormalization(args);
}
