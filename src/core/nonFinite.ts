import { AccumulatorCore, copyCore } from './state';

/**
 * What a NaN or ±Infinity in a micro-batch's loss or accumulated gradient does. Whatever the
 * policy, a non-finite value never reaches the weights.
 *
 * - `"error"` (default): `step` throws; weights, accumulators and counters stay as they were.
 * - `"skip-micro-batch"`: the micro-batch is dropped and does not count towards the window, so
 *   the window waits for one more good micro-batch.
 * - `"skip-window"`: the whole window is dropped: it still ends after `accumulationSteps`
 *   micro-batches, but then no update is applied and the accumulators are zeroed.
 */
export type NonFinitePolicy = 'error' | 'skip-micro-batch' | 'skip-window';

export const NON_FINITE_POLICIES: readonly NonFinitePolicy[] = ['error', 'skip-micro-batch', 'skip-window'];

/** Thrown by `nonFinite: "error"`. Weights, accumulators and counters are unchanged when it is thrown. */
export class NonFiniteGradientError extends Error {
  override name = 'NonFiniteGradientError';
}

/**
 * The whole non-finite policy, in one place: given the state before a micro-step whose loss or
 * gradient is not finite, returns the state after it (the caller commits it), or throws under
 * `"error"` (the caller commits nothing). The accumulators are never touched by a skipped
 * micro-batch.
 *
 * @param windowSize The size the window has (or gets, if this is its first micro-step).
 * @param loss The micro-batch's loss as read, for the message.
 */
export function applyNonFinitePolicy(
  owner: string,
  policy: NonFinitePolicy,
  core: AccumulatorCore,
  windowSize: number,
  loss: number,
): { core: AccumulatorCore; skipped: 'micro-batch' | 'window' } {
  if (policy === 'error') {
    throw new NonFiniteGradientError(
      `${owner}: micro-step ${core.counters.microStep + 1} produced a non-finite loss or gradient (loss = ${loss}). ` +
        'Weights, accumulators and counters are unchanged. Pass nonFinite: "skip-micro-batch" or "skip-window" to skip such micro-batches instead.',
    );
  }
  const next = copyCore(core);
  next.counters.microStep += 1;
  next.counters.skippedMicroBatches += 1;
  if (policy === 'skip-micro-batch') return { core: next, skipped: 'micro-batch' };
  // "skip-window": the micro-batch counts towards the window's length, and poisons it.
  next.window.size = windowSize;
  next.window.microBatches += 1;
  next.window.poisoned = true;
  return { core: next, skipped: 'window' };
}
