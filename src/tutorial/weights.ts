import * as tf from '@tensorflow/tfjs';
import { argumentError } from '../core/errors';

/**
 * Snapshots of a model's weights and the one comparison the whole project uses to call two sets
 * of weights equal. Plain host arrays, so a snapshot survives the model it came from.
 */

/** A copy of weight values, one array per weight, in the order the model lists them. */
export type WeightSnapshot = Float32Array[];

/**
 * Copies the current values of a model's weights (all of them, trainable or not, as
 * `model.weights` lists them), or of a list of variables.
 *
 * Note: this reads every weight back to the host, once; use it to check results, not inside a
 * training loop.
 */
export function weightsOf(source: tf.LayersModel | readonly (tf.Variable | { read(): tf.Tensor })[]): WeightSnapshot {
  const list = source instanceof tf.LayersModel ? source.weights : source;
  if (!Array.isArray(list)) {
    throw argumentError('weightsOf', 'source', 'a tf.LayersModel or an array of variables', source);
  }
  return list.map((w, i) => {
    const tensor = w instanceof tf.Tensor ? w : typeof w?.read === 'function' ? w.read() : null;
    if (!(tensor instanceof tf.Tensor) || tensor.isDisposed) {
      throw argumentError('weightsOf', `source[${i}]`, 'a live tf.Variable or LayerVariable', w);
    }
    return Float32Array.from(tensor.dataSync() as ArrayLike<number>);
  });
}

/**
 * `max |a − b| / max |b|` over every value of every weight: the difference relative to the
 * largest weight of the reference `b`. This is the measure behind every "equal within 1e-5"
 * in the tests and notebooks; it is 0 for identical snapshots and does not blow up where a
 * single weight happens to be near zero, as an element-wise relative difference would.
 *
 * @throws If the snapshots do not have the same number of weights and values per weight.
 */
export function maxRelativeDifference(a: readonly ArrayLike<number>[], b: readonly ArrayLike<number>[]): number {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length || a.some((w, i) => w?.length !== b[i]?.length)) {
    throw argumentError('maxRelativeDifference', '(a, b)', 'two snapshots of the same weights (same count and sizes, e.g. from weightsOf)', a);
  }
  let diff = 0;
  let scale = 0;
  a.forEach((values, i) => {
    for (let k = 0; k < values.length; k++) {
      diff = Math.max(diff, Math.abs(values[k] - b[i][k]));
      scale = Math.max(scale, Math.abs(b[i][k]));
    }
  });
  if (diff === 0) return 0;
  return diff / scale;
}

/**
 * How far the weights moved: `‖after − before‖` over every value of every weight (in float64).
 * Chapter 3 compares two rules by the ratio of their updates' sizes.
 *
 * @throws If the snapshots do not have the same number of weights and values per weight.
 */
export function updateNorm(before: readonly ArrayLike<number>[], after: readonly ArrayLike<number>[]): number {
  if (!Array.isArray(before) || !Array.isArray(after) || before.length !== after.length || after.some((w, i) => w?.length !== before[i]?.length)) {
    throw argumentError('updateNorm', '(before, after)', 'two snapshots of the same weights (same count and sizes, e.g. from weightsOf)', after);
  }
  let sum = 0;
  before.forEach((values, i) => {
    for (let k = 0; k < values.length; k++) sum += (after[i][k] - values[k]) ** 2;
  });
  return Math.sqrt(sum);
}

/**
 * How wrong an update is: `‖Δa − Δb‖ / ‖Δb‖`, where `Δa = after − before` is the update a rule
 * made and `Δb = reference − before` the one it should have made, norms over every value of
 * every weight (in float64). After one small step the weights barely move, so a difference
 * relative to the weights ({@link maxRelativeDifference}) stays small however wrong the update
 * is; this is relative to the update itself: 0 for the right update, 1 for no update, |c − 1|
 * for an update c times the right one (0.5 for one half too long).
 *
 * @throws If the three snapshots do not hold the same weights, or the reference did not move.
 */
export function updateRelativeError(before: readonly ArrayLike<number>[], after: readonly ArrayLike<number>[], reference: readonly ArrayLike<number>[]): number {
  const same = (s: readonly ArrayLike<number>[]): boolean => Array.isArray(s) && s.length === before.length && s.every((w, i) => w?.length === before[i]?.length);
  if (!Array.isArray(before) || !same(after) || !same(reference)) {
    throw argumentError('updateRelativeError', '(before, after, reference)', 'three snapshots of the same weights (same count and sizes, e.g. from weightsOf)', after);
  }
  const size = updateNorm(before, reference);
  if (size === 0) throw argumentError('updateRelativeError', 'reference', 'weights that moved from `before` (the update to compare with)', reference);
  // ‖Δa − Δb‖ = ‖after − reference‖: `before` cancels.
  return updateNorm(reference, after) / size;
}
