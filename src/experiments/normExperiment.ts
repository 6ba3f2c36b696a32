import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveFinite, isPositiveInteger, verbatim } from '../errors';
import { GradientAccumulator } from '../gradientAccumulator';
import { MnistData, loadMnist, mnistMicroBatches } from '../data/mnist';
import { NORMALIZATIONS, NormalizationKind, checkNormalization, cnn, mlp } from '../models';
import { recomputeBatchNormStatistics } from '../norm/frozenBatchNormalization';
import { PlotlyFigure, Series, lineChart } from '../plot';

/**
 * Wu & He 2018 ("Group Normalization", Figure 1 / Table 2): ResNet-50 top-1 validation error
 * (%) on ImageNet by images per GPU, for BatchNorm and GroupNorm. The reference shape this
 * experiment looks for at small scale.
 */
export const WU_HE_2018 = {
  imagesPerGpu: [32, 16, 8, 4, 2],
  batchNorm: [23.6, 23.7, 24.8, 27.3, 34.7],
  groupNorm: [24.1, 24.2, 24.0, 24.2, 24.1],
} as const;

/** The layers whose moving statistics track the micro-batches' during training. */
const MOVING_STATISTICS: readonly NormalizationKind[] = ['batch', 'batch-renorm'];

/** Options of {@link runNormExperiment}. Defaults are the `"default"` preset. */
export interface NormExperimentArgs {
  /** The network: `"cnn"` (default) or `"mlp"`. */
  model?: 'cnn' | 'mlp';
  /** Normalizations to compare. Default: all six of `NORMALIZATIONS`. */
  normalizations?: NormalizationKind[];
  /** Micro-batch sizes; each must divide `logicalBatchSize`. Default [1, 2, 4, 8, 16, 32]. */
  microBatchSizes?: number[];
  /** Samples per optimizer update, reached by accumulating `logicalBatchSize / microBatchSize` micro-batches. Default 32. */
  logicalBatchSize?: number;
  /** Seeds: each seeds the model's initial weights and the data order. Default [0, 1]. */
  seeds?: number[];
  /** Training images from the fixed MNIST training split. Default 1536 (48 updates of 32 per epoch). */
  trainSize?: number;
  /** Test images from the fixed MNIST test split. Default 1000. */
  testSize?: number;
  /** Passes over the training images. Default 1. */
  epochs?: number;
  /** Adam learning rate. Default 1e-3. */
  learningRate?: number;
  /**
   * Momentum of the moving statistics per *logical batch*. Default 0.9. The layers update their
   * moving statistics on every micro-batch, so the per-call momentum is
   * `movingMomentum ** (microBatchSize / logicalBatchSize)`: whatever the micro-batch size, the
   * averages then forget at the same rate per sample seen (a horizon of about
   * `logicalBatchSize / (1 - movingMomentum)` = 320 samples by default). With the same per-call
   * momentum for every size, micro-batches of 1 would average 32 times fewer samples.
   */
  movingMomentum?: number;
  /**
   * Training images whose statistics initialize `"frozen-batch"` layers before training (they
   * then stay frozen), recompute the moving statistics of `"batch"` and `"batch-renorm"` after
   * training for `testErrorRecomputed`, and measure `statisticsDeviation`. Default 512.
   */
  statisticsSize?: number;
  /** Report an `"update"` progress event every this many updates. Default 10. */
  progressEvery?: number;
  /** Already loaded MNIST data to use instead of loading it (it must hold trainSize/testSize images). Default: loaded and disposed by the run. */
  data?: MnistData;
  /** Called as the experiment runs. Default: none. */
  onProgress?: (event: NormExperimentProgress) => void;
}

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
  /** Training wall time (forward, backward, updates), milliseconds. */
  trainMs: number;
  /** Evaluation wall time, milliseconds. */
  evalMs: number;
  /** The tfjs backend the run used. */
  backend: string;
}

/** How far micro-batch statistics are from the population's at one normalization layer. */
export interface StatisticsDeviation {
  /** Index of the layer in `model.layers`. */
  layer: number;
  /** Values each per-channel statistic averages: microBatchSize x spatial positions. */
  valuesPerStatistic: number;
  /** Mean over micro-batches and channels of |mu_B - mu| / sigma (Ioffe's |d|). */
  meanShift: number;
  /** Mean over micro-batches and channels of |sigma_B / sigma - 1| (Ioffe's |r - 1|). */
  scaleShift: number;
}

