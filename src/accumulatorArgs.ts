import * as tf from '@tensorflow/tfjs';
import { argumentError, checkKeys, isPositiveFinite } from './errors';
import { NON_FINITE_POLICIES, NonFinitePolicy } from './nonFinite';
import { AccumulationSchedule, checkAccumulationSteps } from './schedule';
import { checkVarList } from './varList';
import { Averaging } from './state';

/**
 * The accumulator's options and results: the vocabulary shared by `GradientAccumulator`,
 * `AccumulatingOptimizer` and their tests.
 */

/** A tf.Variable, or a tfjs-layers `LayerVariable` (anything whose `read()` gives the Variable). */
export type TrainableVariable = tf.Variable | { read(): tf.Tensor };

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
}

/** Every key of {@link GradientAccumulatorArgs}, for the unknown-key check. */
export const ACCUMULATOR_ARG_KEYS = ['optimizer', 'accumulationSteps', 'varList', 'averaging', 'clipNorm', 'nonFinite'] as const;

/** {@link GradientAccumulatorArgs} checked, with their defaults filled in. */
export interface CheckedAccumulatorArgs {
  optimizer: tf.Optimizer;
  accumulationSteps: number | AccumulationSchedule;
  averaging: Averaging;
  clipNorm: number | null;
  nonFinite: NonFinitePolicy;
  varList: tf.Variable[] | null;
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
  return {
    optimizer: args.optimizer,
    accumulationSteps: checkAccumulationSteps(owner, args.accumulationSteps),
    averaging,
    clipNorm: args.clipNorm ?? null,
    nonFinite,
    varList: args.varList === undefined ? null : checkVarList(owner, args.varList),
  };
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
  /** `"window"` when the window held a non-finite gradient and was dropped, else null. */
  skipped: 'window' | null;
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
  /** Global norm of the averaged gradient before clipping; null unless `clipNorm` is set and an update was applied. */
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
  /** `"micro-batch"` or `"window"` when a non-finite value made it skip something, else null. */
  skipped: 'micro-batch' | 'window' | null;
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
