import type { AccumulatorState, SerializedTensor } from '../core/state';
import { argumentError, verbatim } from '../core/errors';

/** The format tag of a saved {@link ParallelAccumulatorState}. */
export const PARALLEL_STATE_FORMAT = 'tfjs-accumulate/parallel-state@1';

/** How the gradient of a window is averaged (see `ParallelAccumulatorArgs.averaging`). */
export type Averaging = 'per-sample' | 'per-micro-batch';

/** The counters of a parallel run; the same meaning as `GradientAccumulator`'s. */
export interface ParallelCounters {
  /** Micro-batches received by `step` (skipped ones included). */
  microStep: number;
  /** Updates applied. */
  updateStep: number;
  /** Epochs completed (advanced by `endEpoch`). */
  epoch: number;
  /** Micro-batches dropped for a non-finite loss or gradient. */
  skippedMicroBatches: number;
  /** Windows dropped under `nonFinite: "skip-window"`. */
  skippedWindows: number;
}

/** The open window as the main thread holds it (micro-batches already reduced from the workers). */
export interface ParallelWindow {
  /** Micro-batches per update of this window; null until its first micro-batch. */
  size: number | null;
  /** Micro-batches counted in the window (reduced into `sums`, or poisoned). */
  microBatches: number;
  /** Total count (samples, tokens or micro-batches) summed into `sums`. */
  weight: number;
  /** A non-finite micro-batch arrived under "skip-window": the window will be dropped. */
  poisoned: boolean;
  /** Which trainable weights received a gradient. */
  touched: boolean[];
}

/**
 * Everything a `ParallelAccumulator` needs to resume mid-window, as plain JSON. The workers'
 * unreduced micro-batches are reduced into `sums` before it is written, so it holds no thread
 * state. Save the model's weights separately, as with `GradientAccumulator`.
 */
export interface ParallelAccumulatorState {
  format: typeof PARALLEL_STATE_FORMAT;
  averaging: Averaging;
  counters: ParallelCounters;
  window: ParallelWindow;
  /** The open window's summed gradients, one per trainable weight in `model.trainableWeights` order. */
  sums: SerializedTensor[];
  /** The state of the `GradientAccumulator` that applies the updates (its optimizer's slots). */
  accumulator: AccumulatorState;
}

/** Checks a saved state against the model's trainable weight shapes before anything is restored. */
export function checkParallelState(owner: string, state: unknown, averaging: Averaging, shapes: number[][]): asserts state is ParallelAccumulatorState {
  const s = state as Partial<ParallelAccumulatorState> | null;
  if (s === null || typeof s !== 'object' || s.format !== PARALLEL_STATE_FORMAT) {
    throw argumentError(owner, 'state', `an object from ParallelAccumulator.getState() (format "${PARALLEL_STATE_FORMAT}")`, state);
  }
  if (s.averaging !== averaging) {
    throw argumentError(owner, 'state.averaging', `"${averaging}", the averaging of this accumulator`, s.averaging);
  }
  const counters = s.counters as unknown as Record<string, unknown> | undefined;
  for (const key of ['microStep', 'updateStep', 'epoch', 'skippedMicroBatches', 'skippedWindows']) {
    const value = counters?.[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw argumentError(owner, `state.counters.${key}`, 'a whole number ≥ 0', value);
    }
  }
  const w = s.window;
  if (
    !w ||
    !(w.size === null || (Number.isInteger(w.size) && w.size > 0)) ||
    !Number.isInteger(w.microBatches) ||
    w.microBatches < 0 ||
    (w.size !== null && w.microBatches >= w.size) ||
    !(w.weight >= 0) ||
    typeof w.poisoned !== 'boolean' ||
    !Array.isArray(w.touched) ||
    w.touched.length !== shapes.length
  ) {
    throw argumentError(owner, 'state.window', 'an open window as written by getState()', w);
  }
  if (!Array.isArray(s.sums) || s.sums.length !== shapes.length) {
    throw argumentError(owner, 'state.sums', `one entry per trainable weight (${shapes.length})`, s.sums);
  }
  s.sums.forEach((t, i) => {
    const shape = shapes[i];
    const size = shape.reduce((a, b) => a * b, 1);
    const sameShape = Array.isArray(t?.shape) && t.shape.length === shape.length && t.shape.every((d, k) => d === shape[k]);
    if (!sameShape || !Array.isArray(t.values) || t.values.length !== size) {
      throw argumentError(owner, `state.sums[${i}]`, `a { name, shape: [${shape.join(', ')}], values } for trainable weight ${i}`, verbatim(Array.isArray(t?.shape) ? `shape [${t.shape.join(', ')}]` : 'something else'));
    }
  });
  if (s.accumulator === null || typeof s.accumulator !== 'object') {
    throw argumentError(owner, 'state.accumulator', "the GradientAccumulator state written by getState()", s.accumulator);
  }
}