/**
 * Measures, at every BatchNormalization or BatchRenormalization layer of a sequential model, how
 * far the statistics of micro-batches of `microBatchSize` samples are from the statistics of
 * the whole of `xs` (the population, here): the noise that training-mode batch normalization
 * puts into every forward pass. A convolution layer's statistic averages `microBatchSize` x
 * height x width values, a dense layer's only `microBatchSize`: this is why the effect of small
 * micro-batches is much weaker in a CNN than in an MLP.
 *
 * @param model A `tf.Sequential`; the layers before each measured layer run in inference mode.
 * @param xs Samples, e.g. a few hundred training images; whole micro-batches of them are used.
 * @param microBatchSize Samples per micro-batch.
 */
export function batchStatisticsDeviation(model: tf.Sequential, xs: tf.Tensor, microBatchSize: number): StatisticsDeviation[] {
  const owner = 'batchStatisticsDeviation';
  if (!(model instanceof tf.Sequential)) throw argumentError(owner, 'model', 'a tf.Sequential', model);
  if (!isPositiveInteger(microBatchSize) || !(xs instanceof tf.Tensor) || xs.shape[0] < 2 * microBatchSize) {
    throw argumentError(owner, 'microBatchSize', `a positive integer, at most half the samples in xs (${xs?.shape?.[0]})`, microBatchSize);
  }
  const found: StatisticsDeviation[] = [];
  tf.tidy(() => {
    let h = xs;
    model.layers.forEach((layer, index) => {
      const name = layer.getClassName();
      if (name === 'BatchNormalization' || name === 'BatchRenormalization') {
        const epsilon = (layer as unknown as { epsilon: number }).epsilon;
        const channels = h.shape[h.rank - 1];
        const spatial = h.shape.slice(1, -1) as number[];
        const positions = spatial.reduce((a, b) => a * b, 1);
        const groups = Math.floor(h.shape[0] / microBatchSize);
        const population = tf.moments(h, [...Array(h.rank - 1).keys()]);
        // [groups, microBatchSize * positions, channels]: one row of statistics per micro-batch.
        const grouped = tf.reshape(h.slice(0, groups * microBatchSize), [groups, microBatchSize * positions, channels]);
        const micro = tf.moments(grouped, 1);
        const sigma = tf.sqrt(tf.add(population.variance, epsilon));
        const meanShift = tf.mean(tf.div(tf.abs(tf.sub(micro.mean, population.mean)), sigma));
        const scaleShift = tf.mean(tf.abs(tf.sub(tf.div(tf.sqrt(tf.add(micro.variance, epsilon)), sigma), 1)));
        found.push({ layer: index, valuesPerStatistic: microBatchSize * positions, meanShift: meanShift.dataSync()[0], scaleShift: scaleShift.dataSync()[0] });
      }
      h = layer.apply(h, { training: false }) as tf.Tensor;
    });
  });
  return found;
}

/** Seed-aggregated results of one (normalization, microBatchSize) pair. */
export interface NormSummaryRow {
  normalization: NormalizationKind;
  microBatchSize: number;
  seeds: number;
  /** Mean and sample standard deviation over seeds of the test error, in %. */
  testErrorMean: number;
  testErrorStd: number;
  /** Mean over seeds of `testErrorRecomputed` in %, or null. */
  testErrorRecomputedMean: number | null;
  /** Per measured layer, `statisticsDeviation` averaged over seeds, or null. */
  statisticsDeviationMean: StatisticsDeviation[] | null;
  /** Mean training loss at the end, and its seed mean wall time. */
  finalLossMean: number;
  trainMsMean: number;
}

/** What {@link runNormExperiment} returns. */
export interface NormExperimentResult {
  /** The options actually used, defaults filled in (without `data` and `onProgress`). */
  config: Omit<Required<NormExperimentArgs>, 'data' | 'onProgress'>;
  records: NormRunRecord[];
  summary: NormSummaryRow[];
  figures: {
    /** Test error (%) against microBatchSize, one line per normalization, error bars over seeds. */
    testError: PlotlyFigure;
    /** Wu & He 2018's numbers, for comparison of shapes. */
    reference: PlotlyFigure;
    /** `"batch"` and `"batch-renorm"`: test error with moving vs recomputed statistics; null if neither ran. */
    recomputed: PlotlyFigure | null;
    /** `"batch"` (else `"batch-renorm"`): distance of micro-batch statistics from the population's, per layer; null if neither ran. */
    statistics: PlotlyFigure | null;
    /** Per normalization: training loss against updateStep, one line per microBatchSize (mean over seeds). */
    lossCurves: Partial<Record<NormalizationKind, PlotlyFigure>>;
  };
  /** Wall time of the whole experiment, milliseconds. */
  wallMs: number;
  backend: string;
}

