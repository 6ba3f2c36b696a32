import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from './errors';
import { snapshotOptimizer } from './optimizerSnapshot';
import { captureOptimizer, internalNames, slotSuffixes, writeOptimizer } from './optimizerWeights';
import type { AccumulatorState, SerializedTensor } from './state';
import { renameOptimizerWeight } from './stateFormat';

/**
 * The tensor half of `setState`: matches a checked state to live variables and to the wrapped
 * optimizer's slots, checks every shape, and only then hands back a plan whose commit cannot
 * fail half-way. The layout half (counters, window, value types) is `checkState` in state.ts.
 */

export interface RestorePlan {
  /** The variables, in the saved order. */
  variables: tf.Variable[];
  /** Their saved accumulators, in the same order. */
  accumulators: SerializedTensor[];
  /** Their saved EMA, in the same order (null entries: no average yet); null when not restored. */
  ema: (SerializedTensor | null)[] | null;
  /** Saved variable name → live variable name. */
  rename: Map<string, string>;
  /**
   * Writes the optimizer's weights (a no-op when they are not restored). Synchronous for a
   * built-in tfjs optimizer; another one goes through its own async `setWeights`, undone if it throws.
   */
  commitOptimizer(): void | Promise<void>;
}

const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);
const shapeText = (s: readonly number[]) => `[${s.join(', ')}]`;

