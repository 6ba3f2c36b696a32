import { argumentError, describe, verbatim } from './errors';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorState, Averaging, Counters, OpenWindow, SerializedTensor, Unit } from './state';

/**
 * Reading a saved state: `checkState` checks a state's layout, counters, window and tensors
 * before anything is restored, and upgrades the older formats to the current one. Version 1 had
 * `normalization` and `touched` flags; versions 1 and 2 had no `window.scale` (their sums are
 * restored at scale 0, as they were held). Every format holds the window's sums themselves in
 * `accumulators`, never scaled, so the values mean the same in all of them.
 */

const FORMAT_V1 = 'tfjs-accumulate/state@1';
const FORMAT_V2 = 'tfjs-accumulate/state@2';
const FORMATS = [ACCUMULATOR_STATE_FORMAT, FORMAT_V2, FORMAT_V1];
/** float32's largest finite value: a sum above it, once scaled, cannot be held. */
const FLOAT32_MAX = 3.4028234663852886e38;
/** The largest window scale accepted (2^-64 keeps every realistic gradient a normal float32). */
const MAX_SCALE = 64;

/** Gives optimizer slot names such as `dense/kernel/m` the new variable names after an order match. */
export function renameOptimizerWeight(name: string, rename: Map<string, string>): string {
  for (const [from, to] of rename) {
    if (name.startsWith(`${from}/`)) return `${to}${name.slice(from.length)}`;
  }
  return name;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * Checks a state's layout, counters, window and tensors (types, finiteness, sizes, and sums that
 * fit float32 at the window's scale), and returns it in the current format (a version-1 state is
 * upgraded: `normalization` becomes `averaging`, `touched` flags become names, the window's loss
 * is unknown; versions 1 and 2 get scale 0). Throws a named error and reads
 * nothing else when anything is off. Shapes against live variables and optimizer slots are
 * checked by the caller, which knows them.
 */