/**
 * Named sizes. `"tiny"`: seconds, for tests. `"quick"`: about half a minute with fast kernels,
 * one seed, for notebooks. `"default"` (the defaults of {@link NormExperimentArgs}): a few
 * minutes with fast kernels on 2 cores. `"large"`: the whole training split, three seeds (tens
 * of minutes).
 */
export const NORM_EXPERIMENT_PRESETS: Record<'tiny' | 'quick' | 'default' | 'large', NormExperimentArgs> = {
  tiny: { microBatchSizes: [1, 4], logicalBatchSize: 4, seeds: [0], trainSize: 16, testSize: 32, epochs: 2, statisticsSize: 16, learningRate: 3e-3, progressEvery: 2 },
  quick: { microBatchSizes: [1, 4, 32], seeds: [0], trainSize: 512, testSize: 500, statisticsSize: 256 },
  default: {},
  large: { seeds: [0, 1, 2], trainSize: 7996, testSize: 2004 },
};

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
 * through the initial network and keeps them. `"batch-renorm"` runs as plain BatchNorm for
 * 1 / (1 - movingMomentum) updates (10 by default) while its moving statistics settle, then
 * opens its r/d bounds linearly to (3, 5) over as many updates again.
 *
 * The function uses whatever tfjs backend is active; choose it before calling.
 */
export async function runNormExperiment(args: NormExperimentArgs = {}): Promise<NormExperimentResult> {
  const config = checkArgs(args);
  const started = performance.now();
  const ownsData = args.data === undefined;
  const data = args.data ?? loadMnist({ trainSize: config.trainSize, testSize: config.testSize });
  if (data.train.size < config.trainSize || data.test.size < config.testSize) {
    throw argumentError('runNormExperiment', 'data', `MNIST data holding at least trainSize (${config.trainSize}) training and testSize (${config.testSize}) test images`, verbatim(`${data.train.size} and ${data.test.size} images`));
  }
  const records: NormRunRecord[] = [];
  const plan = config.normalizations.flatMap((normalization) =>
    config.microBatchSizes.flatMap((microBatchSize) => config.seeds.map((seed) => ({ normalization, microBatchSize, seed }))),
  );
  try {
    for (const [i, run] of plan.entries()) {
      const report = (event: Omit<NormExperimentProgress, 'run' | 'runs' | 'elapsedMs' | keyof typeof run>) =>
        args.onProgress?.({ ...event, ...run, run: i + 1, runs: plan.length, elapsedMs: performance.now() - started });
      records.push(await trainOnce(config, data, run, report));
    }
  } finally {
    if (ownsData) data.dispose();
  }
  const summary = summarize(records);
  return {
    config,
    records,
    summary,
    figures: buildFigures(config, records, summary),
    wallMs: performance.now() - started,
    backend: tf.getBackend(),
  };
}

type Config = NormExperimentResult['config'];
type Reporter = (event: { kind: NormExperimentProgress['kind']; updateStep: number; updates: number; loss: number | null; record?: NormRunRecord }) => void;

