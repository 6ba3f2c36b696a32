import * as tf from '@tensorflow/tfjs';
import { argumentError, describe, verbatim } from './errors';
import { tidy } from './accumulation';
import type { Averaging, Unit } from './state';

/**
 * From a loss function to its gradients, with nothing left behind when the loss throws. Shared
 * by `GradientAccumulator.step` and `checkEquivalence`.
 */

/**
 * `tf.variableGrads(f, vars)` that frees everything when `f` throws and that names the two
 * mistakes tfjs reports obscurely: a loss reaching none of `vars`, and a non-float loss.
 *
 * Why the detour: tfjs never frees the tensors its tape saved for backprop when `f` throws inside
 * `variableGrads`. Returning a stand-in scalar lets tfjs finish and clean up; the real error is
 * rethrown afterwards. Must be called inside `tf.tidy` (the gradients and value are returned
 * into the caller's scope).
 *
 * @param owner Named in error messages.
 * @param f Returns the scalar objective to differentiate.
 * @returns The objective's value and each variable's gradient (null where it has none).
 */
export function safeVariableGrads(
  owner: string,
  f: () => tf.Scalar,
  vars: tf.Variable[],
): { value: tf.Scalar; gradients: (tf.Tensor | null)[] } {
  let failed = false;
  let failure: unknown;
  let result: { value: tf.Scalar; grads: tf.NamedTensorMap };
  try {
    result = tf.variableGrads(() => {
      try {
        const y = f();
        if (y.dtype !== 'float32') {
          throw argumentError(owner, 'lossFn', 'a function that returns a float32 loss (tf.cast an integer loss first)', verbatim(`a function that returned ${describe(y)} of dtype ${y.dtype}`));
        }
        return y;
      } catch (error) {
        failed = true;
        failure = error;
        return tf.scalar(0);
      }
    }, vars);
  } catch (error) {
    // variableGrads rejects the stand-in scalar (it reaches no variable); report the real cause.
    if (failed) throw failure;
    if (error instanceof Error && /connection between any variable/.test(error.message)) {
      throw argumentError(
        owner,
        'lossFn',
        `a function whose loss depends on at least one trained variable (${vars.length} are trained: ${vars.slice(0, 3).map((v) => `"${v.name}"`).join(', ')}${vars.length > 3 ? ', …' : ''})`,
        verbatim('a loss that depends on none of them (was the model built from other variables, or the prediction computed outside lossFn?)'),
      );
    }
    throw error;
  }
  if (failed) {
    tf.dispose([result.value, ...Object.values(result.grads)]);
    throw failure;
  }
  return { value: result.value, gradients: vars.map((v) => result.grads[v.name] ?? null) };
}

/**
 * What `lossFn` may return instead of a tensor: the micro-batch's summed loss and a scalar count
 * known only in the graph, such as the number of unmasked tokens. The window is divided by the
 * total count; the count is read with the loss in the micro-step's one host read.
 */
export interface CountedLoss {
  /** The summed loss of the micro-batch (not its mean), a float32 scalar. */
  loss: tf.Tensor;
  /** What the loss sums over, a scalar tensor (e.g. `tf.sum(mask)`). */
  count: tf.Tensor;
}

/** True for a `{ loss, count }` object (and not a tensor). */
export function isCountedLoss(value: unknown): value is CountedLoss {
  return value !== null && typeof value === 'object' && !(value instanceof tf.Tensor) && 'loss' in value && 'count' in value;
}

/** How a micro-batch counts: `count` samples (or one unit), its loss objective scaled by `weight`. */
export interface LossCount {
  count: number;
  unit: Unit;
  weight: number;
}

/**
 * Checks what `lossFn` returned and says how the micro-batch counts: a 1-D per-sample loss
 * counts its length, a scalar mean with `sampleCount` counts that many samples (its objective is
 * scaled by it), and a scalar alone counts as one unit.
 */
export function countLoss(owner: string, averaging: Averaging, loss: unknown, sampleCount: number | undefined, scalarSamples?: number): LossCount {
  const returned = () => verbatim(`a function that returned ${describe(loss)}`);
  if (isCountedLoss(loss)) {
    if (averaging !== 'per-sample') throw argumentError(owner, 'lossFn', 'a function that returns a scalar mean loss under "per-micro-batch" averaging ({ loss, count } needs "per-sample")', verbatim('a function that returned { loss, count }'));
    if (sampleCount !== undefined) throw argumentError(owner, 'sampleCount', 'left out when lossFn returns { loss, count }', sampleCount);
    const { loss: summed, count } = loss;
    if (!(summed instanceof tf.Tensor) || summed.rank !== 0 || summed.dtype !== 'float32') {
      throw argumentError(owner, 'lossFn', 'a function whose { loss, count } holds a float32 scalar summed loss', verbatim(`a loss of ${describe(summed)}`));
    }
    if (!(count instanceof tf.Tensor) || count.rank !== 0) {
      throw argumentError(owner, 'lossFn', 'a function whose { loss, count } holds a scalar count tensor (e.g. the number of unmasked tokens)', verbatim(`a count of ${describe(count)}`));
    }
    return { count: Number.NaN, unit: 'counts', weight: 1 };
  }
  if (!(loss instanceof tf.Tensor)) {
    throw argumentError(owner, 'lossFn', 'a function that returns a tf.Tensor (a scalar mean loss, or a 1-D per-sample loss) or { loss, count }', returned());
  }
  if (loss.dtype !== 'float32') {
    throw argumentError(owner, 'lossFn', 'a function that returns a float32 loss (tf.cast an integer loss first)', verbatim(`a function that returned a ${loss.dtype} tensor`));
  }
  if (averaging === 'per-micro-batch') {
    if (loss.rank !== 0) throw argumentError(owner, 'lossFn', 'a function that returns a scalar mean loss under "per-micro-batch" averaging', returned());
    return { count: 1, unit: 'micro-batches', weight: 1 };
  }
  if (loss.rank === 1) {
    if (loss.size === 0) throw argumentError(owner, 'lossFn', 'a function that returns a scalar, or a non-empty 1-D per-sample loss', verbatim('a function that returned an empty vector'));
    if (sampleCount !== undefined && sampleCount !== loss.size) {
      throw argumentError(owner, 'sampleCount', `left out or equal to the per-sample loss length (${loss.size})`, sampleCount);
    }
    return { count: loss.size, unit: 'samples', weight: 1 };
  }
  if (loss.rank !== 0) throw argumentError(owner, 'lossFn', 'a function that returns a scalar mean loss or a 1-D per-sample loss', returned());
  const samples = sampleCount ?? scalarSamples;
  if (samples !== undefined) return { count: samples, unit: 'samples', weight: samples };
  return { count: 1, unit: 'micro-batches', weight: 1 };
}

