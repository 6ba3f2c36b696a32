import * as tf from '@tensorflow/tfjs';
import { addCheckedAllRead } from './addChecked';

/**
 * The pure tensor math of gradient accumulation: adding into the sums, the one division, the
 * global norm and clipping. Nothing here owns state or touches a Variable: the update path
 * (update.ts, applyWindow.ts) keeps the state and calls these functions, and the tests check
 * them directly.
 */

/**
 * Adds gradients into running sums, `sum + factor · gradient` for each, and checks every new sum
 * in the same pass: the one place where a gradient joins a sum (an accumulator's window, a
 * parallel worker's part, `checkEquivalence`). The adds are `addCheckedAll`: one kernel call for
 * every variable where the backend has it. A null gradient (the variable did not influence this micro-batch's loss)
 * leaves its sum as it is; a null sum starts from the gradient.
 *
 * Pure: no input is changed or disposed.
 *
 * @param factor What every gradient is multiplied by: the window's scale 2^−scale (see
 *   `windowScale`), times the samples when the gradient is of a mean loss. 1 skips the multiply.
 * @param divisor When given, the new sums come back divided by it, bit for bit
 *   `averageGradients`'s division (the window's last micro-step, see `addContribution`); every
 *   sum must then have a gradient. The probe still checks the undivided sums.
 * @returns The new sums (new tensors where a gradient was added, the caller's own tensor or null
 *   elsewhere) and `probe`, a float32 scalar: 0 when every new sum is finite, NaN as soon as one
 *   element is NaN or ±Infinity.
 */
export function addIntoSums(sums: readonly (tf.Tensor | null)[], gradients: readonly (tf.Tensor | null)[], factor: number, divisor: number | null = null): { sums: (tf.Tensor | null)[]; probe: tf.Scalar } {
  const { sums: next, read } = addIntoSumsRead(sums, gradients, factor, divisor, []);
  return { sums: next, probe: read as tf.Scalar };
}

/**
 * {@link addIntoSums} whose probe comes back after the values of `carry` (float32 scalars: a
 * micro-batch's loss, its count) in one float32 vector `[...carry, probe]`, ready for the
 * micro-step's one host read (`sumAndRead`, update.ts; see `addCheckedAllRead`).
 */
export function addIntoSumsRead(
  sums: readonly (tf.Tensor | null)[],
  gradients: readonly (tf.Tensor | null)[],
  factor: number,
  divisor: number | null,
  carry: readonly tf.Tensor[],
): { sums: (tf.Tensor | null)[]; read: tf.Tensor } {
  if (sums.length !== gradients.length) throw new Error(`addIntoSums: ${sums.length} sums for ${gradients.length} gradients.`);
  if (divisor !== null && sums.some((s, i) => s !== null && gradients[i] === null)) {
    throw new Error('addIntoSums: with a divisor, every sum needs a gradient: a sum kept as it is would not be divided.');
  }
  // The variables with a gradient, added in one call (addCheckedAll); the others keep their sum.
  const at: number[] = [];
  for (let i = 0; i < gradients.length; i++) if (gradients[i] !== null) at.push(i);
  const added = addCheckedAllRead(at.map((i) => sums[i]), at.map((i) => gradients[i] as tf.Tensor), factor, divisor, carry);
  const next = [...sums];
  at.forEach((i, k) => (next[i] = added.sums[k]));
  return { sums: next, read: added.read };
}

/**
 * Turns summed gradients into the gradient of the mean loss over the window: the one division.
 *
 * Dividing once at the end, by the weight actually seen, is what makes uneven micro-batches and
 * a short last window exact. For a full window of equal micro-batches it equals the usual rule
 * of scaling every micro-batch loss by `1 / accumulationSteps`.
 *
 * @param scale The sums are held times 2^−scale (see `windowScale`); dividing by
 *   `totalWeight · 2^−scale` gives bit for bit the division of the unscaled sums.
 */
export function averageGradients(sums: tf.Tensor[], totalWeight: number, scale = 0): tf.Tensor[] {
  if (!(totalWeight > 0)) throw new Error(`averageGradients: totalWeight must be > 0; got ${totalWeight}.`);
  const divisor = totalWeight * 2 ** -scale;
  return tidy(() => sums.map((s) => tf.div(s, divisor)));
}