async function trainOnce(
  config: Config,
  data: MnistData,
  run: { normalization: NormalizationKind; microBatchSize: number; seed: number },
  report: Reporter,
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
    // Renorm: plain BN while the moving statistics settle (about 1 / (1 - movingMomentum)
    // updates), then the bounds open over as many updates again; counted in calls (micro-batches).
    renorm: {
      warmupSteps: Math.round(accumulationSteps / (1 - config.movingMomentum)),
      rampSteps: Math.round(accumulationSteps / (1 - config.movingMomentum)),
    },
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
      testErrorRecomputed,
      statisticsDeviation,
      callMomentum,
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

function summarize(records: NormRunRecord[]): NormSummaryRow[] {
  const groups = new Map<string, NormRunRecord[]>();
  for (const r of records) {
    const key = `${r.normalization}|${r.microBatchSize}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((rs) => {
    const errors = rs.map((r) => 100 * r.testError);
    const recomputed = rs.map((r) => r.testErrorRecomputed).filter((v): v is number => v !== null);
    return {
      normalization: rs[0].normalization,
      microBatchSize: rs[0].microBatchSize,
      seeds: rs.length,
      testErrorMean: mean(errors),
      testErrorStd: std(errors),
      testErrorRecomputedMean: recomputed.length ? 100 * mean(recomputed) : null,
      statisticsDeviationMean: averageDeviation(rs.map((r) => r.statisticsDeviation)),
      finalLossMean: mean(rs.map((r) => r.finalLoss)),
      trainMsMean: mean(rs.map((r) => r.trainMs)),
    };
  });
}

function averageDeviation(runs: (StatisticsDeviation[] | null)[]): StatisticsDeviation[] | null {
  const present = runs.filter((r): r is StatisticsDeviation[] => r !== null);
  if (present.length === 0) return null;
  return present[0].map((first, k) => ({
    layer: first.layer,
    valuesPerStatistic: first.valuesPerStatistic,
    meanShift: mean(present.map((r) => r[k].meanShift)),
    scaleShift: mean(present.map((r) => r[k].scaleShift)),
  }));
}

function buildFigures(config: Config, records: NormRunRecord[], summary: NormSummaryRow[]): NormExperimentResult['figures'] {
  const sizes = [...config.microBatchSizes].sort((a, b) => a - b);
  const rowsOf = (n: NormalizationKind) => sizes.map((m) => summary.find((s) => s.normalization === n && s.microBatchSize === m)!);
  const testError = lineChart({
    title: `Test error by micro-batch size (logical batch ${config.logicalBatchSize}, ${config.model.toUpperCase()} on MNIST, ${config.seeds.length} seed${config.seeds.length > 1 ? 's' : ''})`,
    xTitle: 'microBatchSize',
    yTitle: 'test error (%)',
    logX: true,
    series: config.normalizations.map((n) => ({
      name: n,
      x: sizes,
      y: rowsOf(n).map((r) => r.testErrorMean),
      errorY: config.seeds.length > 1 ? rowsOf(n).map((r) => r.testErrorStd) : undefined,
    })),
  });
  const reference = lineChart({
    title: 'Reference: Wu & He 2018, ResNet-50 on ImageNet',
    xTitle: 'images per GPU (microBatchSize)',
    yTitle: 'top-1 error (%)',
    logX: true,
    series: [
      { name: 'BatchNorm', x: [...WU_HE_2018.imagesPerGpu], y: [...WU_HE_2018.batchNorm], dashed: true },
      { name: 'GroupNorm', x: [...WU_HE_2018.imagesPerGpu], y: [...WU_HE_2018.groupNorm], dashed: true },
    ],
  });
  const family = config.normalizations.filter((n) => MOVING_STATISTICS.includes(n));
  const recomputed =
    family.length === 0
      ? null
      : lineChart({
          title: 'Moving vs recomputed statistics at test time',
          xTitle: 'microBatchSize',
          yTitle: 'test error (%)',
          logX: true,
          series: family.flatMap((n): Series[] => [
            { name: `${n} (moving statistics)`, x: sizes, y: rowsOf(n).map((r) => r.testErrorMean) },
            { name: `${n} (recomputed statistics)`, x: sizes, y: rowsOf(n).map((r) => r.testErrorRecomputedMean ?? Number.NaN), dashed: true },
          ]),
        });
  const measured = (['batch', 'batch-renorm'] as const).find((n) => config.normalizations.includes(n));
  const deviations = measured ? rowsOf(measured).map((r) => r.statisticsDeviationMean) : [];
  const statistics =
    measured && deviations.every((d) => d !== null)
      ? lineChart({
          title: `Distance of micro-batch statistics from the population's (${measured}, after training)`,
          xTitle: 'microBatchSize',
          yTitle: 'distance (population std devs)',
          logX: true,
          logY: true,
          series: deviations[0]!.flatMap((d, k): Series[] => {
            const perSample = d.valuesPerStatistic / sizes[0];
            const label = `layer ${d.layer} (${perSample} value${perSample > 1 ? 's' : ''} per sample)`;
            return [
              { name: `${label}: |mu_B - mu| / sigma`, x: sizes, y: deviations.map((r) => r![k].meanShift) },
              { name: `${label}: |sigma_B / sigma - 1|`, x: sizes, y: deviations.map((r) => r![k].scaleShift), dashed: true },
            ];
          }),
        })
      : null;
  const lossCurves: Partial<Record<NormalizationKind, PlotlyFigure>> = {};
  for (const n of config.normalizations) {
    lossCurves[n] = lineChart({
      title: `Training loss, ${n} normalization (mean over seeds, smoothed over 5 updates)`,
      xTitle: 'updateStep',
      yTitle: 'training loss (cross-entropy)',
      markers: false,
      series: sizes.map((m) => {
        const curves = records.filter((r) => r.normalization === n && r.microBatchSize === m).map((r) => r.lossCurve);
        const length = Math.min(...curves.map((c) => c.length));
        const averaged = Array.from({ length }, (_, k) => mean(curves.map((c) => c[k])));
        return { name: `microBatchSize ${m}`, x: averaged.map((_, k) => k + 1), y: smooth(averaged, 5) };
      }),
    });
  }
  // Log axes label 1, 2, 4, …, 32 rather than Plotly's decades.
  for (const figure of [testError, recomputed, statistics]) if (figure) tickAt(figure, sizes);
  tickAt(reference, [...WU_HE_2018.imagesPerGpu]);
  return { testError, reference, recomputed, statistics, lossCurves };
}

