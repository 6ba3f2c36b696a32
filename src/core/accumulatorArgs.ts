import * as tf from '@tensorflow/tfjs';
import { argumentError, checkKeys, checkOptions, isPositiveFinite, isPositiveInteger, verbatim } from './errors';
import { LearningRateSchedule, learningRateOf } from './learningRate';
import { NON_FINITE_POLICIES, NonFinitePolicy } from './nonFinite';
import { AccumulationSchedule, checkAccumulationSteps } from './schedule';
import { TrainableVariable, checkVarList } from './varList';
import { isBiasOrNormalization } from './applyWindow';
import type { WeightDecay } from './applyWindow';
import type { Averaging, OpenWindow } from './state';

/**
 * The accumulator's options and results: the vocabulary shared by `GradientAccumulator`,
 * `AccumulatingOptimizer` and their tests.
 */

export type { TrainableVariable } from './varList';
export { isBiasOrNormalization } from './applyWindow';
export type { WeightDecay } from './applyWindow';

/** Options of {@link GradientAccumulator}. */
export interface GradientAccumulatorArgs {
  /**
   * The optimizer that applies the accumulated gradient: any `tf.Optimizer` (SGD, momentum,
   * Adam, RMSProp, …). It runs once per window, so its iteration counter, and any learning-rate
   * schedule built on it, counts updates, not micro-batches. Required.
   */
  optimizer: tf.Optimizer;
  /**
   * Micro-batches per update: a positive integer, or a schedule evaluated at the start of every
   * window (see `epochSchedule`). Required.
   */
  accumulationSteps: number | AccumulationSchedule;
  /**
   * The variables to train. Default: at every micro-step, the registered trainable variables,
   * of which those that receive a gradient get an accumulator (so a layer unfrozen later starts
   * training, and one frozen mid-window stops).
   *
   * Note: `optimizer.minimize` also defaults to every registered trainable variable, but
   * allocates optimizer slots for all of them; we allocate accumulators only for the variables
   * that received a gradient (not for a reference copy of the model, say).
   */
  varList?: TrainableVariable[];
  /**
   * How summed gradients are averaged. Default `"per-sample"`.
   *
   * - `"per-sample"`: the window's per-sample losses are summed and the sum is divided by the
   *   number of samples actually seen. Uneven micro-batches and a short last window then give
   *   exactly the gradient of one batch made of the same samples. The sample count comes from a
   *   1-D per-sample loss returned by `lossFn`, or from `sampleCount` passed to `step`; a scalar
   *   loss with no count counts as one unit, which is exact for equal micro-batches.
   * - `"per-micro-batch"`: every micro-batch's mean loss counts once, i.e. each is scaled by
   *   `1 / accumulationSteps` (the textbook rule). Exact only when micro-batches are equal.
   *   `lossFn` must return a scalar.
   */
  averaging?: Averaging;
  /**
   * Clip the accumulated gradient to this global L2 norm just before the update; micro-batch
   * gradients are never clipped on their own. Default: no clipping.
   */
  clipNorm?: number;
  /** What a non-finite loss or gradient does. Default `"error"`. */
  nonFinite?: NonFinitePolicy;
  /**
   * The learning rate of each applied update, from the number of updates applied before it
   * (`warmupCosine`, `stepDecay`, or any function). Set on the wrapped optimizer just before the
   * update; skipped windows never advance it. Default: the optimizer's own, unchanged.
   */
  learningRate?: LearningRateSchedule;
  /**
   * Skip a window whose averaged gradient's global norm is above `maxNorm`, or above `factor`
   * times the median norm of the last `history` applied updates (once that many exist). A
   * skipped window leaves the weights, the optimizer's slots and its iteration count untouched,
   * and is counted in `skippedLargeUpdates`. Default: never skip.
   */
  skipLargeUpdates?: SkipLargeUpdatesArgs;
  /**
   * Decoupled weight decay (AdamW's): `w ← w − learningRate · rate · w`, once per applied
   * update, on the variables that received a gradient and are not excluded. Default: none.
   */
  weightDecay?: WeightDecayArgs;
  /**
   * Keep an exponential moving average of the weights (Polyak averaging), updated only on
   * applied updates: it starts from the weights after the first update (as Keras's `use_ema`
   * and torch's `AveragedModel` do), then `shadow ← decay · shadow + (1 − decay) · w`. Evaluate
   * with it through `withAveragedWeights`; write it into the model with
   * `finalizeAveragedWeights`. Saved by `getState`. Default: none.
   */
  ema?: { decay: number };
}

/** Options of {@link GradientAccumulatorArgs.skipLargeUpdates}; give `maxNorm`, `factor`, or both. */
export interface SkipLargeUpdatesArgs {
  /** Skip when the norm is above this. Default: no fixed threshold. */
  maxNorm?: number;
  /** Skip when the norm is above `factor` × the median of the last `history` applied norms. Default: no relative threshold. */
  factor?: number;
  /** How many applied norms the median looks at. Default 20. */
  history?: number;
}

