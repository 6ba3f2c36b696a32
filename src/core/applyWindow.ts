import * as tf from '@tensorflow/tfjs';
import { averageGradients, clipByGlobalNorm, scaledGlobalNorm, tidy } from './accumulation';
import { LearningRateSchedule, learningRateOf, setLearningRate } from './learningRate';
import { argumentError } from './errors';
import { snapshotOptimizer } from './optimizerSnapshot';
import type { AccumulatorCore } from './state';

/**
 * The default of `weightDecay.exclude`, here beside the decay it steers: true for a bias or a
 * normalization layer's parameter, by tfjs-layers' variable names (`…/bias`, `…/gamma`,
 * `…/beta`, and the moving statistics).
 */
export function isBiasOrNormalization(variable: tf.Variable): boolean {
  return /\/(bias|gamma|beta|moving_mean|moving_variance)(_\d+)?$/.test(variable.name);
}

/** Decoupled weight decay: `w ← w − learningRate · rate · w` once per applied update. */
export interface WeightDecay {
  /** The decay rate λ (AdamW's `weight_decay`). */
  rate: number;
  /** Variables to leave undecayed (true = excluded). */
  exclude: (variable: tf.Variable) => boolean;
}

/**
 * What the update reads of the accumulator's options (checked, see `CheckedAccumulatorArgs`,
 * which has these), named here so that this file imports nothing of the options' file.
 */
export interface UpdateOptions {
  learningRate: LearningRateSchedule | null;
  skipLargeUpdates: { maxNorm: number | null; factor: number | null; history: number } | null;
}

/** What {@link applyWindow} needs: the window's sums and the optimizer that applies them. */
export interface ApplyWindowArgs {
  /** The wrapped optimizer. */
  optimizer: tf.Optimizer;
  /** Every known variable, in the fixed order the optimizer sees them. */
  variables: tf.Variable[];
  /** The window's summed gradient per variable; null for a variable untouched in this window. */
  sums: (tf.Tensor | null)[];
  /** Samples (or units, or counts) the window holds: the sums are divided by it. */
  weight: number;
  /**
   * The sums are the averages already (divided by `weight · 2^−scale` on the window's last
   * micro-step, see `addContribution`): not divided again, and not disposed here.
   */
  averaged?: boolean;
  /** The sums are held times 2^−scale (the window's scale, see `windowScale`). */
  scale: number;
  /** Clip the averaged gradient to this global norm; null for no clipping. */
  clipNorm: number | null;
  /** Skip the update when the averaged gradient's norm is above this; null never skips. */
  maxNorm: number | null;
  /** Measure the norm even without clipping or a threshold (to keep a history of norms). */
  measureNorm: boolean;
  /** The learning rate to set before the update; null keeps the optimizer's. */
  learningRate: number | null;
  /** Decoupled weight decay, or null. */
  weightDecay: WeightDecay | null;
  /** EMA shadows per variable (null where none) and their decay, or null without EMA. */
  ema: { decay: number; shadows: (tf.Variable | null)[] } | null;
  /** Named in error messages. */
  owner: string;
}

/** What {@link applyWindow} did. */
export interface WindowApplied {
  /** False when the update was skipped for its norm. */
  applied: boolean;
  /** The averaged gradient's global norm before clipping; null unless clipping or skipping needed it. */
  gradientNorm: number | null;
}

/**
 * Averages the sums, skips the update if its norm is too large, clips it if asked, sets the
 * scheduled learning rate, applies it, decays the weights (decoupled) and updates the EMA. If
 * anything throws, the optimizer's slots, iteration count and rate, the weights and the EMA are
 * restored before the error is rethrown. A skipped update never calls the optimizer, so its
 * slots and iteration count stay untouched.
 */
