import * as tf from '@tensorflow/tfjs';
import { argumentError, describe, verbatim } from './errors';
import { Averaging, Unit } from './state';

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
export function countLoss(owner: string, averaging: Averaging, loss: unknown, sampleCount: number | undefined): LossCount {
  const returned = () => verbatim(`a function that returned ${describe(loss)}`);
  if (!(loss instanceof tf.Tensor)) {
    throw argumentError(owner, 'lossFn', 'a function that returns a tf.Tensor (a scalar mean loss, or a 1-D per-sample loss)', returned());
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
  if (sampleCount !== undefined) return { count: sampleCount, unit: 'samples', weight: sampleCount };
  return { count: 1, unit: 'micro-batches', weight: 1 };
}
