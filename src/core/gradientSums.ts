import * as tf from '@tensorflow/tfjs';
import { argumentError, checkOptions, isPositiveInteger, verbatim } from './errors';
import type { Averaging, Unit } from './state';

/**
 * A contribution to the open window that was reduced elsewhere (by worker threads, say): the
 * summed gradients of several micro-batches and what they count for. The accumulator adds the
 * sums as they are, `sum + contribution` in float32, and adds `count` to the window's divisor,
 * so the window is divided once, at the update, exactly as if the micro-batches had been stepped
 * here. (Passing `sums / count` to `addGradients` with `sampleCount = count` would round twice
 * and needs a whole count.)
 */

/** Options of `GradientAccumulator.addGradientSums`. */
export interface GradientSumsArgs {
  /**
   * What the sums are over, added to the window's divisor: samples, tokens or weights (any
   * finite number ≥ 0, fractions allowed), or micro-batches under `"per-micro-batch"`. Required.
   */
  count: number;
  /** Micro-batches summed into this contribution, a positive integer: the window counts them. Default 1. */
  microBatches?: number;
  /**
   * What `count` counts: `"samples"` (whole), `"counts"` (any number ≥ 0, e.g. unmasked tokens)
   * or `"micro-batches"` (must equal `microBatches`). Default: `"micro-batches"` under
   * `"per-micro-batch"` averaging, else `"counts"`.
   */
  unit?: Unit;
  /** Σ (each micro-batch's mean loss × its count), for the window's loss; null or left out when unknown. */
  lossSum?: number | null;
  /**
   * The sums are held times 2^−scale: the scale `openWindow` returned for the window they join
   * (a worker multiplies each gradient by it as it sums, so the sums cannot overflow float32).
   * A whole number from 0 to 64. Default 0: the sums themselves.
   */
  scale?: number;
}

/** A checked contribution, in the accumulator's own terms. */
export interface CheckedGradientSums {
  /** The variables the sums name, in the order given. */
  handed: tf.Variable[];
  /** Their summed gradients (not copied, not disposed). */
  gradients: tf.Tensor[];
  count: number;
  unit: Unit;
  microBatches: number;
  lossSum: number | null;
  scale: number;
}

/**
 * Checks a reduced contribution before anything is added: the sums (float32 tensors of their
 * variables' shapes, keyed by trained variables), the count (finite, ≥ 0; whole for samples,
 * equal to `microBatches` for micro-batches), the unit against the averaging, and the loss sum.
 *
 * @param resolve Finds the trained variable of a key, or returns null when it is not trained.
 */
export function checkGradientSums(
  owner: string,
  sums: unknown,
  args: unknown,
  averaging: Averaging,
  resolve: (name: string) => tf.Variable | null,
): CheckedGradientSums {
  if (sums === null || typeof sums !== 'object' || Array.isArray(sums) || sums instanceof tf.Tensor) {
    throw argumentError(owner, 'sums', 'a map from variable name to summed gradient tensor', sums);
  }
  if (args === undefined) throw argumentError(owner, 'args', 'an object { count, microBatches?, unit?, lossSum?, scale? }', args);
  const o = checkOptions<GradientSumsArgs>(owner, 'args', args, ['count', 'microBatches', 'unit', 'lossSum', 'scale']);
  const microBatches = o.microBatches ?? 1;
  if (!isPositiveInteger(microBatches)) throw argumentError(owner, 'args.microBatches', 'a positive integer (micro-batches in the sums), or left out for 1', o.microBatches);
  const unit: Unit = o.unit ?? (averaging === 'per-micro-batch' ? 'micro-batches' : 'counts');
  if (averaging === 'per-micro-batch' ? unit !== 'micro-batches' : unit !== 'samples' && unit !== 'counts') {
    const accepted = averaging === 'per-micro-batch' ? '"micro-batches" under "per-micro-batch" averaging' : '"samples" or "counts" under "per-sample" averaging';
    throw argumentError(owner, 'args.unit', accepted, o.unit);
  }
  const count = o.count;
  if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) throw argumentError(owner, 'args.count', 'a finite number ≥ 0 (what the sums are over)', count);
  if (unit === 'samples' && !Number.isInteger(count)) throw argumentError(owner, 'args.count', 'a whole number of samples (use unit "counts" for fractional weights)', count);
  if (unit === 'micro-batches' && count !== microBatches) throw argumentError(owner, 'args.count', `the number of micro-batches (${microBatches}) when the unit is micro-batches`, count);
  const lossSum = o.lossSum ?? null;
  if (lossSum !== null && !(typeof lossSum === 'number' && Number.isFinite(lossSum))) throw argumentError(owner, 'args.lossSum', 'a finite number, null or left out', lossSum);
  const scale = o.scale ?? 0;
  if (!(Number.isInteger(scale) && scale >= 0 && scale <= 64)) throw argumentError(owner, 'args.scale', 'a whole number from 0 to 64 (the scale openWindow returned), or left out for 0', o.scale);
  const handed: tf.Variable[] = [];
  const gradients: tf.Tensor[] = [];
  for (const [name, sum] of Object.entries(sums as Record<string, unknown>)) {
    const v = resolve(name);
    if (v === null) throw argumentError(owner, `sums["${name}"]`, 'keyed by the name of a trained variable', verbatim(`"${name}"`));
    if (!(sum instanceof tf.Tensor) || sum.isDisposed) throw argumentError(owner, `sums["${name}"]`, 'a live tf.Tensor', sum);
    if (sum.dtype !== 'float32' || !tf.util.arraysEqual(sum.shape, v.shape)) {
      throw argumentError(owner, `sums["${name}"]`, `a float32 tensor of the variable's shape [${v.shape.join(', ')}]`, verbatim(`a ${sum.dtype} tensor of shape [${sum.shape.join(', ')}]`));
    }
    handed.push(v);
    gradients.push(sum);
  }
  if (handed.length === 0) throw argumentError(owner, 'sums', 'a map with at least one summed gradient', verbatim('an empty map'));
  return { handed, gradients, count, unit, microBatches, lossSum, scale };
}
