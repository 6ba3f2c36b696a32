import type { AccumulatorState, SerializedTensor } from '../core/state';
import { argumentError } from '../core/errors';

/**
 * The parallel trainer saves and restores the core's `AccumulatorState` (format
 * `tfjs-accumulate/state@2`), so a state saved by `GradientAccumulator` resumes in
 * `ParallelAccumulator` and back, at any number of workers. This file only reads the format the
 * parallel trainer wrote before it was built on the core, by upgrading it to the core's.
 */

/** The format tag of the states `ParallelAccumulator` wrote before it saved the core's `AccumulatorState`; still read. */
export const PARALLEL_STATE_FORMAT = 'tfjs-accumulate/parallel-state@1';

/** How the gradient of a window is averaged (see `GradientAccumulatorArgs.averaging`). */
export type { Averaging } from '../core/state';

/** A state `ParallelAccumulator.getState` returns: the core's. */
export type ParallelAccumulatorState = AccumulatorState;

/** The layout of a {@link PARALLEL_STATE_FORMAT} state, as it was written. */
export interface LegacyParallelState {
  format: typeof PARALLEL_STATE_FORMAT;
  averaging: 'per-sample' | 'per-micro-batch';
  counters: { microStep: number; updateStep: number; epoch: number; skippedMicroBatches: number; skippedWindows: number };
  window: { size: number | null; microBatches: number; weight: number; poisoned: boolean; touched: boolean[] };
  /** The open window's sums, one per trainable weight in order. */
  sums: SerializedTensor[];
  /** The state of the inner single-update `GradientAccumulator` (its optimizer's weights). */
  accumulator: AccumulatorState;
}

/**
 * A state from either format as the core's `AccumulatorState`. A {@link PARALLEL_STATE_FORMAT}
 * state becomes the core's: the same counters (no large updates skipped), its window (the unit is
 * `"counts"` under "per-sample", whose weights may be fractional, `"micro-batches"` otherwise;
 * the loss so far unknown; `touched` flags become names), its sums as the accumulators, and the
 * inner accumulator's optimizer weights. Only the layout is checked here: the core's
 * `setState` then checks every value (types, finiteness, shapes, the window's consistency).
 */
export function upgradeParallelState(owner: string, state: unknown): unknown {
  const s = state as Partial<LegacyParallelState> | null;
  if (s === null || typeof s !== 'object' || s.format !== PARALLEL_STATE_FORMAT) return state;
  const w = s.window;
  if (!Array.isArray(s.sums) || s.sums.some((t) => t === null || typeof t !== 'object')) {
    throw argumentError(owner, 'state.sums', 'one { name, shape, dtype, values } per trainable weight', s.sums);
  }
  if (w === null || typeof w !== 'object' || !Array.isArray(w.touched) || w.touched.length !== s.sums.length || !w.touched.every((t) => typeof t === 'boolean')) {
    throw argumentError(owner, 'state.window.touched', `one true or false per trainable weight (${s.sums.length})`, w?.touched);
  }
  if (s.accumulator === null || typeof s.accumulator !== 'object') {
    throw argumentError(owner, 'state.accumulator', 'the GradientAccumulator state it was written with', s.accumulator);
  }
  const empty = w.microBatches === 0;
  return {
    format: 'tfjs-accumulate/state@2',
    averaging: s.averaging,
    counters: { ...s.counters, skippedLargeUpdates: 0 },
    window: {
      size: w.size,
      microBatches: w.microBatches,
      weight: w.weight,
      unit: empty ? null : s.averaging === 'per-micro-batch' ? 'micro-batches' : 'counts',
      poisoned: w.poisoned,
      touched: s.sums.filter((_, i) => w.touched[i]).map((t) => t.name),
      lossSum: empty ? 0 : null,
    },
    recentNorms: [],
    accumulators: s.sums,
    optimizer: s.accumulator.optimizer ?? null,
    ema: null,
  };
}
