/**
 * What a NaN or ±Infinity in a micro-batch's loss or accumulated gradient does. Whatever the
 * policy, a non-finite value never reaches the weights.
 *
 * - `"error"` (default): `step` throws; weights, accumulators and counters stay as they were.
 * - `"skip-micro-batch"`: the micro-batch is dropped and does not count towards the window, so
 *   the window waits for one more good micro-batch.
 * - `"skip-window"`: the whole window is dropped: it still ends after `accumulationSteps`
 *   micro-batches, but then no update is applied and the accumulators are zeroed.
 *
 * The policy itself is applied in one place, `skipNonFinite` in update.ts.
 */
export type NonFinitePolicy = 'error' | 'skip-micro-batch' | 'skip-window';

export const NON_FINITE_POLICIES: readonly NonFinitePolicy[] = ['error', 'skip-micro-batch', 'skip-window'];

/** Thrown by `nonFinite: "error"`. Weights, accumulators and counters are unchanged when it is thrown. */
export class NonFiniteGradientError extends Error {
  override name = 'NonFiniteGradientError';
}
