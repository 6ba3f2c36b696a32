import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from '../../../core/errors';
import { loadMnist } from '../../data/mnist';
import { NormExperimentArgs, NormExperimentConfig, microBatchSizesOf, resolveNormExperimentConfig } from './config';
import { NormExperimentFigures, normExperimentFigures } from './figures';
import { summarizeNormRuns, NormSummaryRow } from './summary';
import { NormExperimentProgress, NormRunRecord, trainNormRun } from './training';

export { NORM_EXPERIMENT_PRESETS, MOVING_STATISTICS, microBatchSizesOf, resolveNormExperimentConfig } from './config';
export { ERROR_BAR_WIDTH, binomialStandardError, compareErrorBars, seedStandardError, testErrorBar } from './errorBars';
export type { ErrorComparison, TestErrorBar } from './errorBars';
export { renormSchedule } from './renormSchedule';
export type { RenormSchedule, RenormScheduleArgs } from './renormSchedule';
export type { NormExperimentArgs, NormExperimentConfig } from './config';
export { WU_HE_2018, normExperimentFigures } from './figures';
export type { NormExperimentFigures } from './figures';
export { batchStatisticsDeviation } from './statistics';
export type { StatisticsDeviation } from './statistics';
export { compareTestErrors, summarizeNormRuns, summaryRowOf, testErrorOf, testErrorSpread } from './summary';
export type { NormSummaryRow } from './summary';
export type { NormExperimentProgress, NormRunRecord } from './records';

/** What {@link runNormExperiment} returns. */
export interface NormExperimentResult {
  /** The options actually used, defaults filled in (without `data` and `onProgress`). */
  config: NormExperimentConfig;
  records: NormRunRecord[];
  summary: NormSummaryRow[];
  figures: NormExperimentFigures;
  /** Wall time of the whole experiment, milliseconds. */
  wallMs: number;
  backend: string;
}

/**
 * Trains the digit network once per (normalization, microBatchSize, seed) on a fixed MNIST
 * split, always with the same logical batch reached by gradient accumulation, and reports test
 * error, training curves and wall time.
 *
 * What differs between micro-batch sizes is only what the normalization sees: with the same
 * seed every run starts from the same weights and visits the samples in the same order, and
 * every update averages the gradient over the same `logicalBatchSize` samples. In training mode
 * BatchNorm normalizes each micro-batch with that micro-batch's own statistics (the effect under
 * study) and updates its moving statistics once per micro-batch; evaluation uses the moving
 * statistics. `"frozen-batch"` takes its statistics from `statisticsSize` training images passed
 * through the initial network and keeps them. `"batch-renorm"` runs as plain BatchNorm while its
 * moving statistics settle, then opens its r/d bounds linearly to (3, 5), on the schedule of
 * {@link renormSchedule}: fully open by the middle of the run at the latest.
 *
 * The function uses whatever tfjs backend is active; choose it before calling.
 */
export async function runNormExperiment(args: NormExperimentArgs = {}): Promise<NormExperimentResult> {
  const config = resolveNormExperimentConfig(args);
  const started = performance.now();
  const ownsData = args.data === undefined;
  const data = args.data ?? loadMnist({ trainSize: config.trainSize, testSize: config.testSize });
  if (data.train.size < config.trainSize || data.test.size < config.testSize) {
    throw argumentError('runNormExperiment', 'data', `MNIST data holding at least trainSize (${config.trainSize}) training and testSize (${config.testSize}) test images`, verbatim(`${data.train.size} and ${data.test.size} images`));
  }
  const records: NormRunRecord[] = [];
  const plan = config.normalizations.flatMap((normalization) =>
    microBatchSizesOf(config, normalization).flatMap((microBatchSize) => config.seeds.map((seed) => ({ normalization, microBatchSize, seed }))),
  );
  try {
    for (const [i, run] of plan.entries()) {
      const report = (event: Omit<NormExperimentProgress, 'run' | 'runs' | 'elapsedMs' | keyof typeof run>) =>
        args.onProgress?.({ ...event, ...run, run: i + 1, runs: plan.length, elapsedMs: performance.now() - started });
      records.push(await trainNormRun(config, data, run, report));
    }
  } finally {
    if (ownsData) data.dispose();
  }
  const summary = summarizeNormRuns(records);
  return {
    config,
    records,
    summary,
    figures: normExperimentFigures(config, records, summary),
    wallMs: performance.now() - started,
    backend: tf.getBackend(),
  };
}
