import * as tf from '@tensorflow/tfjs';

/**
 * The EMA of the weights (Polyak averaging). A variable's average starts from its value after
 * the first applied update once the accumulator knows the variable, as Keras (`use_ema`) and
 * torch's `AveragedModel` (which Lightning uses) start theirs, and then follows
 * `shadow ← decay · shadow + (1 − decay) · w` on every applied update, as theirs average every
 * parameter. Before that a variable has no shadow: it is its own average.
 */

/** A trained variable and its shadow (null: no average yet). */
export interface AveragedSlot {
  variable: tf.Variable;
  ema: tf.Variable | null;
}

/**
 * Polyak averaging's swap: puts each variable's EMA into the variable and the trained value into
 * the shadow; calling it again swaps back, bit for bit (values are moved, not recomputed).
 * Variables without a shadow (never updated yet) are their own average and stay as they are.
 */
export function swapAverages(slots: readonly AveragedSlot[]): void {
  for (const { variable, ema } of slots) {
    if (ema === null) continue;
    const trained = tf.clone(variable);
    variable.assign(ema);
    ema.assign(trained);
    trained.dispose();
  }
}

/**
 * Writes each average into its variable for good (Keras's `finalize_variable_values`): the
 * model keeps the averaged weights, and the averages go on from there if training continues.
 */
export function finalizeAverages(slots: readonly AveragedSlot[]): void {
  for (const { variable, ema } of slots) if (ema !== null) variable.assign(ema);
}

/** The shadows after an applied update: those that existed, and new ones starting from the variables' values now. */
export function startAverages(variables: readonly tf.Variable[], shadows: readonly (tf.Variable | null)[]): tf.Variable[] {
  return variables.map((v, i) => shadows[i] ?? tf.variable(v, false));
}

/**
 * The swap of `withAveragedWeights` as state: whether the weights hold their averages now, and
 * the one refusal that every call changing weights or state gives meanwhile.
 */
export class AverageSwap {
  /** True between the two swaps. */
  swapped = false;

  constructor(private readonly owner: string, private readonly slots: () => readonly AveragedSlot[]) {}

  /** Runs `fn` with the averages in the weights, and always swaps back (unless `swapBack` already did). */
  async during<T>(fn: () => T | Promise<T>): Promise<T> {
    swapAverages(this.slots());
    this.swapped = true;
    try {
      return await fn();
    } finally {
      this.swapBack();
    }
  }

  /** Puts the trained weights back now, if they are swapped out (`dispose` inside the swap). */
  swapBack(): void {
    if (!this.swapped) return;
    swapAverages(this.slots());
    this.swapped = false;
  }

  /** Throws a named error while the weights hold their averages: `call` would train or restore them. */
  refuseInside(call: string): void {
    if (this.swapped) {
      throw new Error(`${this.owner}: ${call} was called inside withAveragedWeights, while the weights hold their EMA; call it after withAveragedWeights returns (nest nothing inside it). Nothing was changed.`);
    }
  }
}
