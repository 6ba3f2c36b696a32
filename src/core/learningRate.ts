import * as tf from '@tensorflow/tfjs';
import { argumentError, checkKeys, isPositiveFinite, isPositiveInteger } from './errors';

/**
 * Learning-rate schedules over applied updates. The accumulator evaluates one before each
 * update it applies, with the number of updates applied so far (0 for the first), and sets the
 * wrapped optimizer's rate; skipped windows (non-finite, too large) never advance it.
 *
 * Note: Lightning (#5558, reported again as #18828) steps its scheduler on skipped updates too; Accelerate steps it on
 * real updates only, as here.
 */
export type LearningRateSchedule = (updateStep: number) => number;

/** Options of {@link warmupCosine}. */
export interface WarmupCosineArgs {
  /** The rate reached at the end of warm-up. Required. */
  peak: number;
  /** Updates of linear warm-up from `peak / warmupSteps` to `peak`. Default 0. */
  warmupSteps?: number;
  /** Updates after which the rate stays at `floor`. Required. */
  totalSteps: number;
  /** The rate the cosine decays to. Default 0. */
  floor?: number;
}

/**
 * Linear warm-up to `peak`, then a half cosine down to `floor` at `totalSteps` (the schedule of
 * most transformer recipes): `warmupCosine({ peak: 1e-3, warmupSteps: 100, totalSteps: 1000 })`.
 */
export function warmupCosine(args: WarmupCosineArgs): LearningRateSchedule {
  const owner = 'warmupCosine';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object { peak, totalSteps, warmupSteps?, floor? }', args);
  checkKeys(owner, 'args', args, ['peak', 'warmupSteps', 'totalSteps', 'floor']);
  const { peak, warmupSteps = 0, totalSteps, floor = 0 } = args;
  if (!isPositiveFinite(peak)) throw argumentError(owner, 'peak', 'a finite number > 0', peak);
  if (!(Number.isInteger(warmupSteps) && warmupSteps >= 0)) throw argumentError(owner, 'warmupSteps', 'a whole number ≥ 0', warmupSteps);
  if (!isPositiveInteger(totalSteps) || totalSteps <= warmupSteps) throw argumentError(owner, 'totalSteps', `an integer above warmupSteps (${warmupSteps})`, totalSteps);
  if (!(typeof floor === 'number' && floor >= 0 && floor <= peak)) throw argumentError(owner, 'floor', `a number in [0, peak]`, floor);
  return (updateStep) => {
    if (updateStep < warmupSteps) return (peak * (updateStep + 1)) / warmupSteps;
    if (updateStep >= totalSteps) return floor;
    const progress = (updateStep - warmupSteps) / (totalSteps - warmupSteps);
    return floor + ((peak - floor) * (1 + Math.cos(Math.PI * progress))) / 2;
  };
}

/** Options of {@link stepDecay}. */
export interface StepDecayArgs {
  /** The rate of the first updates. Required. */
  initial: number;
  /** Multiplies the rate every `every` updates. Default 0.1. */
  factor?: number;
  /** Updates between two decays. Required. */
  every: number;
}

/** `initial · factor^floor(updateStep / every)`: the step schedule of classic vision recipes. */
export function stepDecay(args: StepDecayArgs): LearningRateSchedule {
  const owner = 'stepDecay';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object { initial, every, factor? }', args);
  checkKeys(owner, 'args', args, ['initial', 'factor', 'every']);
  const { initial, factor = 0.1, every } = args;
  if (!isPositiveFinite(initial)) throw argumentError(owner, 'initial', 'a finite number > 0', initial);
  if (!(typeof factor === 'number' && factor > 0 && factor <= 1)) throw argumentError(owner, 'factor', 'a number in (0, 1]', factor);
  if (!isPositiveInteger(every)) throw argumentError(owner, 'every', 'a positive integer', every);
  return (updateStep) => initial * factor ** Math.floor(updateStep / every);
}

/** The rate a tfjs optimizer applies now (all built-in ones keep it in `learningRate`). */
export function learningRateOf(optimizer: tf.Optimizer): number | null {
  const rate = (optimizer as unknown as { learningRate?: unknown }).learningRate;
  return typeof rate === 'number' ? rate : null;
}

/**
 * Sets a tfjs optimizer's learning rate. SGD and momentum precompute `-learningRate` as a
 * tensor (`setLearningRate` rebuilds it); Adam, RMSProp and the others read `learningRate`.
 */
export function setLearningRate(owner: string, optimizer: tf.Optimizer, rate: number): void {
  if (!(typeof rate === 'number' && Number.isFinite(rate) && rate >= 0)) {
    throw argumentError(owner, 'learningRate (the schedule\'s value)', 'a finite number ≥ 0', rate);
  }
  const target = optimizer as unknown as { learningRate?: unknown; setLearningRate?: (r: number) => void };
  if (typeof target.setLearningRate === 'function') target.setLearningRate(rate);
  else if (typeof target.learningRate === 'number') target.learningRate = rate;
  else throw argumentError(owner, 'optimizer', 'a tf.Optimizer with a learningRate to schedule', optimizer);
}
