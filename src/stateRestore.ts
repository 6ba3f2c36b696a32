import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from './errors';
import { snapshotOptimizer } from './optimizerSnapshot';
import { AccumulatorState, SerializedTensor, renameOptimizerWeight } from './state';

/**
 * The tensor half of `setState`: matches a checked state to live variables and to the wrapped
 * optimizer's slots, checks every shape, and only then hands back a plan whose commit cannot
 * fail half-way. The layout half (counters, window, value types) is `checkState` in state.ts.
 */

/** Reads a tensor (or zeros of `shape` when it does not exist yet) into its JSON form. */
export async function readTensor(name: string, tensor: tf.Tensor | null, shape: number[], dtype: string = 'float32'): Promise<SerializedTensor> {
  const size = shape.reduce((a, b) => a * b, 1);
  const values = tensor === null ? new Array<number>(size).fill(0) : Array.from((await tensor.data()) as ArrayLike<number>);
  return { name, shape: [...shape], dtype, values };
}

/** The slot suffixes each tfjs optimizer writes (`<variable>/<suffix>`), by class name. */
const SLOT_SUFFIXES: Record<string, string[]> = {
  SGD: [],
  Momentum: ['momentum'],
  Adam: ['m', 'v'],
  Adamax: ['m', 'v'],
  RMSProp: ['rms', 'momentum', 'mg'],
  Adagrad: ['accumulator'],
  Adadelta: ['accum_grad', 'accum_var'],
};

export interface RestorePlan {
  /** The variables, in the saved order. */
  variables: tf.Variable[];
  /** Their saved accumulators, in the same order. */
  accumulators: SerializedTensor[];
  /** Saved variable name → live variable name. */
  rename: Map<string, string>;
  /** Writes the optimizer's weights (a no-op when they are not restored); undoes itself if it throws. */
  commitOptimizer(): Promise<void>;
}

const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);
const shapeText = (s: readonly number[]) => `[${s.join(', ')}]`;

export async function planRestore(
  owner: string,
  state: AccumulatorState,
  where: { matchBy: 'name' | 'order'; known: tf.Variable[]; candidates: tf.Variable[]; optimizer: tf.Optimizer | null },
): Promise<RestorePlan> {
  const entries = state.accumulators;
  let variables: tf.Variable[];
  if (where.matchBy === 'order') {
    const pool = where.known.length > 0 ? where.known : where.candidates;
    if (pool.length !== entries.length) {
      throw argumentError(owner, 'state.accumulators', `one entry per trained variable (${pool.length})`, verbatim(`${entries.length} entries`));
    }
    variables = pool;
  } else {
    variables = entries.map((e, i) => {
      const v = tf.engine().registeredVariables[e.name];
      if (v === undefined || v.isDisposed) {
        throw argumentError(owner, `state.accumulators[${i}].name`, 'the name of a live variable of this model (use matchBy: "order" if the names changed)', e.name);
      }
      return v;
    });
    if (where.known.length > 0 && (where.known.length !== variables.length || where.known.some((v, i) => v !== variables[i]))) {
      throw argumentError(owner, 'state.accumulators', `the variables this accumulator already trains, in its order (${where.known.map((v) => `"${v.name}"`).join(', ')})`, verbatim(`entries for ${entries.map((e) => `"${e.name}"`).join(', ')}`));
    }
  }
  variables.forEach((v, i) => {
    if (!sameShape(entries[i].shape, v.shape) || entries[i].dtype !== 'float32') {
      throw argumentError(owner, `state.accumulators[${i}] ("${entries[i].name}")`, `float32 of shape ${shapeText(v.shape)}, the shape of variable "${v.name}"`, verbatim(`${entries[i].dtype} of shape ${shapeText(entries[i].shape)}`));
    }
  });
  const rename = new Map(entries.map((e, i) => [e.name, variables[i].name]));
  const optimizer = where.optimizer;
  const saved = state.optimizer;
  if (optimizer === null || saved === null) return { variables, accumulators: entries, rename, commitOptimizer: async () => {} };

  const weights = saved.map((s) => ({ ...s, name: renameOptimizerWeight(s.name, rename) }));
  await checkOptimizerWeights(owner, optimizer, weights, variables);
  return {
    variables,
    accumulators: entries,
    rename,
    async commitOptimizer() {
      const before = await optimizer.getWeights();
      const tensors = weights.map((w) => ({ name: w.name, tensor: tf.tensor(w.values, w.shape, w.dtype as tf.DataType) }));
      const snapshot = snapshotOptimizer(optimizer, []);
      try {
        await optimizer.setWeights(tensors);
      } catch (error) {
        snapshot.restore();
        throw error;
      } finally {
        tf.dispose(tensors.map((t) => t.tensor));
      }
      snapshot.release();
      const after = await optimizer.getWeights();
      const live = new Set(after.filter((w) => w.tensor instanceof tf.Variable).map((w) => w.tensor));
      // tfjs optimizers replace their slot Variables in setWeights without disposing the old ones,
      // and getWeights creates a fresh iteration-count tensor on every call.
      for (const w of [...before, ...after]) if (!live.has(w.tensor)) w.tensor.dispose();
    },
  };
}

