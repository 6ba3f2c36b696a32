import * as tf from '@tensorflow/tfjs';
import type { CheckedAccumulatorArgs, MicroStepOutcome, StepResult, UpdateResult } from './accumulatorArgs';
import { addIntoSumsRead } from './accumulation';
import { applyWindow, recordNorm, updateSettings } from './applyWindow';
import { startAverages } from './ema';
import { argumentError, verbatim } from './errors';
import { LossScale, meanLossOf } from './lossGradient';
import { NonFiniteGradientError, NonFinitePolicy } from './nonFinite';
import { AccumulatorCore, closedCore, copyCore, Counters, HeldState, OpenWindow, openedCore, Slot, Unit } from './state';

/**
 * The update path, in one piece: `(state, contribution) → (state, outcome)`. Every trainer's
 * micro-step ends here: `GradientAccumulator.step` with a micro-batch's gradient, `addGradients`
 * with one computed by `model.fit` (`AccumulatingOptimizer`), `addGradientSums` with the sums the
 * parallel workers reduced. A contribution joins the window (opening it: size and scale fixed
 * then), is added into its sums with one finiteness check, and is read from the device once
 * (loss, check, count). A non-finite one follows the `nonFinite` policy; a finite one that
 * completes the window closes it: dropped (poisoned, or a total count of 0), skipped (its norm
 * too large) or applied (applyWindow.ts: the one division, clipping, the optimizer, decay, EMA).
 *
 * Each function returns the state to commit and commits none of it: the caller (a thin shell)
 * replaces its one state object with the result, or, when the function throws, keeps the old
 * one, which nothing has changed. The only writes are to Variables after every check passed:
 * the new sums into the accumulators, or the update (weights, optimizer slots, averages), which
 * restores everything it wrote if it throws.
 */

/** The settings the update path reads: the accumulator's options, checked, and its name for messages. */
export interface UpdateConfig {
  readonly owner: string;
  readonly options: CheckedAccumulatorArgs;
}

/** One contribution to the open window: a micro-batch's gradient, or sums reduced elsewhere, and what it counts. */
export interface Contribution {
  /** The variables trained at this micro-step. */
  handed: tf.Variable[];
  /** Their gradients (null where none), in `handed`'s order; not disposed. */
  gradients: (tf.Tensor | null)[];
  /** What each gradient is multiplied by as it is added (see `addIntoSums`); 1 when the caller scaled it already. */
  factor: number;
  /** The micro-batch's objective, read with the sums' check, and how it gives the mean loss; null when unknown. Not disposed. */
  loss: LossRead | null;
  /** The count a `{ loss, count }` returned, read with the loss; null otherwise. Not disposed. */
  countTensor: tf.Scalar | null;
  /** What it counts: samples, micro-batches or counts (NaN until `countTensor` is read). */
  count: number;
  unit: Unit;
  /** Micro-batches it stands for: 1, or more for sums reduced elsewhere. */
  microBatches: number;
  /** Σ (mean loss × count) of sums reduced elsewhere, or null when unknown; left out: computed from `loss`. */
  lossSum?: number | null;
}

/** A micro-batch's loss as the device has it: its objective's value and how the mean loss follows from it (see `meanLossOf`). */
export interface LossRead {
  objective: tf.Scalar;
  scale: LossScale;
}

/** The window a contribution joins: the open one, or the one it opens now with this size and scale. */
export interface WindowPlan {
  size: number;
  scale: number;
}

/** How a window ended, as a micro-step and `flush` report it. */
export interface WindowEnd {
  applied: boolean;
  skipped: 'window' | 'large-update' | null;
  gradientNorm: number | null;
}

const STILL_OPEN: WindowEnd = { applied: false, skipped: null, gradientNorm: null };

/**
 * Refuses, before anything is computed, a contribution that cannot join the open window: one
 * with no gradient at all, one whose unit cannot mix with the window's (samples and counts both
 * count items and may mix; micro-batch units may not mix with either), and one that trains none
 * of the variables the window holds sums for (another model's micro-batch: its step would be
 * divided by the other model's samples too, and the window's own sums dropped).
 */
