import type { StepResult, UpdateResult } from '../core/accumulatorArgs';
import type { WorkerTiming } from './protocol';

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
  /** Each worker's own account of the round, measured inside it (zeros for a worker that had no micro-batch). */
  workers: WorkerTiming[];
}

/**
 * What a micro-step did: the single-thread accumulator's counters and flags (see `StepResult`),
 * without its losses, which are known only when the round is reduced (see `round`).
 */
export interface ParallelStepResult extends Omit<StepResult, 'loss' | 'windowLoss' | 'sampleCount' | 'skipped' | 'windowPosition'> {
  /** `"micro-batch"` or `"window"` when a non-finite value made it skip something, `"large-update"` when its window's norm was too large, else null. */
  skipped: 'micro-batch' | 'window' | 'large-update' | null;
  /** Micro-batches in the open window (counted and in flight), or the window's size when it just closed. */
  windowPosition: number;
  /** The reduce's report when this micro-step ended a round, else null. */
  round: RoundReport | null;
}

/** What ending a window by `flush` or `endEpoch` did: the core's `UpdateResult`, and the reduce's report when the workers held micro-batches. */
export interface ParallelUpdateResult extends UpdateResult {
  round: RoundReport | null;
}
