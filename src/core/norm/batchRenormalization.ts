import * as tf from '@tensorflow/tfjs';
import type { LayerArgs } from '@tensorflow/tfjs-layers/dist/engine/topology';
import type { Kwargs } from '@tensorflow/tfjs-layers/dist/types';
import { argumentError } from '../errors';
import {
  channelBroadcastShape,
  checkAxisArgument,
  checkBoolean,
  checkEpsilon,
  checkMomentum,
  movingAverageUpdate,
  reductionAxes,
  resolveChannelAxis,
  stopGradient, channelsOfInput } from './common';
import { normalizeWith } from './frozenBatchNormalization';

const OWNER = 'BatchRenormalization';

/** Options of {@link BatchRenormalization}. */
export interface BatchRenormalizationArgs extends LayerArgs {
  /** The channel axis. Default -1 (channels last). */
  axis?: number;
  /**
   * Fraction of the moving statistics kept at each training call. Default 0.99. Every call in
   * training mode is one update, so with accumulation the moving statistics move once per
   * micro-batch, not once per optimizer update.
   */
  momentum?: number;
  /** Added to the variance before the square root. Default 1e-3 (tfjs BatchNormalization's). */
  epsilon?: number;
  /** Learn an offset `beta`. Default true. */
  center?: boolean;
  /** Learn a scale `gamma`. Default true. */
  scale?: boolean;
  /** Final bound on the scale correction r, clipped to [1/rMax, rMax]; >= 1. Default 3 (Ioffe 2017). */
  rMax?: number;
  /** Final bound on the shift correction d, clipped to [-dMax, dMax]; >= 0. Default 5 (Ioffe 2017). */
  dMax?: number;
  /**
   * Training calls during which r is fixed at 1 and d at 0 (plain batch normalization) while the
   * moving statistics settle. Default 0.
   */
  warmupSteps?: number;
  /**
   * Training calls after the warm-up over which the bounds grow linearly from (1, 0) to
   * (rMax, dMax). Default 0 (full bounds straight after the warm-up).
   */
  rampSteps?: number;
}

/**
 * Batch renormalization (Ioffe 2017): batch normalization that corrects each micro-batch's
 * statistics towards the moving ones, so training sees (up to clipping) the same normalization
 * as inference even when micro-batches are small or not i.i.d.
 *
 * In training, with micro-batch mean and standard deviation `mu_B`, `sigma_B` and moving
 * `mu`, `sigma`:
 *
 *     r = clip(sigma_B / sigma, 1/rMax, rMax)      d = clip((mu_B - mu) / sigma, -dMax, dMax)
 *     y = gamma * ((x - mu_B) / sigma_B * r + d) + beta
 *
 * with no gradient through r and d. With r and d unclipped, `y` equals inference-mode batch
 * normalization with the moving statistics. In inference the layer is plain batch
 * normalization with the moving statistics.
 *
 * Clipping schedule: the bounds are (1, 0) for `warmupSteps` training calls, then grow linearly
 * to (`rMax`, `dMax`) over `rampSteps` calls. The paper used 5k warm-up steps and ramps of
 * 20k-35k for runs of ~100k+ steps; the defaults here (0, 0: full bounds from the first call)
 * suit short runs, where the moving statistics, updated from the first call on, settle within
 * ~1/(1 - momentum) calls anyway. The call counter is a weight (`renorm_step`), so it survives
 * save and load.
 *
 * Note: the moving statistics are a moving mean and a moving *variance* (as in tfjs/Keras batch
 * normalization, whose weights this layer shares, plus `renorm_step`); the paper averages the
 * standard deviation instead. Both converge to the same population statistics.
 */
export class BatchRenormalization extends tf.layers.Layer {
  /** Registered name for tfjs serialization. */
  static className = 'BatchRenormalization';
  readonly axis: number;
  readonly momentum: number;
  readonly epsilon: number;
  readonly center: boolean;
  readonly scale: boolean;
  readonly rMax: number;
  readonly dMax: number;
  readonly warmupSteps: number;
  readonly rampSteps: number;
  private gamma: tf.LayerVariable | null = null;
  private beta: tf.LayerVariable | null = null;
  private movingMean: tf.LayerVariable | null = null;
  private movingVariance: tf.LayerVariable | null = null;
  private step: tf.LayerVariable | null = null;