/**
 * Checks saved optimizer weights against this optimizer and these variables: the iteration
 * count, slot names of this optimizer's kind, each slot shaped like its variable, slots in the
 * variables' order (tfjs optimizers find slots by position), and, when the optimizer already has
 * slots, the same names and shapes as those.
 */
async function checkOptimizerWeights(owner: string, optimizer: tf.Optimizer, weights: SerializedTensor[], variables: tf.Variable[]): Promise<void> {
  const at = (i: number) => `state.optimizer[${i}] ("${weights[i].name}")`;
  const byName = new Map(variables.map((v) => [v.name, v]));
  const suffixes = SLOT_SUFFIXES[optimizer.getClassName()];
  const groups = new Map<string, string[]>();
  weights.forEach((w, i) => {
    if (w.name === 'iter') {
      if (w.shape.length !== 0) throw argumentError(owner, at(i), 'a scalar iteration count', verbatim(`shape ${shapeText(w.shape)}`));
      return;
    }
    const cut = w.name.lastIndexOf('/');
    const variable = byName.get(w.name.slice(0, cut));
    const suffix = w.name.slice(cut + 1);
    if (cut < 0 || variable === undefined) {
      throw argumentError(owner, at(i), `a slot "<variable>/<slot>" of one of the restored variables`, w.name);
    }
    if (suffixes !== undefined && !suffixes.includes(suffix)) {
      throw argumentError(owner, at(i), `a slot of a ${optimizer.getClassName()} optimizer (${suffixes.length === 0 ? 'it has none' : suffixes.map((s) => `"/${s}"`).join(', ')}); was the state saved with another optimizer?`, w.name);
    }
    if (!sameShape(w.shape, variable.shape) || w.dtype !== 'float32') {
      throw argumentError(owner, `${at(i)}.shape`, `float32 of shape ${shapeText(variable.shape)}, the shape of variable "${variable.name}"`, verbatim(`${w.dtype} of shape ${shapeText(w.shape)}`));
    }
    groups.set(suffix, [...(groups.get(suffix) ?? []), variable.name]);
  });
  for (const [suffix, names] of groups) {
    if (names.some((n, k) => n !== variables[k]?.name)) {
      throw argumentError(owner, 'state.optimizer', `"/${suffix}" slots in the variables' order (${variables.map((v) => `"${v.name}"`).join(', ')})`, verbatim(`the order ${names.map((n) => `"${n}"`).join(', ')}`));
    }
  }
  const current = await optimizer.getWeights();
  const slots = current.filter((w) => w.name !== 'iter');
  const expected = weights.filter((w) => w.name !== 'iter');
  for (const w of current) if (!(w.tensor instanceof tf.Variable)) w.tensor.dispose();
  if (slots.length > 0 && (slots.length !== expected.length || slots.some((w, i) => w.name !== expected[i].name || !sameShape(w.tensor.shape, expected[i].shape)))) {
    throw argumentError(owner, 'state.optimizer', `the slots this optimizer already has (${slots.map((w) => `"${w.name}" ${shapeText(w.tensor.shape)}`).join(', ')})`, verbatim(`${expected.length} slots: ${expected.slice(0, 4).map((w) => `"${w.name}" ${shapeText(w.shape)}`).join(', ')}${expected.length > 4 ? ', …' : ''}`));
  }
}