/** Options of {@link GradientAccumulatorArgs.weightDecay}. */
export interface WeightDecayArgs {
  /** λ, the decay per unit of learning rate (AdamW's `weight_decay`, e.g. 0.01). Required. */
  rate: number;
  /**
   * Variables left undecayed. Default {@link isBiasOrNormalization}: biases and the
   * parameters of normalization layers, as the usual AdamW recipes do.
   */
  exclude?: (variable: tf.Variable) => boolean;
}

/** Every key of {@link GradientAccumulatorArgs}, for the unknown-key check. */
export const ACCUMULATOR_ARG_KEYS = ['optimizer', 'accumulationSteps', 'varList', 'averaging', 'clipNorm', 'nonFinite', 'learningRate', 'skipLargeUpdates', 'weightDecay', 'ema'] as const;

/** {@link GradientAccumulatorArgs} checked, with their defaults filled in. */
export interface CheckedAccumulatorArgs {
  optimizer: tf.Optimizer;
  accumulationSteps: number | AccumulationSchedule;
  averaging: Averaging;
  clipNorm: number | null;
  nonFinite: NonFinitePolicy;
  varList: tf.Variable[] | null;
  learningRate: LearningRateSchedule | null;
  skipLargeUpdates: { maxNorm: number | null; factor: number | null; history: number } | null;
  weightDecay: WeightDecay | null;
  ema: { decay: number } | null;
}

/** Checks every option (refusing unknown keys) and fills in the defaults. */
export function checkAccumulatorArgs(owner: string, args: GradientAccumulatorArgs): CheckedAccumulatorArgs {
  if (args === null || typeof args !== 'object') {
    throw argumentError(owner, 'args', 'an object { optimizer, accumulationSteps, … }', args);
  }
  checkKeys(owner, 'args', args, ACCUMULATOR_ARG_KEYS);
  // Note: tf.Optimizer's instanceof reads `.minimize` of the value, so a missing optimizer
  // would fail inside tfjs with "Cannot read properties of undefined"; test for an object first.
  if (args.optimizer === null || typeof args.optimizer !== 'object' || !(args.optimizer instanceof tf.Optimizer)) {
    throw argumentError(owner, 'optimizer', 'a tf.Optimizer (e.g. tf.train.sgd(0.01), tf.train.adam())', args.optimizer);
  }
  // An accumulator inside an accumulator would report updates that only added to a window.
  if (args.optimizer.getClassName() === 'AccumulatingOptimizer') {
    throw argumentError(owner, 'optimizer', "an optimizer that applies its gradients (tf.train.sgd, tf.train.adam, …); an AccumulatingOptimizer only accumulates them: pass its wrapped optimizer instead, or use it with model.fit", verbatim('an AccumulatingOptimizer'));
  }
  const averaging = args.averaging ?? 'per-sample';
  if (averaging !== 'per-sample' && averaging !== 'per-micro-batch') {
    throw argumentError(owner, 'averaging', '"per-sample" or "per-micro-batch"', averaging);
  }
  if (args.clipNorm !== undefined && !isPositiveFinite(args.clipNorm)) {
    throw argumentError(owner, 'clipNorm', 'a finite number > 0 (or left out for no clipping)', args.clipNorm);
  }
  const nonFinite = args.nonFinite ?? 'error';
  if (!NON_FINITE_POLICIES.includes(nonFinite)) {
    throw argumentError(owner, 'nonFinite', '"error", "skip-micro-batch" or "skip-window"', nonFinite);
  }
  if (args.learningRate !== undefined) {
    if (typeof args.learningRate !== 'function') throw argumentError(owner, 'learningRate', 'a function (updateStep) => rate, e.g. warmupCosine({ … }), or left out', args.learningRate);
    if (learningRateOf(args.optimizer) === null) throw argumentError(owner, 'optimizer', 'an optimizer with a numeric learningRate when learningRate is scheduled', args.optimizer);
  }
  return {
    optimizer: args.optimizer,
    learningRate: args.learningRate ?? null,
    skipLargeUpdates: checkSkipLargeUpdates(owner, args.skipLargeUpdates),
    weightDecay: checkWeightDecay(owner, args.weightDecay, args.optimizer),
    ema: checkEma(owner, args.ema),
    accumulationSteps: checkAccumulationSteps(owner, args.accumulationSteps),
    averaging,
    clipNorm: args.clipNorm ?? null,
    nonFinite,
    varList: args.varList === undefined ? null : checkVarList(owner, args.varList),
  };
}

function checkSkipLargeUpdates(owner: string, value: unknown): CheckedAccumulatorArgs['skipLargeUpdates'] {
  if (value === undefined) return null;
  const at = 'skipLargeUpdates';
  const o = checkOptions<SkipLargeUpdatesArgs>(owner, at, value, ['maxNorm', 'factor', 'history']);
  if (o.maxNorm !== undefined && !isPositiveFinite(o.maxNorm)) throw argumentError(owner, `${at}.maxNorm`, 'a finite number > 0', o.maxNorm);
  if (o.factor !== undefined && !(isPositiveFinite(o.factor) && o.factor > 1)) throw argumentError(owner, `${at}.factor`, 'a finite number > 1', o.factor);
  if (o.history !== undefined && !isPositiveInteger(o.history)) throw argumentError(owner, `${at}.history`, 'a positive integer', o.history);
  if (o.maxNorm === undefined && o.factor === undefined) throw argumentError(owner, at, 'an object with maxNorm, factor or both', value);
  return { maxNorm: o.maxNorm ?? null, factor: o.factor ?? null, history: o.history ?? 20 };
}

