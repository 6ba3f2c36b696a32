import * as tf from '@tensorflow/tfjs';
import type { CheckedAccumulatorArgs, MicroStepOutcome, UpdateResult } from './accumulatorArgs';
import { applyWindow, recordNorm, updateSettings } from './applyWindow';
import { startAverages } from './ema';
import type { LossCount } from './lossGradient';
import { applyNonFinitePolicy, isMicroBatchFinite, NonFinitePolicy } from './nonFinite';
import { AccumulatorCore, closedCore, copyCore, OpenWindow, Unit } from './state';
import { windowSums } from './windowSums';

/**
 * The update path of `GradientAccumulator`: what a contribution's sums do to the accumulator's
 * state once they are known. A finite contribution joins the open window (its sums written into
 * the accumulators) or completes it, and a complete window closes: dropped (poisoned, or a total
 * count of 0), skipped (its norm too large) or applied. A non-finite one is skipped under the
 * `nonFinite` policy. Every function returns the state to commit ({@link UpdateState}) and
 * commits none of it; the only writes are to Variables (accumulators, weights, optimizer
 * slots, averages), made after the checks passed, and an update that throws restores its own.
 */

/** A trained variable, its accumulator (created when it first carries a sum over a micro-step) and its EMA. */
export interface Slot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
  ema: tf.Variable | null;
}

/** The state the update path replaces: the slots, in the order the optimizer sees them, and the counters and open window. */
export interface UpdateState {
  slots: Slot[];
  core: AccumulatorCore;
}

/** The settings the update path reads (the accumulator's own fields, as it was constructed). */
export interface UpdateContext {
  readonly optimizer: tf.Optimizer;
  readonly clipNorm: number | null;
  readonly nonFinite: NonFinitePolicy;
  /** For the learning-rate schedule, `skipLargeUpdates`, `weightDecay` and `ema`. */
  readonly options: CheckedAccumulatorArgs;
}

/** How a contribution counts: a micro-batch's `LossCount`, or a reduced one's micro-batches and loss sum. */
export type Counted = LossCount & { microBatches?: number; lossSum?: number | null };

/** How a window ended, as a micro-step and `flush` report it. */
export interface WindowEnd {
  applied: boolean;
  skipped: 'window' | 'large-update' | null;
  gradientNorm: number | null;
}

/** One contribution, already checked: its unit fits the open window and some variable has a gradient. */
export interface ContributionArgs {
  /** The variables trained at this micro-step. */
  handed: tf.Variable[];
  /** Their gradients (null where none), in `handed`'s order; not disposed. */
  gradients: (tf.Tensor | null)[];
  /** The micro-batch's mean loss, or null when unknown; not disposed. */
  meanLoss: tf.Scalar | null;
  /** How the contribution counts. */
  counted: Counted;
  /** The count a `{ loss, count }` returned, read with the loss; null otherwise. Not disposed. */
  count: tf.Scalar | null;
  /** Micro-batches of the open window, or of the one this contribution opens. */
  windowSize: number;
}

/**
 * One contribution's commit-to-be: computes the new sums, checks them (one host read, with the
 * loss), then skips a non-finite contribution, adds a finite one to the open window, or closes
 * the window it completes. Throws, having changed nothing, under `nonFinite: "error"` or when
 * the update throws.
 */
export function addContribution(context: UpdateContext, owner: string, state: UpdateState, args: ContributionArgs): UpdateState & { outcome: MicroStepOutcome } {
  const { handed, gradients, meanLoss, count, windowSize } = args;
  const before = state.core;
  let counted = args.counted;
  const { order, sums, check } = windowSums({ slots: state.slots, handed, gradients, touched: before.window.touched, weight: counted.weight, meanLoss, count, unitCount: counted.count });
  // One host read per micro-step: the loss to report, the finiteness check and the count together.
  const [readLoss, nonFinite, readCount] = check.dataSync();
  check.dispose();
  const loss = meanLoss === null ? Number.NaN : readLoss;
  if (count !== null) counted = { ...counted, count: readCount };
  const owned = sums.filter((s): s is tf.Tensor => s !== null);
  const micro = counted.microBatches ?? 1;
  const outcome = (window: OpenWindow, end: Pick<MicroStepOutcome, 'applied' | 'skipped' | 'gradientNorm'>): MicroStepOutcome => ({ loss, sampleCount: counted.count, window, ...end, windowSize });
  try {
    if (!isMicroBatchFinite(owner, { loss: meanLoss === null ? null : loss, probe: nonFinite, count: counted.count, countFromLoss: count !== null })) {
      const skipped = skipNonFinite(context.nonFinite, owner, before, windowSize, loss, micro);
      return { slots: state.slots, core: skipped.core, outcome: outcome(skipped.window, { skipped: skipped.skipped, applied: false, gradientNorm: null }) };
    }
    const lossSum = counted.lossSum !== undefined ? counted.lossSum : meanLoss === null ? null : counted.count === 0 ? 0 : loss * counted.count;
    const touched = order.filter((_, i) => sums[i] !== null).map((v) => v.name);
    const next = joinWindow(before, { windowSize, microBatches: micro, unit: counted.unit, count: counted.count, lossSum, touched });
    if (next.window.microBatches < windowSize) {
      return { slots: writeSums(state.slots, order, sums), core: next, outcome: outcome(next.window, { skipped: null, applied: false, gradientNorm: null }) };
    }
    const { slots, core, end } = closeWindow(context, owner, { slots: state.slots, core: next }, order, sums);
    return { slots, core, outcome: outcome(next.window, end) };
  } finally {
    tf.dispose(owned);
  }
}

