import * as tf from '@tensorflow/tfjs';
import { argumentError, describe } from './errors';

/** The format tag written into every saved state, so a future layout can be told apart. */
export const ACCUMULATOR_STATE_FORMAT = 'tfjs-accumulate/state@1';

/** A tensor as plain JSON: exact for float32 and int32, since both round-trip through a JS number. */
export interface SerializedTensor {
  name: string;
  shape: number[];
  dtype: string;
  values: number[];
}

/**
 * Everything `GradientAccumulator` needs to resume mid-window, as plain JSON
 * (`JSON.stringify` it to save, `JSON.parse` to load).
 */
export interface AccumulatorState {
  format: typeof ACCUMULATOR_STATE_FORMAT;
  normalization: 'per-sample' | 'per-micro-batch';
  counters: {
    microStep: number;
    updateStep: number;
    epoch: number;
    skippedMicroBatches: number;
    skippedWindows: number;
  };
  window: {
    size: number | null;
    microBatches: number;
    weight: number;
    unit: 'samples' | 'micro-batches' | null;
    poisoned: boolean;
    touched: boolean[];
  };
  /** One entry per trained variable, named after it. */
  accumulators: SerializedTensor[];
  /** The wrapped optimizer's `getWeights()`, or null when it was left out. */
  optimizer: SerializedTensor[] | null;
}

/** Options of `GradientAccumulator.setState`. */
export interface SetStateArgs {
  /**
   * How saved accumulators find their variables: `"name"` (the variable names must be the same,
   * as they are in a new process that builds the same model) or `"order"` (the same variables in
   * the same order, e.g. a second model built in the same process, whose names got new
   * suffixes). Default `"name"`.
   */
  matchBy?: 'name' | 'order';
  /** Also restore the wrapped optimizer's weights when the state has them. Default true. */
  includeOptimizer?: boolean;
}

/** Reads a tensor (or zeros of `shape` when it does not exist yet) into its JSON form. */
export async function readTensor(
  name: string,
  tensor: tf.Tensor | null,
  shape: number[],
  dtype: string = 'float32',
): Promise<SerializedTensor> {
  const size = shape.reduce((a, b) => a * b, 1);
  const values = tensor === null ? new Array<number>(size).fill(0) : Array.from(await tensor.data() as ArrayLike<number>);
  return { name, shape: [...shape], dtype, values };
}

/** Gives optimizer slot names such as `dense/kernel/m` the new variable names after an order match. */
export function renameOptimizerWeight(name: string, rename: Map<string, string>): string {
  for (const [from, to] of rename) {
    if (name.startsWith(`${from}/`)) return `${to}${name.slice(from.length)}`;
  }
  return name;
}

/** Checks a state object's layout before anything is restored from it. */
export function checkState(owner: string, state: unknown, normalization: string): asserts state is AccumulatorState {
  const s = state as Partial<AccumulatorState> | null;
  if (s === null || typeof s !== 'object' || s.format !== ACCUMULATOR_STATE_FORMAT) {
    throw argumentError(owner, 'state', `an object from getState() (format "${ACCUMULATOR_STATE_FORMAT}")`, state);
  }
  if (s.normalization !== normalization) {
    throw argumentError(owner, 'state.normalization', `"${normalization}", the normalization of this accumulator`, s.normalization);
  }
  const counters = s.counters as Record<string, unknown> | undefined;
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
    !(w.unit === null || w.unit === 'samples' || w.unit === 'micro-batches') ||
    typeof w.poisoned !== 'boolean' ||
    !Array.isArray(w.touched)
  ) {
    throw argumentError(owner, 'state.window', 'an open window as written by getState()', w);
  }
  if (!Array.isArray(s.accumulators)) {
    throw argumentError(owner, 'state.accumulators', 'an array of { name, shape, dtype, values }', s.accumulators);
  }
  const tensors = [...s.accumulators, ...(s.optimizer ?? [])];
  for (const t of tensors) {
    const size = Array.isArray(t?.shape) ? t.shape.reduce((a, b) => a * b, 1) : -1;
    if (typeof t?.name !== 'string' || size < 0 || !Array.isArray(t.values) || t.values.length !== size) {
      throw argumentError(owner, `state tensor "${describe(t?.name)}"`, 'a { name, shape, dtype, values } whose values fill its shape', t);
    }
  }
}
