import type * as tf from '@tensorflow/tfjs';

/**
 * The accumulator's state, defined once (as optax's `MultiStepsState`). In memory it is one
 * {@link HeldState}: the plain part (counters, the open window, the norm history) and, beside it,
 * each trained variable's accumulator and average. The wrapped optimizer keeps its own slots.
 * Every trainer holds exactly this and replaces it whole when a call commits; `getState` writes
 * it as an {@link AccumulatorState} (and `model.save`, through `AccumulatingOptimizer`, as
 * weights), and both read back into the same thing. Nothing here computes: this file is the
 * layout and the few pure moves the update path makes on it. Reading a saved state (checks and
 * upgrades of older formats) is stateFormat.ts.
 */

/** How the accumulated gradient is averaged: over samples, or over micro-batches (see `GradientAccumulatorArgs.averaging`). */
export type Averaging = 'per-sample' | 'per-micro-batch';

/** What the window's weight counts: samples, micro-batches (one unit each), or counts returned by `lossFn` (tokens, say). */
export type Unit = 'samples' | 'micro-batches' | 'counts';

/** Counters that only ever grow. */
export interface Counters {
  /** Micro-steps taken, skipped ones included. */
  microStep: number;
  /** Updates applied. */
  updateStep: number;
  /** Epochs ended by `endEpoch` (the position epoch schedules read). */
  epoch: number;
  /** Micro-batches dropped for a non-finite loss or gradient. */
  skippedMicroBatches: number;
  /** Windows dropped under `nonFinite: "skip-window"`, or for a total count of 0. */
  skippedWindows: number;
  /** Windows skipped for a gradient norm above the `skipLargeUpdates` threshold. */
  skippedLargeUpdates: number;
}

/** The window now open: what the accumulators hold. */
export interface OpenWindow {
  /** Micro-batches per update of this window, fixed when it opens (read from the schedule then); null while none is open. */
  size: number | null;
  /**
   * The accumulators hold the window's sums times 2^−scale, fixed when it opens (see
   * {@link windowScale}): a power of two, so exact, and large enough that the sums of the
   * window's micro-batches cannot overflow float32. 0 while no window is open.
   */
  scale: number;
  /** Micro-batches counted so far (poisoned ones included). */
  microBatches: number;
  /** Samples (or units) summed into the accumulators so far. */
  weight: number;
  /** What `weight` counts; null while no micro-batch was added. */
  unit: Unit | null;
  /** A non-finite gradient arrived under `"skip-window"`: the window will be dropped. */
  poisoned: boolean;
  /** Names of the variables whose accumulator holds a sum in this window. */
  touched: string[];
  /** Σ (micro-batch mean loss × its weight) over the added micro-batches; null once a loss was unknown. */
  lossSum: number | null;
}

/** Everything but the tensors. */
export interface AccumulatorCore {
  counters: Counters;
  window: OpenWindow;
  /** Gradient norms of the last applied updates, oldest first (kept for `skipLargeUpdates.factor`). */
  recentNorms: number[];
}

/** A trained variable, its accumulator (created when it first carries a sum) and its EMA (created by its first applied update). */
export interface Slot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
  ema: tf.Variable | null;
}

/** The whole state in memory: the plain part, and the slots in the order the wrapped optimizer sees the variables. */
export interface HeldState {
  core: AccumulatorCore;
  slots: readonly Slot[];
}

/** The format tag written into every saved state. Versions 1 and 2 are still read (see stateFormat.ts). */
export const ACCUMULATOR_STATE_FORMAT = 'tfjs-accumulate/state@3';

/** A tensor as plain JSON: exact for float32 and int32, since both round-trip through a JS number. */
export interface SerializedTensor {
  name: string;
  shape: number[];
  dtype: string;
  values: number[];
}

/**
 * Everything an accumulator needs to resume mid-window, as plain JSON (`JSON.stringify` it to
 * save, `JSON.parse` to load). `accumulators` hold the window's sums themselves (not scaled).
 */