export function checkState(owner: string, state: unknown, averaging: Averaging): AccumulatorState {
  if (typeof state === 'string') {
    throw argumentError(owner, 'state', 'the object returned by getState() (JSON.parse saved text first)', state);
  }
  const s = state as Record<string, unknown> | null;
  if (s === null || typeof s !== 'object' || !FORMATS.includes(s.format as string)) {
    throw argumentError(owner, 'state', `an object from getState() (format "${ACCUMULATOR_STATE_FORMAT}")`, s === null || typeof s !== 'object' ? state : verbatim(`an object with format ${describe(s.format)}`));
  }
  const v1 = s.format === FORMAT_V1;
  const saved = v1 ? s.normalization : s.averaging;
  if (saved !== averaging) {
    throw argumentError(owner, v1 ? 'state.normalization' : 'state.averaging', `"${averaging}", the averaging of this accumulator`, saved);
  }
  const tensors = (key: 'accumulators' | 'optimizer'): SerializedTensor[] | null => {
    const list = s[key];
    if (key === 'optimizer' && list === null) return null;
    if (!Array.isArray(list)) throw argumentError(owner, `state.${key}`, 'an array of { name, shape, dtype, values }', list);
    return list.map((t, i) => checkTensor(owner, `state.${key}[${i}]`, t));
  };
  const accumulators = tensors('accumulators') as SerializedTensor[];
  const optimizer = tensors('optimizer');
  if (s.ema !== undefined && s.ema !== null && !Array.isArray(s.ema)) throw argumentError(owner, 'state.ema', 'an array of { name, shape, dtype, values } (or null entries), or null', s.ema);
  const ema = s.ema === undefined || s.ema === null ? null : (s.ema as unknown[]).map((t, i) => (t === null ? null : checkTensor(owner, `state.ema[${i}]`, t)));
  const internals = s.optimizerInternals;
  if (internals !== undefined && internals !== null && !Array.isArray(internals)) throw argumentError(owner, 'state.optimizerInternals', 'an array of { name, shape, dtype, values }, or null', internals);
  const optimizerInternals = internals == null ? null : (internals as unknown[]).map((t, i) => checkTensor(owner, `state.optimizerInternals[${i}]`, t));
  const names = accumulators.map((a) => a.name);
  if (new Set(names).size !== names.length) throw argumentError(owner, 'state.accumulators', 'one entry per variable', verbatim('a variable listed twice'));

  const c = s.counters as Record<string, unknown> | null | undefined;
  if (c === null || typeof c !== 'object') throw argumentError(owner, 'state.counters', 'an object of counters', c);
  const counters = {} as Counters;
  for (const key of ['microStep', 'updateStep', 'epoch', 'skippedMicroBatches', 'skippedWindows', 'skippedLargeUpdates'] as const) {
    // skippedLargeUpdates came later: a state without it has skipped none.
    const value = key === 'skippedLargeUpdates' && c[key] === undefined ? 0 : c[key];
    if (!isCount(value)) throw argumentError(owner, `state.counters.${key}`, 'a whole number ≥ 0', value);
    counters[key] = value;
  }
  const recentNorms = s.recentNorms ?? [];
  if (!Array.isArray(recentNorms) || !recentNorms.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0)) {
    throw argumentError(owner, 'state.recentNorms', 'an array of finite numbers ≥ 0', s.recentNorms);
  }
  const w = s.window as Record<string, unknown> | null | undefined;
  if (w === null || typeof w !== 'object') throw argumentError(owner, 'state.window', 'an open window as written by getState()', w);
  let touched: unknown = w.touched;
  if (v1 && Array.isArray(touched) && touched.length === names.length && touched.every((t) => typeof t === 'boolean')) {
    touched = names.filter((_, i) => (touched as boolean[])[i]);
  }
  const window: OpenWindow = {
    size: w.size as number | null,
    scale: s.format === ACCUMULATOR_STATE_FORMAT ? (w.scale as number) : 0,
    microBatches: w.microBatches as number,
    weight: w.weight as number,
    unit: w.unit as Unit | null,
    poisoned: w.poisoned as boolean,
    touched: touched as string[],
    lossSum: v1 ? null : (w.lossSum as number | null),
  };
  const scaled = s.format === ACCUMULATOR_STATE_FORMAT;
  if (scaled && !(Number.isInteger(w.scale) && (w.scale as number) >= 0 && (w.scale as number) <= MAX_SCALE)) {
    throw argumentError(owner, 'state.window.scale', `a whole number from 0 to ${MAX_SCALE}`, w.scale);
  }
  if (scaled && w.size === null && w.scale !== 0) throw argumentError(owner, 'state.window.scale', '0 while no window is open (size null)', w.scale);
  checkWindow(owner, window, names, counters);
  const limit = FLOAT32_MAX * 2 ** window.scale;
  accumulators.forEach((a, i) => {
    const k = a.values.findIndex((x) => Math.abs(x) > limit);
    if (k >= 0) throw argumentError(owner, `state.accumulators[${i}] ("${a.name}").values[${k}]`, `at most ${limit.toExponential(3)} in magnitude (float32's range at window scale ${window.scale})`, a.values[k]);
  });
  return { format: ACCUMULATOR_STATE_FORMAT, averaging, counters, window, recentNorms: [...recentNorms], accumulators, optimizer, optimizerInternals, ema };
}

function checkTensor(owner: string, where: string, t: unknown): SerializedTensor {
  const e = t as Partial<SerializedTensor> | null;
  if (e === null || typeof e !== 'object' || typeof e.name !== 'string') throw argumentError(owner, where, 'a { name, shape, dtype, values } entry', t);
  const at = `${where} ("${e.name}")`;
  if (!Array.isArray(e.shape) || !e.shape.every(isCount)) throw argumentError(owner, `${at}.shape`, 'an array of whole numbers', e.shape);
  if (e.dtype !== 'float32' && e.dtype !== 'int32') throw argumentError(owner, `${at}.dtype`, '"float32" or "int32"', e.dtype);
  const size = e.shape.reduce((a, b) => a * b, 1);
  if (!Array.isArray(e.values) || e.values.length !== size) {
    throw argumentError(owner, `${at}.values`, `an array of ${size} numbers (its shape's size)`, e.values);
  }
  for (let i = 0; i < e.values.length; i++) {
    const x = e.values[i];
    // Strings, nulls and non-finite numbers would become NaN in a tensor and reach the weights.
    if (typeof x !== 'number' || !Number.isFinite(x) || (e.dtype === 'int32' && !Number.isInteger(x))) {
      throw argumentError(owner, `${at}.values[${i}]`, `a finite ${e.dtype === 'int32' ? 'integer' : 'number'}`, x);
    }
  }
  return { name: e.name, shape: [...e.shape], dtype: e.dtype, values: e.values };
}

