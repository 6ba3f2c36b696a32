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

/** What a micro-step did. Losses are known only when the round is reduced. */
export interface ParallelStepResult {
  /** True when this micro-step completed a window and the weights were updated. */
  applied: boolean;
  /** `"micro-batch"` or `"window"` when a non-finite value made it skip something, else null. */
  skipped: 'micro-batch' | 'window' | null;
  microStep: number;
  updateStep: number;
  epoch: number;
  /** Micro-batches in the open window (counted and in flight), or the window's size when it just closed. */
  windowPosition: number;
  /** Micro-batches per update of this window. */
  accumulationSteps: number;
  /** Global norm before clipping; null unless `clipNorm` is set and an update was applied. */
  gradientNorm: number | null;
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
