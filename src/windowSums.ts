import * as tf from '@tensorflow/tfjs';
import { addWeighted, nonFiniteProbe } from './accumulation';
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
 * [loss, non-finite probe, count]. Returns the variable order after this micro-step (the known
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
    const sums = order.map((v, i): tf.Tensor | null => {
      const g = gradientOf.get(v.name) ?? null;
      const sum = carried[i];
      if (g === null) return sum === null ? null : tf.clone(sum);
      return sum === null ? (weight === 1 ? tf.clone(g) : tf.mul(g, weight)) : addWeighted(sum, g, weight);
    });
    const probe = nonFiniteProbe(sums.filter((s): s is tf.Tensor => s !== null));
    return { sums, check: tf.stack([meanLoss ?? tf.scalar(0), probe, count ?? tf.scalar(unitCount)]) };
  });
  return { order, sums, check };
}
