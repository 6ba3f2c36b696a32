import type { StepResult } from '../core/accumulatorArgs';

/** What `ParallelAccumulator` reports: per micro-step, per window, per reduction. */

/** A window's measurements, returned when a reduce happened. */
export interface RoundReport {
  /** Each micro-batch's mean loss, in the order `step` received them (NaN/±Infinity where non-finite). */
  losses: number[];
  /** The count-weighted mean loss of the round's finite micro-batches. */
  meanLoss: number;
  /** Wall-clock milliseconds: per-worker compute, waiting for the reduce, packing, summing, the update, and sending weights. */
  timing: { computeMs: number[]; waitMs: number; packMs: number; unpackMs: number; reduceMs: number; updateMs: number; broadcastMs: number };
  /** Bytes crossing threads: micro-batches sent, gradient sums reduced, weights read by the workers after an update. */
  bytes: { microBatches: number; gradients: number; weights: number };
}

/**
 * What a micro-step did: the single-thread accumulator's counters and flags (see `StepResult`),
 * without its losses, which are known only when the round is reduced (see `round`).
 */
export interface ParallelStepResult extends Omit<StepResult, 'loss' | 'windowLoss' | 'sampleCount' | 'skipped' | 'windowPosition'> {
  /** `"micro-batch"` or `"window"` when a non-finite value made it skip something, else null. */
  skipped: 'micro-batch' | 'window' | null;
  /** Micro-batches in the open window (counted and in flight), or the window's size when it just closed. */
  windowPosition: number;
  /** The reduce's report when this micro-step ended a round, else null. */
  round: RoundReport | null;
}

/** What ending a window by `flush` did. */
export interface ParallelUpdateResult {
  applied: boolean;
  skipped: 'window' | null;
  updateStep: number;
  microBatches: number;
  /** Count the gradient was averaged over; 0 when nothing was applied. */
  weight: number;
  gradientNorm: number | null;
  round: RoundReport | null;
}