export function checkContribution(owner: string, window: OpenWindow, c: Pick<Contribution, 'handed' | 'gradients' | 'unit'>): void {
  const trained = c.handed.filter((_, i) => c.gradients[i] !== null).map((v) => v.name);
  if (trained.length === 0) {
    throw argumentError(owner, 'the micro-batch gradient', 'non-empty: at least one trained variable must receive a gradient', verbatim('no gradient for any variable'));
  }
  if (window.unit !== null && window.unit !== c.unit && (window.unit === 'micro-batches' || c.unit === 'micro-batches')) {
    throw new Error(
      `${owner}: every micro-batch of a window must report its size the same way under "per-sample" averaging; this window counted ${window.unit} ` +
        `but this micro-step gives ${c.unit}. Always return a 1-D per-sample loss or pass sampleCount, or never do.`,
    );
  }
  if (window.microBatches > 0 && window.touched.length > 0 && !trained.some((name) => window.touched.includes(name))) {
    const held = window.touched.slice(0, 3).map((n) => `"${n}"`).join(', ') + (window.touched.length > 3 ? ', …' : '');
    throw new Error(
      `${owner}: this micro-step trains none of the variables whose sums the open window holds (${held}, from ${window.microBatches} micro-batch(es)): ` +
        'a window trains one model. Apply or drop that window first (flush), give each model its own accumulator, or, after setState, restore with ' +
        'matchBy: "order" onto the model you train. Nothing was changed.',
    );
  }
}

/**
 * One contribution: the state after it, and what it did. Opens the window if none is open (with
 * `plan`), adds the gradients into the window's sums, reads loss, check and count in one host
 * read, then skips a non-finite contribution, adds a finite one to the window, or closes the
 * window it completes. Throws, having changed nothing, when the contribution is refused (see
 * {@link checkContribution}), under `nonFinite: "error"`, or when the update throws.
 */
export function addContribution(config: UpdateConfig, state: HeldState, c: Contribution, plan: WindowPlan): { state: HeldState; outcome: MicroStepOutcome } {
  checkContribution(config.owner, state.core.window, c);
  const before = openedCore(state.core, plan.size, plan.scale);
  const size = before.window.size as number;
  const { slots } = state;
  // The variables after this micro-step: the known ones, then newcomers that got a gradient.
  const known = new Set(slots.map((s) => s.variable.name));
  const order = [...slots.map((s) => s.variable), ...c.handed.filter((v, i) => c.gradients[i] !== null && !known.has(v.name))];
  const gradientOf = new Map(c.handed.map((v, i) => [v.name, c.gradients[i]]));
  const touched = new Set(before.window.touched);
  // A variable no longer handed over (frozen mid-window) leaves the window: its partial sum is
  // dropped and it is not updated. One handed over for the first time in this window starts
  // from its own gradient, so stale accumulators are never read and never need zeroing.
  const carried = order.map((v, i) => (gradientOf.has(v.name) && touched.has(v.name) ? slots[i].accumulator : null));
  const gradients = order.map((v) => gradientOf.get(v.name) ?? null);
  // A finite contribution that completes the window with a count known here gets its sums back
  // divided already (the one division, bit for bit): no pass over every sum after it. Nothing
  // is written to the accumulators on this micro-step, so a failure still changes nothing.
  const divisor = before.window.weight + c.count;
  const averaged =
    before.window.microBatches + c.microBatches >= size &&
    c.countTensor === null &&
    !before.window.poisoned &&
    divisor > 0 &&
    carried.every((s, i) => s === null || gradients[i] !== null);
  const read = sumAndRead(carried, gradients, c.factor, c.loss, c.countTensor, c.count, averaged ? divisor * 2 ** -before.window.scale : null);
  const { sums } = read;
  try {
    const count = c.countTensor === null ? c.count : read.count;
    const loss = c.loss === null ? Number.NaN : read.loss;
    const outcome = (window: OpenWindow, end: WindowEnd): MicroStepOutcome => ({ loss, sampleCount: count, window, ...end, windowSize: size });
    if (!isMicroBatchFinite(config.owner, { loss: c.loss === null ? null : loss, probe: read.probe, count, countFromLoss: c.countTensor !== null })) {
      const skipped = skipNonFinite(config, before, loss, c.microBatches);
      return { state: { core: skipped.core, slots }, outcome: { ...outcome(skipped.window, STILL_OPEN), skipped: skipped.skipped } };
    }
    const lossSum = c.lossSum !== undefined ? c.lossSum : c.loss === null ? null : count === 0 ? 0 : loss * count;
    const next = copyCore(before);
    const w = next.window;
    next.counters.microStep += c.microBatches;
    // Samples and counts from `lossFn` may mix (checkContribution); a window that saw counts stays in counts.
    w.unit = w.unit === 'counts' ? 'counts' : c.unit;
    w.microBatches += c.microBatches;
    w.weight += count;
    w.touched = order.filter((_, i) => sums[i] !== null).map((v) => v.name);
    w.lossSum = lossSum === null || w.lossSum === null ? null : w.lossSum + lossSum;
    if (w.microBatches < size) return { state: { core: next, slots: writeSums(slots, order, sums) }, outcome: outcome(w, STILL_OPEN) };
    const closed = closeWindow(config, { core: next, slots }, order, sums, averaged);
    return { state: closed.state, outcome: outcome(w, closed.end) };
  } finally {
    tf.dispose(sums.filter((s, i): s is tf.Tensor => s !== null && s !== carried[i]));
  }
}

