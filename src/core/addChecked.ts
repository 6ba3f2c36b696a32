import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from './errors';

/**
 * An accumulator's micro-step in one pass over the weights: the new running sum
 * `sum + weight · gradient` and the check that every element of it is finite.
 *
 * As tfjs ops this is an add (after a multiply when the weight is not 1) and then a reduction
 * that reads the result again, two or three kernels and passes per weight. Here one kernel reads
 * the sum and the gradient once, writes the new sum, and adds `x − x` of each new element into
 * the check: exactly 0 when every element is finite, NaN as soon as one is ±Infinity or NaN
 * (∞ − ∞ = NaN), whatever the magnitudes (a plain sum of the values could overflow to ∞ from
 * finite values). The one-pass kernels live with the backend's (src/backend/kernels/addChecked.ts: WebAssembly
 * SIMD on wasm, a JS loop on cpu) and are found by name in tfjs's kernel registry, so the core
 * never imports them; without them (any other backend, or before `installFastKernels`) the same
 * arithmetic runs as tfjs ops.
 *
 * Exact: the same float32 multiply and add as `tf.add(sum, tf.mul(gradient, weight))` (or
 * `tf.mul(gradient, weight)` without a sum), so the sums are bit-identical.
 */

/** The kernel's name in tfjs's registry. */
export const ADD_CHECKED = 'TfjsAccumulateAddChecked';

/** The name of {@link addCheckedAll}'s kernel: every variable of a micro-step in one call. */
export const ADD_CHECKED_ALL = 'TfjsAccumulateAddCheckedAll';

/** The result of {@link addChecked}. */
export interface CheckedSum {
  /** `sum + weight · gradient` (or `weight · gradient` without a sum), float32, the gradient's shape. */
  sum: tf.Tensor;
  /** A float32 scalar: 0 when every element of `sum` is finite, NaN otherwise. */
  check: tf.Scalar;
}

/**
 * Adds `weight · gradient` into `sum` (null: start a new sum) and checks the result for
 * non-finite values, in one pass where the active backend has the kernel (wasm, cpu with the
 * fast kernels installed), as tfjs ops elsewhere. Pure: neither input is changed or disposed.
 *
 * An accumulator checks several weights at once by adding their checks (`tf.addN`): the total is
 * 0 when all are finite, NaN otherwise.
 */
export function addChecked(sum: tf.Tensor | null, gradient: tf.Tensor, weight = 1): CheckedSum {
  if (!(gradient instanceof tf.Tensor)) throw argumentError('addChecked', 'gradient', 'a tf.Tensor', gradient);
  if (sum !== null && !(sum instanceof tf.Tensor && tf.util.arraysEqual(sum.shape, gradient.shape))) {
    throw argumentError('addChecked', 'sum', `null or a tf.Tensor of the gradient's shape [${gradient.shape}]`, sum instanceof tf.Tensor ? verbatim(`a tensor of shape [${sum.shape}]`) : sum);
  }
  if (typeof weight !== 'number' || !Number.isFinite(weight)) throw argumentError('addChecked', 'weight', 'a finite number', weight);
  if (gradient.dtype === 'float32' && (sum === null || sum.dtype === 'float32') && tf.getKernel(ADD_CHECKED, tf.getBackend())) {
    const inputs: tf.NamedTensorMap = sum === null ? { gradient } : { sum, gradient };
    const [out, check] = tf.engine().runKernel(ADD_CHECKED, inputs, { weight }) as unknown as [tf.Tensor, tf.Scalar];
    return { sum: out, check };
  }
  return tf.tidy(() => {
    const scaled = weight === 1 ? tf.cast(gradient, 'float32') : tf.mul(gradient, weight);
    const out = sum === null ? (weight === 1 ? tf.clone(scaled) : scaled) : tf.add(sum, scaled);
    return { sum: out, check: tf.sum(tf.sub(out, out)) as tf.Scalar };
  });
}