function tickAt(figure: PlotlyFigure, values: number[]): void {
  figure.layout.xaxis = { ...(figure.layout.xaxis as Record<string, unknown>), tickvals: [...values].sort((a, b) => a - b) };
}

function checkArgs(args: NormExperimentArgs): Config {
  const owner = 'runNormExperiment';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object of options', args);
  const model = args.model ?? 'cnn';
  if (model !== 'cnn' && model !== 'mlp') throw argumentError(owner, 'model', '"cnn" or "mlp"', model);
  const normalizations = args.normalizations ?? [...NORMALIZATIONS];
  if (!Array.isArray(normalizations) || normalizations.length === 0) {
    throw argumentError(owner, 'normalizations', `a non-empty array of ${NORMALIZATIONS.map((n) => `"${n}"`).join(', ')}`, normalizations);
  }
  normalizations.forEach((n) => checkNormalization(owner, n));
  const logicalBatchSize = args.logicalBatchSize ?? 32;
  if (!isPositiveInteger(logicalBatchSize)) throw argumentError(owner, 'logicalBatchSize', 'a positive integer', logicalBatchSize);
  const microBatchSizes = args.microBatchSizes ?? [1, 2, 4, 8, 16, 32];
  if (!Array.isArray(microBatchSizes) || microBatchSizes.length === 0 || !microBatchSizes.every((m) => isPositiveInteger(m) && logicalBatchSize % m === 0)) {
    throw argumentError(owner, 'microBatchSizes', `a non-empty array of divisors of logicalBatchSize (${logicalBatchSize})`, microBatchSizes);
  }
  const seeds = args.seeds ?? [0, 1];
  if (!Array.isArray(seeds) || seeds.length === 0 || !seeds.every((s) => Number.isInteger(s) && s >= 0)) {
    throw argumentError(owner, 'seeds', 'a non-empty array of integers >= 0', seeds);
  }
  const positive = (name: string, value: unknown, fallback: number, integer: boolean): number => {
    const v = value ?? fallback;
    if (integer ? !isPositiveInteger(v) : !isPositiveFinite(v)) throw argumentError(owner, name, integer ? 'a positive integer' : 'a finite number > 0', v);
    return v as number;
  };
  const movingMomentum = args.movingMomentum ?? 0.9;
  if (typeof movingMomentum !== 'number' || !(movingMomentum >= 0 && movingMomentum < 1)) {
    throw argumentError(owner, 'movingMomentum', 'a number in [0, 1)', movingMomentum);
  }
  const statisticsSize = positive('statisticsSize', args.statisticsSize, 512, true);
  const trainSize = positive('trainSize', args.trainSize, 1536, true);
  if (statisticsSize > trainSize || statisticsSize < 2) {
    throw argumentError(owner, 'statisticsSize', `an integer in [2, trainSize (${trainSize})]`, statisticsSize);
  }
  return {
    model,
    normalizations: [...normalizations],
    microBatchSizes: [...microBatchSizes],
    logicalBatchSize,
    seeds: [...seeds],
    trainSize,
    testSize: positive('testSize', args.testSize, 1000, true),
    epochs: positive('epochs', args.epochs, 1, true),
    learningRate: positive('learningRate', args.learningRate, 1e-3, false),
    movingMomentum,
    statisticsSize,
    progressEvery: positive('progressEvery', args.progressEvery, 10, true),
  };
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

function std(values: number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  return Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1));
}

/** Trailing moving average over `window` points (shorter at the start). */
function smooth(values: number[], window: number): number[] {
  return values.map((_, i) => mean(values.slice(Math.max(0, i - window + 1), i + 1)));
}
