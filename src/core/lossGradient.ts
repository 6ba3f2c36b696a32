import * as tf from '@tensorflow/tfjs';
import { argumentError, describe, verbatim } from './errors';
import { tidy } from './accumulation';
import type { Averaging, Unit } from './state';

/**
 * From a loss function to its gradients, with nothing left behind when the loss throws. Shared
 * by `GradientAccumulator.step` and `checkEquivalence`.
 */

/**
 * The value a backward pass starts from, held for reuse across micro-steps.
 *
 * A micro-step's gradients are those of its loss times a factor (the samples a mean stands for,
 * the window's power-of-two scale). Starting the backward pass from that factor instead of 1
 * gives them bit for bit (see `safeVariableGrads`) without the product's scalar kernels. The
 * factor rarely changes between micro-steps, so the seed is one float32 scalar Variable,
 * written only when the factor changes: a new scalar tensor per micro-step cost about as much
 * as the kernels it replaced on the wasm backend.
 *
 * Created on first use, not with its owner: a tensor made in a constructor would start a tfjs
 * backend before the user picks one.
 */
export class BackwardSeed {
  private variable: tf.Variable<tf.Rank.R0> | null = null;
  /** The float32 value the Variable holds. */
  private current = 1;

  /** Whether the Variable exists now (a call that creates it and then throws disposes it again). */
  get allocated(): boolean {
    return this.variable !== null && !this.variable.isDisposed;
  }

  /** The seed as a tensor for `tf.engine().gradients`, created holding 1 if it does not exist. */
  get tensor(): tf.Scalar {
    if (!this.allocated) {
      const one = tf.scalar(1);
      this.variable = tf.variable(one, false);
      one.dispose();
      this.current = 1;
    }
    return this.variable as tf.Scalar;
  }

  /** Sets the seed to `value` (rounded to float32), writing the Variable only when it changes. */
  set(value: number): void {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw argumentError('BackwardSeed', 'value', 'a finite number', value);
    const f = Math.fround(value);
    const variable = this.tensor as tf.Variable<tf.Rank.R0>;
    if (Object.is(f, this.current)) return;
    const next = tf.scalar(f);
    variable.assign(next);
    next.dispose();
    this.current = f;
  }

  /**
   * Runs `fn`; if it throws and the seed did not exist before the call, frees the seed again, so
   * that a failing call leaves the tensor count as it was. The one place this rule lives: the
   * backward pass and the accumulator's micro-step both run inside it.
   */
  freedIfFailing<T>(fn: () => T): T {
    const existed = this.allocated;
    try {
      return fn();
    } catch (error) {
      if (!existed) this.dispose();
      throw error;
    }
  }

  /**
   * Frees the Variable; the next use creates it again. tfjs may have freed it already: its
   * backward pass disposes a gradient it has added into another, and a gradient function may hand
   * the seed on unchanged (`Mod`'s, a custom one), so the seed can be that gradient.
   */
  dispose(): void {
    if (this.allocated) this.variable?.dispose();
    this.variable = null;
    this.current = 1;
  }
}

/**
 * `tf.variableGrads(f, vars)` that frees everything when `f` throws, that names the two
 * mistakes tfjs reports obscurely (a loss reaching none of `vars`, a non-float loss), and whose
 * backward pass may start from a seed other than 1.
 *
 * Why the detour: tfjs never frees the tensors its tape saved for backprop when `f` throws inside
 * `variableGrads`. Returning a stand-in scalar lets tfjs finish and clean up; the real error is
 * rethrown afterwards. Must be called inside `tf.tidy` (the gradients and value are returned
 * into the caller's scope).
 *
 * Why a seed: the gradients of `c · f()` are those of `f()` with the backward pass started from
 * `c` instead of 1, bit for bit (the product's own backward step multiplies the seed 1 by the
 * float32 `c`, which gives `c` exactly, and every step after it sees the same input). Started
 * from `c`, the pass needs none of the product's six scalar kernels (forward, saved inputs,
 * backward and casts), about 3% of a one-thread MLP micro-step of 16 on the native path.
 * `c` is known only once `f` has run (it may depend on the loss's length), so the seed is a
 * Variable the backward pass reads (`BackwardSeed`), set when `f` returns.
 *
 * @param owner Named in error messages.
 * @param f Returns the scalar objective to differentiate.
 * @param seeding The seed to start from and `of`, called once `f` has returned: the factor `c`
 *   the gradients are of `c · f()` with. Null: 1. The value returned is `f()`'s, not
 *   multiplied. A seed this call created is disposed again when the call throws.
 * @returns The objective's value and each variable's gradient (null where it has none, and for a
 *   variable that is not trainable, as `tf.variableGrads` prunes it).
 */
export function safeVariableGrads(
  owner: string,
  f: () => tf.Scalar,
  vars: tf.Variable[],
  seeding: { seed: BackwardSeed; of: () => number } | null = null,
): { value: tf.Scalar; gradients: (tf.Tensor | null)[] } {
  const trained = vars.filter((v) => v.trainable);
  if (trained.length === 0) {
    throw argumentError(owner, 'varList', 'at least one trainable variable', verbatim(`${vars.length} variable(s), none of them trainable now`));
  }
  return seeding === null ? seededGrads(owner, f, vars, trained, null) : seeding.seed.freedIfFailing(() => seededGrads(owner, f, vars, trained, seeding));
}