/**
 * How a micro-batch's mean loss follows from the value of its objective: divided by `by`, or,
 * for a `{ loss, count }` loss (`perCount`), by the count times `by`.
 */
export interface LossScale {
  by: number;
  perCount: boolean;
}

/**
 * The mean loss from the objective's value (and the count, read with it), bit for bit what the
 * float32 ops `tf.div(objective, tf.mul(count, by))` give: each float32 product and quotient is
 * the double one rounded once (53 bits hold a product of two floats exactly, and a double
 * quotient of two floats rounds to the float32 one). Why on the host: the division was a tfjs op
 * and a scalar upload per micro-step; the objective is read in the micro-step's one host read anyway.
 */
export function meanLossOf(objective: number, scale: LossScale, count: number): number {
  const by = scale.perCount ? Math.fround(count * Math.fround(scale.by)) : Math.fround(scale.by);
  return by === 1 ? objective : Math.fround(objective / by);
}

/**
 * One micro-batch's forward and backward pass: the gradient of its summed loss for each of
 * `handed` (null where none), the objective's value and how it gives the mean loss (for logs and
 * the finiteness check, see {@link meanLossOf}), how it counts, and, for `{ loss, count }`, the
 * count tensor (kept; the caller disposes it with the rest). Nothing is left behind when `lossFn` throws.
 *
 * @param scalarSamples The samples a scalar mean loss counts for under `"per-sample"` when
 *   `sampleCount` is left out (a worker of the parallel trainer knows its micro-batch's size,
 *   but not which form its loss returns); a 1-D or `{ loss, count }` loss ignores it.
 * @param factorFor The factor the objective is multiplied by, given what the micro-batch counts
 *   (samples, 1 for a unit, NaN for a count known only after the gradient): the window's scale
 *   2^−scale (see `windowScale`), applied to the scalar objective, where it costs nothing and its
 *   gradient comes out scaled. Default 1.
 */
export function microBatchGradients(
  owner: string,
  averaging: Averaging,
  lossFn: () => tf.Tensor | CountedLoss,
  handed: tf.Variable[],
  sampleCount: number | undefined,
  scalarSamples?: number,
  factorFor: (count: number) => number = () => 1,
): { gradients: (tf.Tensor | null)[]; objective: tf.Scalar; lossScale: LossScale; counted: LossCount; count: tf.Scalar | null } {
  let counted: LossCount = { count: 1, unit: 'micro-batches', weight: 1 };
  let count: tf.Scalar | null = null;
  let factor = 1;
  const computed = () => tidy(() => {
    const { value, gradients } = safeVariableGrads(owner, () => {
      const loss = lossFn();
      counted = countLoss(owner, averaging, loss, sampleCount, scalarSamples);
      factor = factorFor(counted.count);
      const scaled = (t: tf.Tensor, by = 1) => (by * factor === 1 ? t : tf.mul(t, by * factor)) as tf.Scalar;
      if (isCountedLoss(loss)) {
        // Kept past variableGrads' forward tidy, read with the loss in the one host read.
        count = tf.keep(tf.cast(loss.count, 'float32')) as tf.Scalar;
        return scaled(loss.loss);
      }
      // Note: the objective is the micro-batch's summed loss (a per-sample loss summed, a mean
      // times sampleCount) times the window's power-of-two scale, so its gradient needs no
      // scaling here; the division by the window's sample count happens once, at the update.
      if (loss.rank === 1) return scaled(tf.sum(loss));
      return scaled(loss, counted.weight);
    }, handed);
    return { gradients, objective: value };
  });
  let result: ReturnType<typeof computed>;
  try {
    result = computed();
  } catch (error) {
    if (count !== null) (count as tf.Scalar).dispose();
    throw error;
  }
  // The mean loss is the scaled objective divided by (divisor × factor), on the host (meanLossOf).
  const c = counted as LossCount;
  const lossScale: LossScale = c.unit === 'counts' ? { by: factor, perCount: true } : { by: (c.unit === 'samples' ? c.count : 1) * factor, perCount: false };
  return { ...result, lossScale, counted: { ...c, weight: 1 }, count };
}