function checkWindow(owner: string, w: OpenWindow, names: string[], counters: Counters): void {
  const bad = (field: string, accepted: string, got: unknown) => argumentError(owner, `state.window.${field}`, accepted, got);
  if (!(w.size === null || (Number.isInteger(w.size) && w.size > 0))) throw bad('size', 'a positive integer or null', w.size);
  if (!isCount(w.microBatches)) throw bad('microBatches', 'a whole number ≥ 0', w.microBatches);
  if (w.microBatches > counters.microStep) throw bad('microBatches', `at most counters.microStep (${counters.microStep})`, w.microBatches);
  if (w.size !== null && w.microBatches >= w.size) throw bad('microBatches', `below the window size (${w.size}): a full window is applied, never saved`, w.microBatches);
  if (w.microBatches > 0 && w.size === null) throw bad('size', 'set once the window holds a micro-batch', w.size);
  // Counts returned by lossFn may be fractional (weights), samples and micro-batches are whole.
  if (!(typeof w.weight === 'number' && Number.isFinite(w.weight) && w.weight >= 0 && (w.unit === 'counts' || Number.isInteger(w.weight)))) {
    throw bad('weight', 'a finite number ≥ 0 (whole unless the unit is "counts")', w.weight);
  }
  if (!(w.unit === null || w.unit === 'samples' || w.unit === 'micro-batches' || w.unit === 'counts')) throw bad('unit', '"samples", "micro-batches", "counts" or null', w.unit);
  if (typeof w.poisoned !== 'boolean') throw bad('poisoned', 'true or false', w.poisoned);
  if (!(w.lossSum === null || (typeof w.lossSum === 'number' && Number.isFinite(w.lossSum)))) throw bad('lossSum', 'a finite number or null', w.lossSum);
  if (!Array.isArray(w.touched)) throw bad('touched', 'a list of variable names', w.touched);
  const stray = w.touched.find((n) => typeof n !== 'string' || !names.includes(n));
  if (stray !== undefined) throw bad('touched', 'names of entries in state.accumulators', verbatim(`${describe(stray)}, which has no entry in state.accumulators`));
  // The weight must agree with the micro-batches counted: otherwise the next update is silently scaled.
  const empty = w.microBatches === 0;
  if (empty && (w.weight !== 0 || w.unit !== null || w.poisoned || w.touched.length > 0)) {
    throw bad('weight', '0, with no unit, not poisoned and nothing touched, in a window of 0 micro-batches', verbatim(`weight ${w.weight}, unit ${describe(w.unit)}`));
  }
  if (w.unit === null && !empty && (!w.poisoned || w.weight !== 0)) {
    throw bad('unit', '"samples" or "micro-batches" once a micro-batch was added', w.unit);
  }
  if (w.unit === 'micro-batches' && (w.poisoned ? w.weight > w.microBatches : w.weight !== w.microBatches)) {
    throw bad('weight', `the number of micro-batches (${w.microBatches}) when the unit is micro-batches`, w.weight);
  }
  if (w.unit === 'samples' && !w.poisoned && w.weight < w.microBatches) {
    throw bad('weight', `at least one sample per micro-batch (≥ ${w.microBatches})`, w.weight);
  }
  if ((w.unit === 'samples' || w.unit === 'micro-batches') && w.weight === 0) throw bad('weight', 'above 0 once a micro-batch was added', w.weight);
}