/**
 * {@link addChecked} for every variable of a micro-step at once: the new sums and one check,
 * 0 when every element of every sum is finite, NaN otherwise. Each sum is bit for bit the one
 * `addChecked` gives.
 *
 * Why one call: a micro-step of the MLP spent about as long in tfjs's per-op dispatch (six
 * `addChecked` calls and the `addN` of their checks) as in the adds themselves. Where the
 * backend has the kernel (wasm, cpu with the fast kernels installed) this is one kernel call;
 * elsewhere it is `addChecked` per variable and the `addN`. Pure: no input is changed or disposed.
 * Where a new sum is the gradient itself (no running sum, weight 1, no divisor: a window's first
 * micro-step) the kernel only checks it and the new sum shares the gradient's data, as
 * `tf.clone` does (tfjs tensors are immutable): one read instead of a copy.
 *
 * @param divisor When given, each new sum comes back divided by it, as `tf.div(sum, divisor)`
 *   would (a float32 division, bit for bit): the window's last micro-step hands the update its
 *   averages without another pass over every gradient. The check is still of the sums.
 */
export function addCheckedAll(sums: readonly (tf.Tensor | null)[], gradients: readonly tf.Tensor[], weight = 1, divisor: number | null = null): { sums: tf.Tensor[]; check: tf.Scalar } {
  const { sums: out, read } = addCheckedAllRead(sums, gradients, weight, divisor, []);
  return { sums: out, check: read as tf.Scalar };
}

/**
 * {@link addCheckedAll} whose check comes back after the values of `carry` (float32 scalars) in
 * one float32 vector, `[...carry, check]`; a scalar, the check alone, when `carry` is empty.
 *
 * Why: an accumulator reads its micro-batch's loss (and count) and the check back in one host
 * read (`sumAndRead`, update.ts). Stacking them was a `tf.stack` per micro-step, three more
 * kernels and a scope; the kernel writes them beside the check instead. Exact: the values are
 * copied, not computed. Pure: no input is changed or disposed.
 */
export function addCheckedAllRead(
  sums: readonly (tf.Tensor | null)[],
  gradients: readonly tf.Tensor[],
  weight: number,
  divisor: number | null,
  carry: readonly tf.Tensor[],
): { sums: tf.Tensor[]; read: tf.Tensor } {
  if (sums.length !== gradients.length) throw new Error(`addCheckedAll: ${sums.length} sums for ${gradients.length} gradients.`);
  const fused =
    gradients.length > 1 &&
    Number.isFinite(weight) &&
    (divisor === null || Number.isFinite(divisor)) &&
    gradients.every((g, i) => g instanceof tf.Tensor && g.dtype === 'float32' && (sums[i] === null || (sums[i] instanceof tf.Tensor && sums[i]?.dtype === 'float32' && tf.util.arraysEqual(sums[i]?.shape ?? [], g.shape)))) &&
    carry.every((t) => t instanceof tf.Tensor && t.dtype === 'float32' && t.size === 1) &&
    tf.getKernel(ADD_CHECKED_ALL, tf.getBackend()) !== undefined;
  if (fused) {
    const inputs: tf.NamedTensorMap = {};
    gradients.forEach((g, i) => {
      inputs[`g${i}`] = g;
      const s = sums[i];
      if (s !== null) inputs[`s${i}`] = s;
    });
    carry.forEach((t, j) => (inputs[`r${j}`] = t));
    const attrs = { weight, count: gradients.length, divide: divisor !== null, divisor: divisor ?? 1, carried: carry.length };
    const outs = tf.engine().runKernel(ADD_CHECKED_ALL, inputs, attrs) as unknown as tf.Tensor[];
    return { sums: outs.slice(0, -1), read: outs[outs.length - 1] };
  }
  // One variable, another backend, or arguments for addChecked to name.
  return tf.tidy(() => {
    const added = gradients.map((g, i) => addChecked(sums[i], g, weight));
    const checks = added.map((a) => a.check);
    const check = checks.length === 0 ? tf.scalar(0) : checks.length === 1 ? checks[0] : (tf.addN(checks) as tf.Scalar);
    const read = carry.length === 0 ? check : tf.stack([...carry.map((t) => tf.reshape(tf.cast(t, 'float32'), [])), check]);
    return { sums: added.map((a) => (divisor === null ? a.sum : tf.div(a.sum, divisor))), read };
  });
}