/** What joins the open window with a finite contribution. */
export interface WindowJoin {
  /** The window's size (fixed by its first micro-step). */
  windowSize: number;
  /** Micro-batches the contribution stands for. */
  microBatches: number;
  unit: Unit;
  /** Samples (or units, or counts) it adds to the divisor. */
  count: number;
  /** Its loss × count, or null when unknown. */
  lossSum: number | null;
  /** Names of the variables whose sum the window now holds. */
  touched: string[];
}

/** The state after a finite contribution joins the open window (a new object; `core` is untouched). */
export function joinWindow(core: AccumulatorCore, join: WindowJoin): AccumulatorCore {
  const next = copyCore(core);
  next.counters.microStep += join.microBatches;
  const w = next.window;
  w.size = join.windowSize;
  // Samples and counts from `lossFn` may mix (checkUnit); a window that saw counts stays in counts.
  w.unit = w.unit === 'counts' ? 'counts' : join.unit;
  w.microBatches += join.microBatches;
  w.weight += join.count;
  w.touched = join.touched;
  w.lossSum = join.lossSum === null || w.lossSum === null ? null : w.lossSum + join.lossSum;
  return next;
}

/**
 * A non-finite contribution under the `nonFinite` policy (`"error"` throws, see
 * `applyNonFinitePolicy`): the state after it, with the window dropped if it is now complete,
 * and the window as the contribution left it, to report.
 */
export function skipNonFinite(
  policy: NonFinitePolicy,
  owner: string,
  core: AccumulatorCore,
  windowSize: number,
  loss: number,
  microBatches: number,
): { core: AccumulatorCore; window: OpenWindow; skipped: 'micro-batch' | 'window' } {
  const { core: next, skipped } = applyNonFinitePolicy(owner, policy, core, windowSize, loss, microBatches);
  return { core: next.window.microBatches >= windowSize ? closedCore(next, 'dropped') : next, window: next.window, skipped };
}

/** The slots after sums join the open window: each sum written into its accumulator (created for a newcomer), in the new order. */
export function writeSums(slots: readonly Slot[], order: tf.Variable[], sums: (tf.Tensor | null)[]): Slot[] {
  return order.map((variable, i) => {
    let accumulator = slots[i]?.accumulator ?? null;
    const sum = sums[i];
    if (sum !== null) {
      if (accumulator === null) accumulator = tf.variable(sum, false);
      else accumulator.assign(sum);
    }
    return { variable, accumulator, ema: slots[i]?.ema ?? null };
  });
}

/**
 * Ends the complete window of `state.core`: drops it (poisoned, or a total count of 0), skips
 * it (norm too large), or applies it. Returns the state after it, with the variable order of
 * `order` and the EMA shadows the update started; if the update throws, it has restored the
 * optimizer, the weights and the averages, and nothing is to be committed.
 */
export function closeWindow(context: UpdateContext, owner: string, state: UpdateState, order: tf.Variable[], sums: (tf.Tensor | null)[]): UpdateState & { end: WindowEnd } {
  const { slots, core: next } = state;
  const w = next.window;
  if (w.poisoned || w.weight === 0) return { slots, core: closedCore(next, 'dropped'), end: { applied: false, skipped: 'window', gradientNorm: null } };
  const { skipLargeUpdates: skip, ema, weightDecay } = context.options;
  const { rate, maxNorm } = updateSettings(owner, context.options, next);
  const shadows = order.map((_, i) => slots[i]?.ema ?? null);
  const applied = applyWindow({ optimizer: context.optimizer, variables: order, sums, weight: w.weight, clipNorm: context.clipNorm, maxNorm, measureNorm: skip !== null, learningRate: rate, weightDecay, ema: ema === null ? null : { decay: ema.decay, shadows }, owner });
  // Averages missing so far start from the weights after this update (see ema.ts).
  const averages = ema !== null && applied.applied ? startAverages(order, shadows) : shadows;
  const closed = order.map((variable, i) => ({ variable, accumulator: slots[i]?.accumulator ?? null, ema: averages[i] }));
  const { gradientNorm } = applied;
  if (!applied.applied) return { slots: closed, core: closedCore(next, 'too-large'), end: { applied: false, skipped: 'large-update', gradientNorm } };
  return { slots: closed, core: recordNorm(closedCore(next, 'applied'), skip, gradientNorm), end: { applied: true, skipped: null, gradientNorm } };
}

/** Closes the open window now, short or not (`flush`): its sums are the accumulators of the variables it touched. */
export function flushWindow(context: UpdateContext, owner: string, state: UpdateState): UpdateState & { end: WindowEnd } {
  const touched = new Set(state.core.window.touched);
  const sums = state.slots.map((s) => (touched.has(s.variable.name) ? s.accumulator : null));
  return closeWindow(context, owner, state, state.slots.map((s) => s.variable), sums);
}

/** What `flush` reports: how the window `w` ended, and the updates applied so far (this one included). */
export function updateResult(w: OpenWindow, updateStep: number, end: WindowEnd): UpdateResult {
  const windowLoss = w.lossSum === null || w.weight === 0 ? null : w.lossSum / w.weight;
  return { ...end, updateStep, microBatches: w.microBatches, weight: end.applied ? w.weight : 0, loss: end.applied ? windowLoss : null };
}