  constructor(args: BatchRenormalizationArgs = {}) {
    super(args);
    this.axis = checkAxisArgument(OWNER, args.axis ?? -1);
    this.momentum = checkMomentum(OWNER, args.momentum ?? 0.99);
    this.epsilon = checkEpsilon(OWNER, args.epsilon ?? 1e-3);
    this.center = checkBoolean(OWNER, 'center', args.center, true);
    this.scale = checkBoolean(OWNER, 'scale', args.scale, true);
    const rMax = args.rMax ?? 3;
    if (typeof rMax !== 'number' || !Number.isFinite(rMax) || rMax < 1) {
      throw argumentError(OWNER, 'rMax', 'a finite number >= 1 (r is clipped to [1/rMax, rMax])', rMax);
    }
    const dMax = args.dMax ?? 5;
    if (typeof dMax !== 'number' || !Number.isFinite(dMax) || dMax < 0) {
      throw argumentError(OWNER, 'dMax', 'a finite number >= 0 (d is clipped to [-dMax, dMax])', dMax);
    }
    for (const [name, v] of [['warmupSteps', args.warmupSteps], ['rampSteps', args.rampSteps]] as const) {
      if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0)) {
        throw argumentError(OWNER, name, 'an integer >= 0 (a number of training calls)', v);
      }
    }
    this.rMax = rMax;
    this.dMax = dMax;
    this.warmupSteps = args.warmupSteps ?? 0;
    this.rampSteps = args.rampSteps ?? 0;
    this.supportsMasking = true;
  }

  override build(inputShape: tf.Shape | tf.Shape[]): void {
    const channels = channelsOfInput(OWNER, this.axis, inputShape);
    if (this.scale) this.gamma = this.addWeight('gamma', [channels], 'float32', tf.initializers.ones(), undefined, true);
    if (this.center) this.beta = this.addWeight('beta', [channels], 'float32', tf.initializers.zeros(), undefined, true);
    this.movingMean = this.addWeight('moving_mean', [channels], 'float32', tf.initializers.zeros(), undefined, false);
    this.movingVariance = this.addWeight('moving_variance', [channels], 'float32', tf.initializers.ones(), undefined, false);
    this.step = this.addWeight('renorm_step', [], 'float32', tf.initializers.zeros(), undefined, false);
    this.built = true;
  }

  override call(inputs: tf.Tensor | tf.Tensor[], kwargs: Kwargs): tf.Tensor {
    const x = Array.isArray(inputs) ? inputs[0] : inputs;
    const training = kwargs?.training === true;
    return tf.tidy(() => {
      const axis = resolveChannelAxis(OWNER, this.axis, x.rank);
      const shape = channelBroadcastShape(x.rank, axis, x.shape[axis]);
      const gamma = this.gamma ? tf.reshape(this.gamma.read(), shape) : undefined;
      const beta = this.beta ? tf.reshape(this.beta.read(), shape) : undefined;
      const movingMean = this.movingMean!.read();
      const movingVariance = this.movingVariance!.read();
      if (!training) {
        return normalizeWith(x, tf.reshape(movingMean, shape), tf.reshape(movingVariance, shape), gamma, beta, this.epsilon);
      }
      const { mean, variance } = tf.moments(x, reductionAxes(x.rank, axis));
      const sigmaB = tf.sqrt(tf.add(variance, this.epsilon));
      const sigma = tf.sqrt(tf.add(movingVariance, this.epsilon));
      const { rMax, dMax } = this.bounds(this.step!.read());
      const r = stopGradient(tf.minimum(tf.maximum(tf.div(sigmaB, sigma), tf.reciprocal(rMax)), rMax));
      const d = stopGradient(tf.minimum(tf.maximum(tf.div(tf.sub(mean, movingMean), sigma), tf.neg(dMax)), dMax));
      // gamma * ((x - mu_B) / sigma_B * r + d) + beta, folded into one multiplier and one offset
      // per channel, so the full-size activation sees one product and one sum.
      let multiplier = tf.reshape(tf.div(r, sigmaB), shape);
      let offset = tf.reshape(tf.sub(d, tf.mul(mean, tf.div(r, sigmaB))), shape);
      if (gamma) {
        multiplier = tf.mul(multiplier, gamma);
        offset = tf.mul(offset, gamma);
      }
      if (beta) offset = tf.add(offset, beta);
      const y = tf.add(tf.mul(x, multiplier), offset);

      this.movingMean!.write(movingAverageUpdate(movingMean, mean, this.momentum));
      this.movingVariance!.write(movingAverageUpdate(movingVariance, variance, this.momentum));
      this.step!.write(tf.add(this.step!.read(), 1));
      return y;
    });
  }

  /** The clipping bounds (rMax, dMax) after `step` training calls, as scalar tensors. */
  private bounds(step: tf.Tensor): { rMax: tf.Tensor; dMax: tf.Tensor } {
    // progress = clip((step - warmup) / ramp, 0, 1); a zero ramp jumps straight to 1 after the warm-up.
    const progress =
      this.rampSteps === 0
        ? tf.cast(tf.greaterEqual(step, this.warmupSteps), 'float32')
        : tf.clipByValue(tf.div(tf.sub(step, this.warmupSteps), this.rampSteps), 0, 1);
    return {
      rMax: tf.add(1, tf.mul(progress, this.rMax - 1)),
      dMax: tf.mul(progress, this.dMax),
    };
  }

  /** The bounds (rMax, dMax) in force for the next training call, read back as numbers. */
  currentBounds(): { rMax: number; dMax: number } {
    return tf.tidy(() => {
      const { rMax, dMax } = this.bounds(this.step!.read());
      return { rMax: rMax.dataSync()[0], dMax: dMax.dataSync()[0] };
    });
  }

  override computeOutputShape(inputShape: tf.Shape | tf.Shape[]): tf.Shape | tf.Shape[] {
    return inputShape;
  }

  override getConfig(): tf.serialization.ConfigDict {
    return {
      ...super.getConfig(),
      axis: this.axis,
      momentum: this.momentum,
      epsilon: this.epsilon,
      center: this.center,
      scale: this.scale,
      rMax: this.rMax,
      dMax: this.dMax,
      warmupSteps: this.warmupSteps,
      rampSteps: this.rampSteps,
    };
  }
}
tf.serialization.registerClass(BatchRenormalization);

/** Factory in the `tf.layers` style. */
export function batchRenormalization(args: BatchRenormalizationArgs = {}): BatchRenormalization {
  return new BatchRenormalization(args);
}
