import * as tf from '@tensorflow/tfjs';
import { addChecked } from './addChecked';
import { tidy } from './tidy';

/** What {@link windowSums} needs: the accumulators so far and this micro-step's gradients. */
export interface WindowSumsArgs {
  /** The known variables and their accumulators, in the optimizer's order. */
  slots: readonly { variable: tf.Variable; accumulator: tf.Variable | null }[];
  /** The variables trained at this micro-step. */
  handed: tf.Variable[];
  /** Their gradients (null where none), in `handed`'s order. */
  gradients: (tf.Tensor | null)[];
  /** Names of the variables whose accumulator holds a sum of the open window. */
  touched: readonly string[];
  /** Factor of this micro-step's gradients (1 unless a mean loss must be scaled to a sum). */
  weight: number;
  /** The micro-batch's mean loss, or null when unknown. */
  meanLoss: tf.Scalar | null;
  /** The count a `{ loss, count }` returned, or null. */
  count: tf.Scalar | null;
  /** The micro-batch's count when known without a read. */
  unitCount: number;
}

/**
 * The window's sums after one more micro-step, not yet committed, and the one tensor to read:
 * [loss, non-finite probe (0, or NaN when a sum holds NaN or ±Infinity), count]. Returns the variable order after this micro-step (the known
 * ones, then newcomers that got a gradient) and a sum per variable (null: untouched).
 */
export function windowSums(args: WindowSumsArgs): { order: tf.Variable[]; sums: (tf.Tensor | null)[]; check: tf.Tensor } {
  const { slots, handed, gradients, weight, meanLoss, count, unitCount } = args;
  const touchedNames = args.touched;
  // The variables after this micro-step: the known ones, then newcomers that got a gradient.
  const known = new Set(slots.map((s) => s.variable.name));
  const order = [...slots.map((s) => s.variable), ...handed.filter((v, i) => gradients[i] !== null && !known.has(v.name))];
  const gradientOf = new Map(handed.map((v, i) => [v.name, gradients[i]]));
  const touched = new Set(touchedNames);
  // A variable no longer handed over (frozen mid-window) leaves the window: its partial sum is
  // dropped and it is not updated. One handed over for the first time in this window starts
  // from its own gradient, so stale accumulators are never read and never need zeroing.
  const carried = order.map((v, i) => (gradientOf.has(v.name) && touched.has(v.name) ? slots[i].accumulator : null));
  const { sums, check } = tidy(() => {
    // Each new sum comes with its finiteness check from the same pass over the weights: 0 when
    // every element is finite, NaN otherwise (a carried sum was checked when it was made).
    const checks: tf.Tensor[] = [];
    const sums = order.map((v, i): tf.Tensor | null => {
      const g = gradientOf.get(v.name) ?? null;
      const sum = carried[i];
      if (g === null) return sum === null ? null : tf.clone(sum);
      const added = addChecked(sum, g, weight);
      checks.push(added.check);
      return added.sum;
    });
    const probe = checks.length === 0 ? tf.scalar(0) : checks.length === 1 ? checks[0] : tf.addN(checks);
    return { sums, check: tf.stack([meanLoss ?? tf.scalar(0), probe, count ?? tf.scalar(unitCount)]) };
  });
  return { order, sums, check };
}