export function applyWindow(args: ApplyWindowArgs): WindowApplied {
  const { optimizer, variables: order, sums, weight, clipNorm, maxNorm } = args;
  const present = sums.filter((s): s is tf.Tensor => s !== null);
  const averaged = args.averaged === true ? present : averageGradients(present, weight, args.scale);
  // The caller's tensors stay the caller's to dispose.
  const release = (ts: tf.Tensor[]) => tf.dispose(args.averaged === true ? ts.filter((t) => !present.includes(t)) : ts);
  let gradientNorm: number | null = null;
  if (clipNorm !== null || maxNorm !== null || args.measureNorm) {
    const factors = tidy(() => {
      const { maxAbs, scaledNorm } = scaledGlobalNorm(averaged);
      return tf.stack([maxAbs, scaledNorm]);
    });
    const [maxAbs, scaledNorm] = factors.dataSync();
    factors.dispose();
    gradientNorm = maxAbs * scaledNorm; // in float64: finite for every finite gradient
  }
  if (maxNorm !== null && (gradientNorm as number) > maxNorm) {
    release(averaged);
    return { applied: false, gradientNorm };
  }
  const gradients = clipNorm === null ? averaged : tidy(() => clipByGlobalNorm(averaged, clipNorm).clipped);
  if (gradients !== averaged) release(averaged);
  const named: tf.NamedTensorMap = {};
  let k = 0;
  // Every known variable, in a fixed order: tfjs optimizers keep their slots by position.
  // Untouched ones reach it as null, exactly as optimizer.minimize passes them.
  order.forEach((v, i) => {
    named[v.name] = (sums[i] === null ? null : gradients[k++]) as tf.Tensor;
  });
  const shadows = args.ema?.shadows.filter((s): s is tf.Variable => s !== null) ?? [];
  const previousRate = learningRateOf(optimizer);
  // The rate is set before the snapshot (SGD replaces a tensor for it) and put back on failure.
  if (args.learningRate !== null) setLearningRate(args.owner, optimizer, args.learningRate);
  const snapshot = snapshotOptimizer(optimizer, [...order, ...shadows]);
  try {
    const decay = args.weightDecay;
    if (decay !== null) {
      // Note: decoupled as in AdamW (Loshchilov & Hutter): the decay is not part of the gradient,
      // so Adam's scaling never touches it, and it runs once per update, never per micro-batch.
      const factor = 1 - (learningRateOf(optimizer) ?? 0) * decay.rate;
      tf.tidy(() => order.forEach((v, i) => {
        if (sums[i] !== null && !decay.exclude(v)) v.assign(tf.mul(v, factor));
      }));
    }
    optimizer.applyGradients(named);
    const ema = args.ema;
    if (ema !== null) {
      tf.tidy(() => order.forEach((v, i) => {
        const shadow = ema.shadows[i];
        if (shadow !== null) shadow.assign(tf.add(tf.mul(shadow, ema.decay), tf.mul(v, 1 - ema.decay)));
      }));
    }
  } catch (error) {
    snapshot.restore();
    if (args.learningRate !== null && previousRate !== null) setLearningRate(args.owner, optimizer, previousRate);
    throw error;
  } finally {
    release(gradients);
  }
  snapshot.release();
  return { applied: true, gradientNorm };
}

/**
 * The learning rate and the skip threshold of the update that closes the window of `core`:
 * the schedule at the number of updates applied so far, and the smaller of `maxNorm` and
 * `factor` × the median of the recent norms (once `history` of them exist).
 */
export function updateSettings(owner: string, options: UpdateOptions, core: AccumulatorCore): { rate: number | null; maxNorm: number | null } {
  const { updateStep } = core.counters;
  const rate = options.learningRate === null ? null : options.learningRate(updateStep);
  if (rate !== null && !(Number.isFinite(rate) && rate >= 0)) {
    throw argumentError(owner, `learningRate (the schedule's value at update step ${updateStep})`, 'a finite number ≥ 0', rate);
  }
  const skip = options.skipLargeUpdates;
  let maxNorm = skip?.maxNorm ?? null;
  if (skip?.factor != null && core.recentNorms.length >= skip.history) {
    const sorted = [...core.recentNorms].sort((a, b) => a - b);
    const median = (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
    maxNorm = Math.min(maxNorm ?? Infinity, skip.factor * median);
  }
  return { rate, maxNorm };
}

/** Adds an applied update's norm to the history the relative skip threshold reads. */
export function recordNorm(core: AccumulatorCore, skip: UpdateOptions['skipLargeUpdates'], norm: number | null): AccumulatorCore {
  if (skip?.factor == null || norm === null) return core;
  return { ...core, recentNorms: [...core.recentNorms, norm].slice(-skip.history) };
}