/**
 * Adds gradients into sums (`addIntoSums`) and reads, in the micro-step's one host read, the
 * loss, the new sums' finiteness probe and the count. Shared by the accumulator and the parallel
 * workers' replicas. The caller owns the new sums (those not among `sums`).
 */
export function sumAndRead(
  sums: readonly (tf.Tensor | null)[],
  gradients: readonly (tf.Tensor | null)[],
  factor: number,
  lossRead: LossRead | null,
  countTensor: tf.Scalar | null,
  count: number,
  divisor: number | null = null,
): { sums: (tf.Tensor | null)[]; loss: number; probe: number; count: number } {
  // Only the scalars that exist are read, and the kernel that adds writes them beside the probe
  // (addIntoSumsRead): stand-ins for the others, or a stack, were more tfjs ops per micro-step.
  // A count known on the host reads back as the float32 it became on the device before.
  const carry: tf.Scalar[] = [];
  if (lossRead !== null) carry.push(lossRead.objective);
  if (countTensor !== null) carry.push(countTensor);
  const added = addIntoSumsRead(sums, gradients, factor, divisor, carry);
  try {
    const values = added.read.dataSync();
    let k = 0;
    const objective = lossRead === null ? 0 : values[k++];
    const readCount = countTensor === null ? Math.fround(count) : values[k++];
    const probe = values[k];
    const loss = lossRead === null ? 0 : meanLossOf(objective, lossRead.scale, readCount);
    return { sums: added.sums, loss, probe, count: readCount };
  } catch (error) {
    tf.dispose(added.sums.filter((s, i): s is tf.Tensor => s !== null && s !== sums[i]));
    throw error;
  } finally {
    added.read.dispose();
  }
}

/**
 * Whether a micro-batch's one host read is finite: its loss (when known), the non-finite probe of
 * its sums, and the count a `{ loss, count }` returned. A micro-batch counting 0 (all tokens
 * masked) has a loss of 0/0 but adds nothing: not a fault. A negative count is a bad loss, not a
 * non-finite one: it throws a named error.
 */
export function isMicroBatchFinite(owner: string, read: { loss: number | null; probe: number; count: number; countFromLoss: boolean }, parameter = 'lossFn'): boolean {
  const { loss, probe, count, countFromLoss } = read;
  if (countFromLoss && count < 0) throw argumentError(owner, parameter, 'a function whose { loss, count } has a count ≥ 0', count);
  const lossFinite = loss === null || Number.isFinite(loss) || (countFromLoss && count === 0);
  return probe === 0 && lossFinite && Number.isFinite(count);
}

/**
 * The non-finite policy, in one place: the state after `microBatches` non-finite micro-batches
 * join the open window (`core`, already open), or a `NonFiniteGradientError` under `"error"`
 * (nothing changes). `"skip-micro-batch"` counts them and leaves the window as it was;
 * `"skip-window"` counts them in the window, poisons it, and drops it if it is now complete. The
 * accumulators are never touched. Returns the window as the contribution left it, to report.
 */
export function skipNonFinite(config: UpdateConfig, core: AccumulatorCore, loss: number, microBatches: number): { core: AccumulatorCore; window: OpenWindow; skipped: 'micro-batch' | 'window' } {
  const policy: NonFinitePolicy = config.options.nonFinite;
  if (policy === 'error') {
    const first = core.counters.microStep + 1;
    const which = microBatches === 1 ? `micro-step ${first}` : `micro-steps ${first}–${first + microBatches - 1}`;
    throw new NonFiniteGradientError(
      `${config.owner}: ${which} produced a non-finite loss or gradient (loss = ${loss}). ` +
        'Weights, accumulators and counters are unchanged. Pass nonFinite: "skip-micro-batch" or "skip-window" to skip such micro-batches instead.',
    );
  }
  const next = copyCore(core);
  next.counters.microStep += microBatches;
  next.counters.skippedMicroBatches += microBatches;
  if (policy === 'skip-micro-batch') return { core: next, window: next.window, skipped: 'micro-batch' };
  next.window.microBatches += microBatches;
  next.window.poisoned = true;
  const complete = next.window.microBatches >= (next.window.size as number);
  return { core: complete ? closedCore(next, 'dropped') : next, window: next.window, skipped: 'window' };
}

