import { argumentError } from './errors';
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
 * @param microBatches How many micro-batches the non-finite values came from (more than one for
 *   a contribution reduced elsewhere, see `addGradientSums` and `addNonFinite`).
 */
export function applyNonFinitePolicy(
  owner: string,
  policy: NonFinitePolicy,
  core: AccumulatorCore,
  windowSize: number,
  loss: number,
  microBatches = 1,
): { core: AccumulatorCore; skipped: 'micro-batch' | 'window' } {
  if (policy === 'error') {
    const first = core.counters.microStep + 1;
    const which = microBatches === 1 ? `micro-step ${first}` : `micro-steps ${first}–${first + microBatches - 1}`;
    throw new NonFiniteGradientError(
      `${owner}: ${which} produced a non-finite loss or gradient (loss = ${loss}). ` +
        'Weights, accumulators and counters are unchanged. Pass nonFinite: "skip-micro-batch" or "skip-window" to skip such micro-batches instead.',
    );
  }
  const next = copyCore(core);
  next.counters.microStep += microBatches;
  next.counters.skippedMicroBatches += microBatches;
  if (policy === 'skip-micro-batch') return { core: next, skipped: 'micro-batch' };
  // "skip-window": the micro-batch counts towards the window's length, and poisons it.
  next.window.size = windowSize;
  next.window.microBatches += microBatches;
  next.window.poisoned = true;
  return { core: next, skipped: 'window' };
}

/**
 * Whether a micro-batch's one host read is finite: its loss (when known), the non-finite probe of
 * its sums, and the count a `{ loss, count }` returned. A micro-batch counting 0 (all tokens
 * masked) has a loss of 0/0 but adds nothing: not a fault. A negative count is a bad loss, not a
 * non-finite one: it throws a named error.
 */
export function isMicroBatchFinite(owner: string, read: { loss: number | null; probe: number; count: number; countFromLoss: boolean }, parameter = 'lossFn'): boolean {
  const { loss, probe, count, countFromLoss } = read;
  if (countFromLoss && count < 0) throw argumentError(owner, parameter, 'a function whose { loss, count } has a count ≥ 0', count);
  const lossFinite = loss === null || Number.isFinite(loss) || (countFromLoss && count === 0);
  return probe === 0 && lossFinite && Number.isFinite(count);
}
