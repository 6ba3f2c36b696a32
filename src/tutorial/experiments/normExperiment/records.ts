import type { NormalizationKind } from '../../models';
import type { StatisticsDeviation } from './statistics';

/**
 * The plain-JSON records of the BatchNorm experiment: what one run produces, and the progress
 * events it reports. They sit apart from the training code so that the configuration (which
 * names the progress callback) and the summary (which reads the records) can use the types
 * without importing the training run, and no module imports its own importer.
 */

/** A progress event. */
export interface NormExperimentProgress {
  /** `"run-start"`, `"update"` (every `progressEvery` updates) or `"run-end"`. */
  kind: 'run-start' | 'update' | 'run-end';
  /** 1-based index of the run, and the number of runs. */
  run: number;
  runs: number;
  normalization: NormalizationKind;
  microBatchSize: number;
  seed: number;
  /** Updates done in this run, and planned. */
  updateStep: number;
  updates: number;
  /** Mean training loss of the last window (null at run start). */
  loss: number | null;
  /** Milliseconds since the experiment started. */
  elapsedMs: number;
  /** The finished run's record (for `"run-end"`). */
  record?: NormRunRecord;
}

/** One training run: one normalization, one micro-batch size, one seed. Plain JSON. */
export interface NormRunRecord {
  model: 'cnn' | 'mlp';
  normalization: NormalizationKind;
  microBatchSize: number;
  accumulationSteps: number;
  logicalBatchSize: number;
  seed: number;
  /** Optimizer updates applied. */
  updates: number;
  /** Per update: the window's training loss (sample-weighted mean over its micro-batches, unscaled). */
  lossCurve: number[];
  /** Mean training loss over the first and the last tenth of the updates (at least one each). */
  initialLoss: number;
  finalLoss: number;
  /** Share of test images misclassified, in inference mode (moving statistics). */
  testError: number;
  /** Test images scored: the n of the test error's binomial error bar. */
  testSize: number;
  /**
   * `"batch"` and `"batch-renorm"` only (else null): the test error after the moving statistics
   * were replaced by statistics of `statisticsSize` training images, computed in one large batch.
   */
  testErrorRecomputed: number | null;
  /**
   * `"batch"` and `"batch-renorm"` only (else null): how far the statistics of micro-batches of
   * this run's size are from the population's, per normalization layer, measured on the trained
   * model over `statisticsSize` training images. See {@link batchStatisticsDeviation}.
   */
  statisticsDeviation: StatisticsDeviation[] | null;
  /** The per-call momentum the moving statistics used (null without moving statistics). */
  callMomentum: number | null;
  /**
   * `"batch-renorm"` only (else null): the clipping bounds in force when training ended; the
   * layer's (rMax, dMax), 3 and 5, once the warm-up and ramp of {@link renormSchedule} are over.
   */
  renormBounds: { rMax: number; dMax: number } | null;
  /** Training wall time (forward, backward, updates), milliseconds. */
  trainMs: number;
  /** Evaluation wall time, milliseconds. */
  evalMs: number;
  /** The tfjs backend the run used. */
  backend: string;
}