/** The slots after sums join the open window: each new sum written into its accumulator (created for a newcomer), in the new order. */
function writeSums(slots: readonly Slot[], order: tf.Variable[], sums: (tf.Tensor | null)[]): Slot[] {
  return order.map((variable, i) => {
    let accumulator = slots[i]?.accumulator ?? null;
    const sum = sums[i];
    if (sum !== null && sum !== accumulator) {
      if (accumulator === null) accumulator = tf.variable(sum, false);
      else accumulator.assign(sum);
    }
    return { variable, accumulator, ema: slots[i]?.ema ?? null };
  });
}

/**
 * Ends the complete window of `state.core`: drops it (poisoned, or a total count of 0), skips
 * it (norm too large), or applies it. Returns the state after it, with the variable order of
 * `order` and the averages the update started; if the update throws, it has restored the
 * optimizer, the weights and the averages, and nothing is to be committed.
 */
export function closeWindow(config: UpdateConfig, state: HeldState, order: tf.Variable[], sums: (tf.Tensor | null)[], averaged = false): { state: HeldState; end: WindowEnd } {
  const { slots, core: next } = state;
  const w = next.window;
  if (w.poisoned || w.weight === 0) return { state: { core: closedCore(next, 'dropped'), slots }, end: { applied: false, skipped: 'window', gradientNorm: null } };
  const { optimizer, clipNorm, skipLargeUpdates: skip, ema, weightDecay } = config.options;
  const { rate, maxNorm } = updateSettings(config.owner, config.options, next);
  const shadows = order.map((_, i) => slots[i]?.ema ?? null);
  const applied = applyWindow({ optimizer, variables: order, sums, weight: w.weight, averaged, scale: w.scale, clipNorm, maxNorm, measureNorm: skip !== null, learningRate: rate, weightDecay, ema: ema === null ? null : { decay: ema.decay, shadows }, owner: config.owner });
  // Averages missing so far start from the weights after this update (see ema.ts).
  const averages = ema !== null && applied.applied ? startAverages(order, shadows) : shadows;
  const closed = order.map((variable, i) => ({ variable, accumulator: slots[i]?.accumulator ?? null, ema: averages[i] }));
  const { gradientNorm } = applied;
  if (!applied.applied) return { state: { core: closedCore(next, 'too-large'), slots: closed }, end: { applied: false, skipped: 'large-update', gradientNorm } };
  return { state: { core: recordNorm(closedCore(next, 'applied'), skip, gradientNorm), slots: closed }, end: { applied: true, skipped: null, gradientNorm } };
}

/**
 * Closes the open window now, short or not (`flush`): its sums are the accumulators of the
 * variables it touched. A window opened but holding no micro-batch just closes, so that the next
 * one reads the schedule again.
 */
export function flushWindow(config: UpdateConfig, state: HeldState): { state: HeldState; end: WindowEnd } {
  const w = state.core.window;
  if (w.microBatches === 0) return { state: w.size === null ? state : { core: closedCore(state.core, 'empty'), slots: state.slots }, end: STILL_OPEN };
  const touched = new Set(w.touched);
  const sums = state.slots.map((s) => (touched.has(s.variable.name) ? s.accumulator : null));
  return closeWindow(config, state, state.slots.map((s) => s.variable), sums);
}

/** A micro-step's result, from what it did and the counters just committed. */
export function stepResult(counters: Counters, r: MicroStepOutcome): StepResult {
  const { loss, sampleCount, window } = r;
  return {
    loss,
    windowLoss: window.lossSum === null || window.weight === 0 ? null : window.lossSum / window.weight,
    sampleCount,
    applied: r.applied,
    skipped: r.skipped,
    microStep: counters.microStep,
    updateStep: counters.updateStep,
    epoch: counters.epoch,
    windowPosition: window.microBatches,
    accumulationSteps: r.windowSize,
    gradientNorm: r.gradientNorm,
  };
}

/** What `flush` reports: how the window `w` ended, and the updates applied so far (this one included). */
export function updateResult(w: OpenWindow, updateStep: number, end: WindowEnd): UpdateResult {
  const windowLoss = w.lossSum === null || w.weight === 0 ? null : w.lossSum / w.weight;
  return { ...end, updateStep, microBatches: w.microBatches, weight: end.applied ? w.weight : 0, loss: end.applied ? windowLoss : null };
}