/** {@link safeVariableGrads}'s body, once the seed's release on failure is arranged. */
function seededGrads(
  owner: string,
  f: () => tf.Scalar,
  vars: tf.Variable[],
  trained: tf.Variable[],
  seeding: { seed: BackwardSeed; of: () => number } | null,
): { value: tf.Scalar; gradients: (tf.Tensor | null)[] } {
  let failed = false;
  let failure: unknown;
  const dy = seeding === null ? undefined : seeding.seed.tensor;
  const result = tf.engine().gradients(() => {
    try {
      const returned = f();
      // A trained variable returned as the loss would come back as the value, for the caller to
      // dispose: a copy (sharing its data) is differentiated instead.
      const y = returned instanceof tf.Variable ? tf.clone(returned) : returned;
      if (!(y instanceof tf.Tensor) || y.rank !== 0) {
        throw argumentError(owner, 'lossFn', 'a function whose objective is a scalar', verbatim(`a function that returned ${describe(y)}`));
      }
      if (y.dtype !== 'float32') {
        throw argumentError(owner, 'lossFn', 'a function that returns a float32 loss (tf.cast an integer loss first)', verbatim(`a function that returned ${describe(y)} of dtype ${y.dtype}`));
      }
      seeding?.seed.set(seeding.of());
      return y;
    } catch (error) {
      failed = true;
      failure = error;
      return tf.scalar(0);
    }
  }, trained, dy, true) as { value: tf.Scalar; grads: tf.Tensor[] };
  if (failed) {
    tf.dispose([result.value, ...result.grads.filter((g) => g != null)]);
    throw failure;
  }
  const byName = new Map(trained.map((v, i) => [v.name, result.grads[i] ?? null]));
  if (![...byName.values()].some((g) => g !== null)) {
    // The value is left to the caller's tidy: it may be a tensor the user holds, made outside f.
    throw argumentError(
      owner,
      'lossFn',
      `a function whose loss depends on at least one trained variable (${vars.length} are trained: ${vars.slice(0, 3).map((v) => `"${v.name}"`).join(', ')}${vars.length > 3 ? ', …' : ''})`,
      verbatim('a loss that depends on none of them (was the model built from other variables, or the prediction computed outside lossFn?)'),
    );
  }
  // A loss that is a trained variable (or reaches one through gradients that pass the seed on
  // unchanged) gets the seed itself as that variable's gradient: handed out as its own tensor,
  // so that the next micro-step's seed cannot change it and disposing it leaves the seed alone.
  const own = (g: tf.Tensor | null) => (g !== null && g === dy ? tf.clone(g) : g);
  return { value: result.value, gradients: vars.map((v) => own(byName.get(v.name) ?? null)) };
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

/** How a micro-batch counts: `count` samples (or one unit); its gradients are those of its loss times `weight`. */
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
 *   but not which form its loss returns), or undefined; a 1-D or `{ loss, count }` loss ignores it.
 * @param factorFor The factor the gradients are multiplied by, given what the micro-batch counts
 *   (samples, 1 for a unit, NaN for a count known only after the gradient): the window's scale
 *   2^−scale (see `windowScale`). It seeds the backward pass (see `safeVariableGrads`), where it
 *   costs nothing and the gradients come out scaled.
 * @param seed The caller's seed, kept between its micro-steps (see `BackwardSeed`). Every caller
 *   trains over many micro-steps and owns one, so there is no path that makes a seed per call.
 */
export function microBatchGradients(
  owner: string,
  averaging: Averaging,
  lossFn: () => tf.Tensor | CountedLoss,
  handed: tf.Variable[],
  sampleCount: number | undefined,
  scalarSamples: number | undefined,
  factorFor: (count: number) => number,
  seed: BackwardSeed,
): { gradients: (tf.Tensor | null)[]; objective: tf.Scalar; lossScale: LossScale; counted: LossCount; count: tf.Scalar | null } {
  let counted: LossCount = { count: 1, unit: 'micro-batches', weight: 1 };
  let count: tf.Scalar | null = null;
  let factor = 1;
  // Note: the gradients are those of the micro-batch's summed loss (a per-sample loss summed, a
  // mean times sampleCount) times the window's power-of-two scale: the seed carries both, so the
  // division by the window's sample count happens once, at the update. The objective itself is
  // the summed loss of a 1-D or `{ loss, count }` loss, or the scalar mean as returned.
  const objectiveOf = (): tf.Scalar => {
    const loss = lossFn();
    counted = countLoss(owner, averaging, loss, sampleCount, scalarSamples);
    factor = counted.weight * factorFor(counted.count);
    if (isCountedLoss(loss)) {
      // Kept past the forward pass's tidy, read with the loss in the one host read.
      count = tf.keep(tf.cast(loss.count, 'float32')) as tf.Scalar;
      return loss.loss as tf.Scalar;
    }
    return (loss.rank === 1 ? tf.sum(loss) : loss) as tf.Scalar;
  };
  let result: { gradients: (tf.Tensor | null)[]; objective: tf.Scalar };
  try {
    result = tidy(() => {
      const { value, gradients } = safeVariableGrads(owner, objectiveOf, handed, { seed, of: () => factor });
      return { gradients, objective: value };
    });
  } catch (error) {
    if (count !== null) (count as tf.Scalar).dispose();
    throw error;
  }
  // The mean loss from the objective, on the host (meanLossOf): a sum over samples divided by
  // their number, a sum over counts by the count read with it, a mean as it is.
  const c = counted as LossCount;
  const summedOver = c.unit === 'samples' ? c.count / c.weight : 1;
  const lossScale: LossScale = c.unit === 'counts' ? { by: 1, perCount: true } : { by: summedOver, perCount: false };
  return { ...result, lossScale, counted: { ...c, weight: 1 }, count };
}