export async function planRestore(
  owner: string,
  state: AccumulatorState,
  where: { matchBy: 'name' | 'order'; known: tf.Variable[]; candidates: tf.Variable[]; optimizer: tf.Optimizer | null; withEma: boolean },
): Promise<RestorePlan> {
  const entries = state.accumulators;
  let variables: tf.Variable[];
  if (where.matchBy === 'order') {
    let pool = where.known;
    if (pool.length === 0) {
      // "order" is for variables whose names changed (a second model built in this process): the
      // candidates other than the saved ones, or all of them when only those are as many.
      const saved = new Set(entries.map((e) => e.name));
      const others = where.candidates.filter((v) => !saved.has(v.name));
      pool = others.length === entries.length ? others : where.candidates;
    }
    if (pool.length !== entries.length) {
      const which = where.known.length > 0 ? 'variable this accumulator trains' : 'registered trainable variable (pass varList to the constructor to say which)';
      throw argumentError(owner, 'state.accumulators', `one entry per ${which}: ${pool.length}`, verbatim(`${entries.length} entries`));
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
  const ema = where.withEma ? state.ema ?? null : null;
  if (ema !== null) {
    if (ema.length !== variables.length) throw argumentError(owner, 'state.ema', `one entry per variable (${variables.length})`, verbatim(`${ema.length} entries`));
    ema.forEach((e, i) => {
      if (e !== null && (!sameShape(e.shape, variables[i].shape) || e.dtype !== 'float32')) {
        throw argumentError(owner, `state.ema[${i}] ("${e.name}")`, `float32 of shape ${shapeText(variables[i].shape)}, the shape of variable "${variables[i].name}"`, verbatim(`${e.dtype} of shape ${shapeText(e.shape)}`));
      }
    });
  }
  const optimizer = where.optimizer;
  const saved = state.optimizer;
  if (optimizer === null || saved === null) return { variables, accumulators: entries, ema, rename, commitOptimizer: () => {} };

  const weights = saved.map((s) => ({ ...s, name: renameOptimizerWeight(s.name, rename) }));
  await checkOptimizerWeights(owner, optimizer, weights, variables);
  const internals = checkInternals(owner, optimizer, state.optimizerInternals ?? null);
  if (slotSuffixes(optimizer) !== undefined) {
    return { variables, accumulators: entries, ema, rename, commitOptimizer: () => writeOptimizer(optimizer, weights, internals) };
  }
  return {
    variables,
    accumulators: entries,
    ema,
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
  const suffixes = slotSuffixes(optimizer);
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
  if (suffixes !== undefined) {
    // A built-in optimizer is written field by field: every slot kind lists the same variables, kind after kind.
    const kinds = weights.filter((w) => w.name !== 'iter').map((w) => suffixes.indexOf(w.name.slice(w.name.lastIndexOf('/') + 1)));
    const counts = suffixes.map((s) => groups.get(s)?.length ?? 0);
    if (counts.some((c) => c !== counts[0]) || kinds.some((k, i) => i > 0 && k < kinds[i - 1])) {
      throw argumentError(owner, 'state.optimizer', `one slot of each kind (${suffixes.map((s) => `"/${s}"`).join(', ')}) per variable, kind after kind`, verbatim(`${counts.map((c, i) => `${c} "/${suffixes[i]}"`).join(', ')}`));
    }
  }
  const captured = captureOptimizer(optimizer);
  const current = captured === null ? await optimizer.getWeights() : captured.weights;
  const slots = current.filter((w) => w.name !== 'iter');
  const expected = weights.filter((w) => w.name !== 'iter');
  const shapes = slots.map((w) => [...w.tensor.shape]);
  if (captured === null) {
    for (const w of current) if (!(w.tensor instanceof tf.Variable)) w.tensor.dispose();
  } else {
    tf.dispose([...captured.weights, ...captured.internals].map((w) => w.tensor));
  }
  if (slots.length > 0 && (slots.length !== expected.length || slots.some((w, i) => w.name !== expected[i].name || !sameShape(shapes[i], expected[i].shape)))) {
    throw argumentError(owner, 'state.optimizer', `the slots this optimizer already has (${slots.map((w, i) => `"${w.name}" ${shapeText(shapes[i])}`).join(', ')})`, verbatim(`${expected.length} slots: ${expected.slice(0, 4).map((w) => `"${w.name}" ${shapeText(w.shape)}`).join(', ')}${expected.length > 4 ? ', …' : ''}`));
  }
}

/**
 * Checks saved optimizer internals: for a built-in optimizer, exactly its running scalars, each a
 * finite float32 scalar; absent or null is accepted (an older state: derived from the iteration
 * count, as tfjs's setWeights does). Another optimizer has none.
 */
function checkInternals(owner: string, optimizer: tf.Optimizer, internals: SerializedTensor[] | null): SerializedTensor[] | null {
  if (internals === null) return null;
  const names = internalNames(optimizer) ?? [];
  const got = internals.map((w) => w.name);
  if (got.length !== names.length || names.some((n, i) => n !== got[i]) || internals.some((w) => w.shape.length !== 0 || w.dtype !== 'float32')) {
    throw argumentError(owner, 'state.optimizerInternals', `the float32 scalars of a ${optimizer.getClassName()} optimizer (${names.length === 0 ? 'none' : names.map((n) => `"${n}"`).join(', ')}), or null; was the state saved with another optimizer?`, verbatim(`${got.length} entries${got.length === 0 ? '' : `: ${got.map((n) => `"${n}"`).join(', ')}`}`));
  }
  return internals;
}

/** A variable with its accumulator and EMA, as the accumulator keeps them. */
export interface RestoredSlot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
  ema: tf.Variable | null;
}

/**
 * Writes a checked plan's accumulators (the saved sums times 2^−scale, the window's scale: exact,
 * a power of two) and EMA into Variables, reusing those of the current slots, and disposes the
 * ones no longer used. Synchronous: it runs after every check passed.
 */
export function commitSlots(current: readonly RestoredSlot[], plan: RestorePlan, scale: number): RestoredSlot[] {
  const previous = new Map(current.map((s) => [s.variable.name, s]));
  const write = (target: tf.Variable | null, values: number[], shape: number[], by = 1) => {
    const value = tf.tensor(by === 1 ? values : values.map((x) => x * by), shape, 'float32');
    const out = target === null ? tf.variable(value, false) : (target.assign(value), target);
    value.dispose();
    return out;
  };
  const slots = plan.variables.map((variable, i) => {
    const old = previous.get(variable.name);
    previous.delete(variable.name);
    const accumulator = write(old?.accumulator ?? null, plan.accumulators[i].values, variable.shape, 2 ** -scale);
    const saved = plan.ema?.[i] ?? null;
    const ema = saved === null ? null : write(old?.ema ?? null, saved.values, variable.shape);
    if (saved === null && old?.ema) old.ema.dispose();
    return { variable, accumulator, ema };
  });
  tf.dispose([...previous.values()].flatMap((s) => [s.accumulator, s.ema]).filter((a): a is tf.Variable => a !== null));
  return slots;
}
