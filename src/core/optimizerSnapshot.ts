import * as tf from '@tensorflow/tfjs';

/**
 * A synchronous snapshot of a tfjs optimizer and the variables it updates, so that an update
 * that throws half-way (a user optimizer's bug, a shape mismatch after a bad restore) can be
 * undone: weights, slot Variables, slot lists and the iteration counter as they were.
 *
 * Why it is cheap: tfjs tensors are immutable and `Variable.assign` only re-points the variable
 * at new data, so `tf.clone` of a Variable shares its data (a reference count, no copy). Keeping
 * the clones until the update succeeded costs no copy, only that the old slot values stay alive
 * until `release` (peak memory is one more set of optimizer slots during the update).
 *
 * What it covers: every own property of the optimizer that is a `tf.Variable` (Adam's `accBeta1`),
 * an array of `{ variable }` slot entries (`accumulatedFirstMoment`, …, the layout of every tfjs
 * optimizer), or a number (`iterations_`, learning rates). Slots created during the update are
 * disposed on restore.
 */
export interface OptimizerSnapshot {
  /** Puts everything back as it was at the snapshot; then releases it. */
  restore(): void;
  /** Drops the snapshot after a successful update. */
  release(): void;
}

type SlotEntry = { variable?: unknown } | null | undefined;

export function snapshotOptimizer(optimizer: tf.Optimizer, variables: readonly tf.Variable[]): OptimizerSnapshot {
  const target = optimizer as unknown as Record<string, unknown>;
  const kept: { variable: tf.Variable; value: tf.Tensor }[] = [];
  const keep = (variable: tf.Variable) => {
    if (!variable.isDisposed) kept.push({ variable, value: tf.clone(variable) });
  };
  variables.forEach(keep);
  const numbers: [string, number][] = [];
  const arrays: { key: string; array: SlotEntry[]; items: SlotEntry[]; variables: Set<unknown> }[] = [];
  const fields: [string, unknown][] = [];
  for (const [key, value] of Object.entries(target)) {
    fields.push([key, value]);
    if (typeof value === 'number') numbers.push([key, value]);
    else if (value instanceof tf.Variable) keep(value);
    else if (Array.isArray(value) && value.every((e) => e == null || (typeof e === 'object' && 'variable' in e))) {
      const items = [...(value as SlotEntry[])];
      for (const e of items) if (e?.variable instanceof tf.Variable) keep(e.variable);
      arrays.push({ key, array: value, items, variables: new Set(items.map((e) => e?.variable)) });
    }
  }
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    tf.dispose(kept.map((k) => k.value));
  };
  return {
    release,
    restore() {
      if (done) return;
      // Slots the failed update created are not in the snapshot: dispose them.
      const before = new Set(arrays.flatMap((a) => [...a.variables]));
      for (const [key] of fields) {
        const now = target[key];
        if (Array.isArray(now)) {
          for (const e of now as SlotEntry[]) {
            const v = e?.variable;
            if (v instanceof tf.Variable && !before.has(v) && !kept.some((k) => k.variable === v)) v.dispose();
          }
        }
      }
      for (const [key, value] of fields) target[key] = value;
      for (const a of arrays) a.array.splice(0, a.array.length, ...a.items);
      for (const [key, value] of numbers) target[key] = value;
      for (const { variable, value } of kept) if (!variable.isDisposed) variable.assign(value);
      release();
    },
  };
}

/**
 * Disposes a tfjs optimizer and every tensor it still holds in its own fields afterwards.
 *
 * Note: tfjs's `MomentumOptimizer.dispose` does not call `SGDOptimizer.dispose`, so the
 * learning-rate scalar `c` of every momentum optimizer is never freed; an accumulator that owns
 * its optimizer frees it here.
 */
export function disposeOptimizer(optimizer: tf.Optimizer): void {
  optimizer.dispose();
  for (const value of Object.values(optimizer as unknown as Record<string, unknown>)) {
    if (value instanceof tf.Tensor && !value.isDisposed) value.dispose();
  }
}

/** Optimizers disposed by an accumulator, so that a second one sharing them fails by name. */
const disposedOptimizers = new WeakSet<tf.Optimizer>();

/** Disposes an optimizer an accumulator owns (once) and remembers it, for {@link checkOptimizerAlive}. */
export function releaseOptimizer(optimizer: tf.Optimizer): void {
  if (disposedOptimizers.has(optimizer)) return;
  disposeOptimizer(optimizer);
  disposedOptimizers.add(optimizer);
}

/** Throws a named error when an accumulator disposed this optimizer (two accumulators shared it). */
export function checkOptimizerAlive(owner: string, optimizer: tf.Optimizer): void {
  if (disposedOptimizers.has(optimizer)) {
    throw new Error(
      `${owner}: its optimizer was disposed by another GradientAccumulator (or AccumulatingOptimizer) that shared it. ` +
        'Give each accumulator its own optimizer, or dispose the other one with { keepOptimizer: true }.',
    );
  }
}