/**
 * `tf.tidy` for results that hold nulls beside tensors (a gradient per variable, null where a
 * variable has none). tfjs walks such containers and skips the nulls at run time; only its
 * `TensorContainer` type refuses them.
 */
export function tidy<T>(fn: () => T): T {
  return tf.tidy(fn as unknown as () => tf.TensorContainer) as unknown as T;
}

/**
 * The global L2 norm as two factors that cannot overflow: `maxAbs`, the largest magnitude of any
 * element, and `scaledNorm`, the norm of the tensors divided by `maxAbs` (between 1 and
 * sqrt(element count)). The norm is `maxAbs · scaledNorm`; squaring unscaled float32 values
 * overflows to Infinity from about 1.8e19 on.
 */
export function scaledGlobalNorm(tensors: tf.Tensor[]): { maxAbs: tf.Scalar; scaledNorm: tf.Scalar } {
  return tf.tidy(() => {
    if (tensors.length === 0) return { maxAbs: tf.scalar(0), scaledNorm: tf.scalar(0) };
    const maxAbs = tf.max(tf.stack(tensors.map((t) => tf.max(tf.abs(t))))) as tf.Scalar;
    // An all-zero gradient divides by 1 instead of 0; its scaled norm is then 0.
    const divisor = tf.where(tf.greater(maxAbs, 0), maxAbs, tf.onesLike(maxAbs));
    const squares = tensors.map((t) => tf.sum(tf.square(tf.div(t, divisor))));
    const scaledNorm = tf.sqrt(squares.length === 1 ? squares[0] : tf.addN(squares)) as tf.Scalar;
    return { maxAbs, scaledNorm };
  });
}

/**
 * The global L2 norm of a list of tensors: the norm of all their elements taken together.
 * Computed from {@link scaledGlobalNorm}, so it is finite whenever it fits in float32.
 */
export function globalNorm(tensors: tf.Tensor[]): tf.Scalar {
  return tf.tidy(() => {
    const { maxAbs, scaledNorm } = scaledGlobalNorm(tensors);
    return tf.mul(maxAbs, scaledNorm) as tf.Scalar;
  });
}

/**
 * Scales the tensors so that their global norm is at most `clipNorm`, as
 * `torch.nn.utils.clip_grad_norm_` and `optax.clip_by_global_norm` do.
 *
 * Note: the factor is applied to the tensors divided by their largest magnitude,
 * `(t / maxAbs) · (clipNorm / scaledNorm)`, so that no intermediate overflows: gradients up to
 * float32's largest value are clipped to a step exactly `clipNorm` long (PyTorch and optax
 * compute `sqrt(Σ g²)` directly, which is Infinity from about 1.8e19, and then step by zero).
 * There is no epsilon, so a gradient already inside the ball is returned unchanged, bit for bit.
 *
 * @returns The clipped tensors, and the norm they had before clipping as its two factors
 *   (multiply them in float64 on the host for a norm that cannot overflow).
 */
export function clipByGlobalNorm(
  tensors: tf.Tensor[],
  clipNorm: number,
): { clipped: tf.Tensor[]; norm: tf.Scalar; maxAbs: tf.Scalar; scaledNorm: tf.Scalar } {
  if (!(clipNorm > 0) || !Number.isFinite(clipNorm)) {
    throw new Error(`clipByGlobalNorm: clipNorm must be a finite number > 0; got ${clipNorm}.`);
  }
  return tf.tidy(() => {
    const { maxAbs, scaledNorm } = scaledGlobalNorm(tensors);
    const norm = tf.mul(maxAbs, scaledNorm) as tf.Scalar; // Infinity only past float32's range
    const outside = tf.greater(norm, clipNorm);
    const safeMax = tf.where(tf.greater(maxAbs, 0), maxAbs, tf.onesLike(maxAbs));
    const factor = tf.div(clipNorm, tf.where(outside, scaledNorm, tf.onesLike(scaledNorm)));
    const clipped = tensors.map((t) => tf.where(outside, tf.mul(tf.div(t, safeMax), factor), t));
    return { clipped, norm, maxAbs, scaledNorm };
  });
}