function checkWeightDecay(owner: string, value: unknown, optimizer: tf.Optimizer): WeightDecay | null {
  if (value === undefined) return null;
  const o = checkOptions<WeightDecayArgs>(owner, 'weightDecay', value, ['rate', 'exclude']);
  if (!isPositiveFinite(o.rate)) throw argumentError(owner, 'weightDecay.rate', 'a finite number > 0', o.rate);
  if (o.exclude !== undefined && typeof o.exclude !== 'function') throw argumentError(owner, 'weightDecay.exclude', 'a function (variable) => boolean, or left out', o.exclude);
  // The decay per update is learningRate · rate · w: without a rate to read it would silently be 0.
  if (learningRateOf(optimizer) === null) {
    throw argumentError(owner, 'optimizer', 'an optimizer with a numeric learningRate (every tf.train optimizer has one) when weightDecay is set, since the decay is learningRate · rate · w; or leave weightDecay out', verbatim(`a ${optimizer.getClassName()} without a numeric learningRate`));
  }
  return { rate: o.rate, exclude: o.exclude ?? isBiasOrNormalization };
}

function checkEma(owner: string, value: unknown): { decay: number } | null {
  if (value === undefined) return null;
  const o = checkOptions<{ decay?: number }>(owner, 'ema', value, ['decay']);
  if (!(typeof o.decay === 'number' && o.decay > 0 && o.decay < 1)) throw argumentError(owner, 'ema.decay', 'a number in (0, 1), e.g. 0.999', o.decay);
  return { decay: o.decay };
}

/** Options of one `GradientAccumulator.step`. */
export interface StepOptions {
  /**
   * The number of samples in this micro-batch, when `lossFn` returns their mean loss. Used by
   * `"per-sample"` averaging to weight uneven micro-batches. Default: taken from a 1-D loss,
   * otherwise the micro-batch counts as one unit.
   */
  sampleCount?: number;
}

/** What happened when a window ended (by its last micro-step, or by `flush`). */
export interface UpdateResult {
  /** True when the optimizer updated the weights. */
  applied: boolean;
  /**
   * `"window"` when the window was dropped (a non-finite gradient, or a total count of 0),
   * `"large-update"` when its norm was too large (see `skipLargeUpdates`), else null.
   */
  skipped: 'window' | 'large-update' | null;
  /** Updates applied so far, this one included. */
  updateStep: number;
  /** Micro-batches that the window counted. */
  microBatches: number;
  /** Samples (or units) the window's gradient was averaged over; 0 when nothing was applied. */
  weight: number;
  /**
   * The window's sample-weighted mean loss (Σ loss × samples / Σ samples; under
   * `"per-micro-batch"` the mean of the micro-batch losses): the loss of the logical batch, as
   * one logs it. Null when nothing was applied or a loss was unknown (gradients added by
   * `addGradients`).
   */
  loss: number | null;
  /** Global norm of the averaged gradient before clipping; null unless `clipNorm` or `skipLargeUpdates` is set and the window was complete. */
  gradientNorm: number | null;
}

/** What one micro-step did. */
export interface StepResult {
  /** This micro-batch's mean loss, unscaled (not divided by `accumulationSteps`); NaN when unknown. */
  loss: number;
  /**
   * The sample-weighted mean loss of the window this micro-step belongs to, so far (on the
   * window's last micro-step: of the whole window, the number to log per update). Null when
   * unknown.
   */
  windowLoss: number | null;
  /** The samples this micro-batch counted for: its size when known, otherwise 1. */
  sampleCount: number;
  /** True when this micro-step completed a window and the weights were updated. */
  applied: boolean;
  /** `"micro-batch"` or `"window"` when a non-finite value made it skip something, `"large-update"` when its window's norm was too large, else null. */
  skipped: 'micro-batch' | 'window' | 'large-update' | null;
  /** Micro-steps taken so far, this one included. */
  microStep: number;
  /** Updates applied so far; use it for learning-rate schedules and logs. */
  updateStep: number;
  /** Epochs completed so far (advanced by `endEpoch`). */
  epoch: number;
  /** Micro-batches the current window has counted, this one included. */
  windowPosition: number;
  /** Micro-batches per update in the window this micro-step belongs to. */
  accumulationSteps: number;
  /** Global norm of the applied gradient before clipping; null unless `clipNorm` is set and an update was applied. */
  gradientNorm: number | null;
}

/** What a micro-step did, before it is reported as a {@link StepResult}. */
export interface MicroStepOutcome {
  loss: number;
  sampleCount: number;
  /** The window the micro-step belongs to (as it stands after the micro-step). */
  window: OpenWindow;
  skipped: 'micro-batch' | 'window' | 'large-update' | null;
  applied: boolean;
  gradientNorm: number | null;
  windowSize: number;
}