export interface AccumulatorState extends AccumulatorCore {
  format: typeof ACCUMULATOR_STATE_FORMAT;
  averaging: Averaging;
  /** One entry per known variable, in the order the wrapped optimizer sees them; zeros where untouched. */
  accumulators: SerializedTensor[];
  /** The wrapped optimizer's `getWeights()`, or null when it was left out. */
  optimizer: SerializedTensor[] | null;
  /**
   * Running scalars of a built-in tfjs optimizer that `getWeights` leaves out (Adam's `accBeta1`
   * and `accBeta2`, Adamax's `iteration` and `accBeta1`), so that a resume is bit for bit; null
   * or absent for other optimizers and older states (then derived from the iteration count).
   */
  optimizerInternals?: SerializedTensor[] | null;
  /**
   * The EMA of each variable in `accumulators`' order, or null without EMA. An entry is null
   * while its variable has no average yet (before the first applied update that includes it).
   */
  ema?: (SerializedTensor | null)[] | null;
}

/** Options of `GradientAccumulator.setState`. */
export interface SetStateArgs {
  /**
   * How saved accumulators find their variables: `"name"` (the variable names must be the same,
   * as they are in a new process that builds the same model) or `"order"` (the same variables in
   * the same order, e.g. a second model built in the same process, whose names got new
   * suffixes; without `varList`, the registered trainable variables other than the saved ones,
   * or all of them when they are as many as the saved ones). Default `"name"`.
   */
  matchBy?: 'name' | 'order';
  /** Also restore the wrapped optimizer's weights when the state has them. Default true. */
  includeOptimizer?: boolean;
}

/** A fresh window: none open. */
export function emptyWindow(): OpenWindow {
  return { size: null, scale: 0, microBatches: 0, weight: 0, unit: null, poisoned: false, touched: [], lossSum: 0 };
}

/** A fresh state: all counters 0, no window open, no norms. */
export function initialCore(): AccumulatorCore {
  return { counters: { microStep: 0, updateStep: 0, epoch: 0, skippedMicroBatches: 0, skippedWindows: 0, skippedLargeUpdates: 0 }, window: emptyWindow(), recentNorms: [] };
}

/** A deep copy, so that a state handed out can never alias the live one. */
export function copyCore(core: AccumulatorCore): AccumulatorCore {
  return { counters: { ...core.counters }, window: { ...core.window, touched: [...core.window.touched] }, recentNorms: [...core.recentNorms] };
}

/**
 * The exponent of the scale of a window that opens now: ⌈log₂(size × count)⌉, so that `size`
 * micro-batches that each count like the first (their gradients being those of a sum over
 * `count` samples) cannot overflow the float32 sums, while each finite mean can. A power of two
 * is exact: it changes no bit of a sum or of the averaged gradient, for any value above
 * float32's smallest normal number times 2^scale.
 *
 * @param count What the window's first micro-batch counts, when known before its gradient
 *   (samples); 1 otherwise.
 */
export function windowScale(size: number, count: number): number {
  return Math.max(0, Math.ceil(Math.log2(size * Math.max(1, count))));
}

/** The state with a window open: `size` and `scale` fixed now, unless one is open already. */
export function openedCore(core: AccumulatorCore, size: number, scale: number): AccumulatorCore {
  if (core.window.size !== null) return core;
  const next = copyCore(core);
  next.window.size = size;
  next.window.scale = scale;
  return next;
}

/** The state after a window ends: counters advanced, no window open. */
export function closedCore(core: AccumulatorCore, outcome: 'applied' | 'dropped' | 'too-large' | 'empty'): AccumulatorCore {
  const next = copyCore(core);
  if (outcome === 'applied') next.counters.updateStep += 1;
  else if (outcome === 'dropped') next.counters.skippedWindows += 1;
  else if (outcome === 'too-large') next.counters.skippedLargeUpdates += 1;
  next.window = emptyWindow();
  return next;
}
