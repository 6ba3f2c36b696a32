import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from './errors';
import type { NamedTensor } from './optimizerWeights';
import type { AccumulatorState, SerializedTensor } from './state';

/**
 * The accumulator's state (`getState`'s `AccumulatorState`) as the weights that
 * `model.save(…, { includeOptimizer: true })` stores beside the wrapped optimizer's, and back:
 * the state without its tensors' values as JSON in one string tensor, then each variable's
 * accumulator and average as a float32 tensor. The accumulators are stored as the accumulator
 * holds them, times 2^−scale (the window's scale), so that sums beyond float32's range fit;
 * multiplying by a power of two is exact both ways. Variables are named as the caller says (the
 * model's own `originalName`s, which `tf.loadLayersModel` gives the loaded model's weights too).
 */

const PREFIX = 'tfjs-accumulate/';
const STATE = `${PREFIX}state`;
const ACCUMULATOR = `${PREFIX}accumulators/`;
const AVERAGE = `${PREFIX}ema/`;

/** Whether a saved optimizer weight is one of the accumulator's (not the wrapped optimizer's). */
export function isStateWeight(name: string): boolean {
  return name.startsWith(PREFIX);
}

type Layout = Omit<SerializedTensor, 'values'>;
const layout = ({ name, shape, dtype }: SerializedTensor): Layout => ({ name, shape, dtype });

/**
 * The weights that carry `state` (the wrapped optimizer's are left out: they are saved as tfjs
 * saves them). New tensors: the caller owns them. `nameOf` renames each variable.
 */
export function stateToWeights(state: AccumulatorState, nameOf: (name: string) => string): NamedTensor[] {
  const renamed = (t: SerializedTensor): SerializedTensor => ({ ...t, name: nameOf(t.name) });
  const accumulators = state.accumulators.map(renamed);
  const averages = state.ema?.map((e) => (e === null ? null : renamed(e))) ?? null;
  const text = JSON.stringify({
    ...state,
    window: { ...state.window, touched: state.window.touched.map(nameOf) },
    accumulators: accumulators.map(layout),
    ema: averages?.map((e) => (e === null ? null : layout(e))) ?? null,
    optimizer: null,
    optimizerInternals: null,
  });
  const by = 2 ** -state.window.scale;
  return [
    { name: STATE, tensor: tf.scalar(text, 'string') },
    ...accumulators.map((a) => ({ name: ACCUMULATOR + a.name, tensor: tf.tensor(a.values.map((x) => x * by), a.shape, 'float32') })),
    ...(averages ?? []).flatMap((e) => (e === null ? [] : [{ name: AVERAGE + e.name, tensor: tf.tensor(e.values, e.shape, 'float32') }])),
  ];
}

/**
 * The state {@link stateToWeights} stored, with the variables named as they were saved and
 * without the optimizer's weights; null when there is none (a model saved by a version before
 * the state was saved with it). Only the layout is checked here; `setState` checks the rest.
 */
export async function stateFromWeights(owner: string, weights: readonly NamedTensor[]): Promise<AccumulatorState | null> {
  const text = weights.find((w) => w.name === STATE);
  if (text === undefined) return null;
  let parsed: AccumulatorState;
  try {
    parsed = JSON.parse(String((await text.tensor.data())[0])) as AccumulatorState;
  } catch {
    throw argumentError(owner, `the saved weight "${STATE}"`, "the accumulator's state as JSON", verbatim('text that is not JSON'));
  }
  if (parsed === null || typeof parsed !== 'object' || !Array.isArray(parsed.accumulators) || parsed.window === null || typeof parsed.window !== 'object') {
    throw argumentError(owner, `the saved weight "${STATE}"`, "the accumulator's state as written by model.save", verbatim('JSON of another layout'));
  }
  const tensors = new Map(weights.map((w) => [w.name, w.tensor]));
  const values = async (prefix: string, entry: Layout, by = 1): Promise<SerializedTensor> => {
    const tensor = tensors.get(prefix + entry.name);
    if (tensor === undefined) throw argumentError(owner, 'the saved optimizer weights', `a weight "${prefix + entry.name}" for each variable the state names`, verbatim('none'));
    return { ...entry, values: Array.from((await tensor.data()) as Float32Array, (x) => x * by) };
  };
  const scale = typeof parsed.window.scale === 'number' ? parsed.window.scale : 0;
  const accumulators: SerializedTensor[] = [];
  for (const a of parsed.accumulators) accumulators.push(await values(ACCUMULATOR, a, 2 ** scale));
  let ema: (SerializedTensor | null)[] | null = null;
  if (Array.isArray(parsed.ema)) {
    ema = [];
    for (const e of parsed.ema) ema.push(e === null ? null : await values(AVERAGE, e));
  }
  return { ...parsed, accumulators, ema, optimizer: null, optimizerInternals: null };
}
