import * as tf from '@tensorflow/tfjs';
import { GradientAccumulator } from '../../../core/gradientAccumulator';
import { MnistData, mnistMicroBatches } from '../../data/mnist';
import { NormalizationKind, cnn, mlp } from '../../models';
import { recomputeBatchNormStatistics } from '../../../core/norm/frozenBatchNormalization';
import { BatchRenormalization } from '../../../core/norm/batchRenormalization';
import { MOVING_STATISTICS, NormExperimentConfig } from './config';
import { renormSchedule } from './renormSchedule';
import type { NormExperimentProgress, NormRunRecord } from './records';
import { StatisticsDeviation, batchStatisticsDeviation } from './statistics';
import { mean } from './summary';

export type { NormExperimentProgress, NormRunRecord } from './records';

/**
 * One training run of the BatchNorm experiment (one normalization, one micro-batch size, one
 * seed) and its evaluation, with the record it produces and the progress events it reports.
 */

/** Receives a run's progress; the experiment adds which run it is and the time. */
export type NormRunReporter = (event: { kind: NormExperimentProgress['kind']; updateStep: number; updates: number; loss: number | null; record?: NormRunRecord }) => void;

/** Trains and evaluates one model; the caller owns `data`. */
export async function trainNormRun(
  config: NormExperimentConfig,
  data: MnistData,
  run: { normalization: NormalizationKind; microBatchSize: number; seed: number },
  report: NormRunReporter,
): Promise<NormRunRecord> {
  const { normalization, microBatchSize, seed } = run;
  const accumulationSteps = config.logicalBatchSize / microBatchSize;
  const hasMovingStatistics = MOVING_STATISTICS.includes(normalization);
  const callMomentum = hasMovingStatistics ? config.movingMomentum ** (microBatchSize / config.logicalBatchSize) : null;
  const windowsPerEpoch = Math.ceil(config.trainSize / config.logicalBatchSize);
  const updates = windowsPerEpoch * config.epochs;
  const build = config.model === 'cnn' ? cnn : mlp;
  const model = build({
    normalization,
    seed: seed * 101, // spaced out: a model draws seeds seed, seed + 1, … for its layers
    momentum: callMomentum ?? undefined,
    renorm: renormSchedule({ updates, accumulationSteps, movingMomentum: config.movingMomentum }),
  });
  const optimizer = tf.train.adam(config.learningRate);
  const accumulator = new GradientAccumulator({ optimizer, accumulationSteps, varList: model.trainableWeights });
  const lossCurve: number[] = [];
  report({ kind: 'run-start', updateStep: 0, updates, loss: null });
  try {
    if (normalization === 'frozen-batch') {
      // Frozen statistics need values before training from scratch: those of the initial network on real data.
      const sample = tf.tidy(() => data.train.xs.slice(0, config.statisticsSize));
      recomputeBatchNormStatistics(model, sample);
      sample.dispose();
    }
    const trainStart = performance.now();
    const train = { ...data.train, size: config.trainSize };
    for (let epoch = 0; epoch < config.epochs; epoch++) {
      let windowLoss = 0;
      let windowSamples = 0;
      for (const { xs, ys } of mnistMicroBatches(train, { microBatchSize, seed, epoch })) {
        const count = xs.shape[0];
        const result = accumulator.step(
          () => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor, undefined, undefined, tf.Reduction.NONE),
          { sampleCount: count },
        );
        tf.dispose([xs, ys]);
        windowLoss += result.loss * count;
        windowSamples += count;
        if (result.applied) {
          lossCurve.push(windowLoss / windowSamples);
          windowLoss = 0;
          windowSamples = 0;
          if (lossCurve.length % config.progressEvery === 0) {
            report({ kind: 'update', updateStep: lossCurve.length, updates, loss: lossCurve[lossCurve.length - 1] });
            await new Promise((resolve) => setImmediate(resolve));
          }
        }
      }
      // A short last window (trainSize not a multiple of logicalBatchSize) is applied, not lost.
      if (accumulator.endEpoch()?.applied) lossCurve.push(windowLoss / windowSamples);
    }
    const trainMs = performance.now() - trainStart;
    // Read after training: shows whether the run lasted long enough for the corrections to open.
    const renormLayer = model.layers.find((l): l is BatchRenormalization => l instanceof BatchRenormalization);
    const renormBounds = renormLayer ? renormLayer.currentBounds() : null;

    const evalStart = performance.now();
    const testError = errorRate(model, data, config.testSize);
    let testErrorRecomputed: number | null = null;
    let statisticsDeviation: StatisticsDeviation[] | null = null;
    // Only layers whose moving statistics estimate what training normalized with: a frozen
    // layer's statistics are part of the function it was trained as, and replacing them after
    // training makes it worse.
    if (hasMovingStatistics) {
      const sample = tf.tidy(() => data.train.xs.slice(0, config.statisticsSize));
      if (config.statisticsSize >= 2 * microBatchSize) {
        statisticsDeviation = batchStatisticsDeviation(model, sample, microBatchSize);
      }
      recomputeBatchNormStatistics(model, sample);
      sample.dispose();
      testErrorRecomputed = errorRate(model, data, config.testSize);
    }
    const evalMs = performance.now() - evalStart;
    const tenth = Math.max(1, Math.floor(lossCurve.length / 10));
    const record: NormRunRecord = {
      model: config.model,
      normalization,
      microBatchSize,
      accumulationSteps,
      logicalBatchSize: config.logicalBatchSize,
      seed,
      updates: lossCurve.length,
      lossCurve,
      initialLoss: mean(lossCurve.slice(0, tenth)),
      finalLoss: mean(lossCurve.slice(-tenth)),
      testError,
      testSize: config.testSize,
      testErrorRecomputed,
      statisticsDeviation,
      callMomentum,
      renormBounds,
      trainMs,
      evalMs,
      backend: tf.getBackend(),
    };
    report({ kind: 'run-end', updateStep: lossCurve.length, updates, loss: lossCurve[lossCurve.length - 1] ?? null, record });
    return record;
  } finally {
    accumulator.dispose();
    model.dispose();
  }
}

/** Share of the first `testSize` test images whose arg-max logit is not the label (inference mode). */
function errorRate(model: tf.LayersModel, data: MnistData, testSize: number): number {
  const chunk = 250;
  let wrong = 0;
  for (let start = 0; start < testSize; start += chunk) {
    const size = Math.min(chunk, testSize - start);
    const predicted = tf.tidy(() => tf.argMax(model.apply(data.test.xs.slice(start, size), { training: false }) as tf.Tensor, 1));
    const values = predicted.dataSync();
    predicted.dispose();
    for (let i = 0; i < size; i++) if (values[i] !== data.test.labels[start + i]) wrong++;
  }
  return wrong / testSize;
}
