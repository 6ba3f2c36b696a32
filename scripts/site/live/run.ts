/**
 * The "run it in your browser" code of chapters 3 and 4, bundled with tfjs into
 * `assets/live/run.js` by ./export.ts. The page loads it only when the reader presses the
 * button (./loader.ts), so tfjs costs nothing to a reader who only reads. Each run uses the
 * best backend the browser offers, shows its numbers and a chart (in the page's language), and
 * disposes what it made.
 */
import * as tf from '@tensorflow/tfjs';
import { GradientAccumulator } from '../../../src/index';
import { ARTICLE_SETUP, figureSvg, lineChart, localizeFigure, type DisplayLocale, type PlotlyFigure, simpleNet, splitIntoMicroBatches, syntheticBatch, syntheticMicroBatches } from '../../../src/tutorial/index';

/** What a run reports; also written to the block's data attributes so tests can read it. */
export interface LiveResult {
  backend: string;
  /** The numbers shown, by name. */
  numbers: Record<string, number>;
  /** The chart, as SVG markup. */
  svg: string;
}

/**
 * WebGL where the browser has it, else cpu. Note: not WebGPU: tfjs-backend-webgpu 4.22 needs a
 * separate bundle, and the accumulator reads its loss synchronously, which WebGPU backends
 * serve poorly (docs/browser.md).
 */
async function bestBackend(): Promise<string> {
  for (const name of ['webgl', 'cpu']) {
    try {
      if (await tf.setBackend(name)) {
        await tf.ready();
        return name;
      }
    } catch {
      // try the next one
    }
  }
  throw new Error('no tfjs backend could start in this browser');
}

/** The chart as SVG, its texts in the page's language (the display table, src/tutorial/plot/locales/). */
const draw = (fig: PlotlyFigure, locale: DisplayLocale) => figureSvg(localizeFigure(fig, locale));

const mse = (model: tf.LayersModel, xs: tf.Tensor, ys: tf.Tensor) => tf.losses.meanSquaredError(ys, model.predict(xs) as tf.Tensor) as tf.Scalar;
const weightsOf = (model: tf.LayersModel) => model.trainableWeights.flatMap((w) => Array.from(w.read().dataSync()));

/** Chapter 3: four micro-batches of 16 through the accumulator against one SGD step on all 64. */
function accumulation(locale: DisplayLocale): Omit<LiveResult, 'backend'> {
  const { accumulationSteps, microBatchSize, learningRate } = ARTICLE_SETUP;
  const batch = syntheticBatch(accumulationSteps * microBatchSize, { seed: 3 });
  const parts = splitIntoMicroBatches(batch, Array(accumulationSteps).fill(microBatchSize));
  const reference = simpleNet({ seed: 0 });
  const accumulated = simpleNet({ seed: 0 });
  const sgd = tf.train.sgd(learningRate);
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(learningRate), accumulationSteps });
  try {
    const start = performance.now();
    // Both start from the same weights; the chart shows how far each weight moved, where the
    // two runs' updates can be told apart (the weights themselves barely change in one step).
    const before = weightsOf(reference);
    sgd.minimize(() => mse(reference, batch.xs, batch.ys));
    for (const { xs, ys } of parts) accumulator.step(() => mse(accumulated, xs, ys));
    const a = weightsOf(accumulated);
    const b = weightsOf(reference);
    const ms = performance.now() - start;
    const gap = Math.max(...a.map((v, i) => Math.abs(v - b[i]))) / Math.max(...b.map(Math.abs));
    const index = a.map((_, i) => i);
    const moved = (after: number[]) => after.map((v, i) => v - before[i]);
    const svg = draw(
      lineChart({
        title: 'How far each weight moved: 4 x 16 against one step of 64',
        xTitle: 'weight',
        yTitle: 'change in the weight',
        series: [
          { name: 'one step of 64', x: index, y: moved(b) },
          { name: 'accumulated 4 x 16', x: index, y: moved(a), dashed: true },
        ],
      }),
      locale,
    );
    return { numbers: { maxRelativeDifference: gap, updateStep: accumulator.updateStep, ms }, svg };
  } finally {
    accumulator.dispose();
    sgd.dispose();
    reference.dispose();
    accumulated.dispose();
    tf.dispose([batch.xs, batch.ys, ...parts.flatMap((p) => [p.xs, p.ys])]);
  }
}

/** Chapter 4: the article's loop, 20 micro-batches of 16 and an update after every 4th. */
function trainingLoop(locale: DisplayLocale): Omit<LiveResult, 'backend'> {
  const { accumulationSteps, microBatches, learningRate } = ARTICLE_SETUP;
  const model = simpleNet({ seed: 0 });
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(learningRate), accumulationSteps });
  try {
    const start = performance.now();
    const microLosses: number[] = [];
    const updateLosses: number[] = [];
    let window: number[] = [];
    for (const { xs, ys } of syntheticMicroBatches({ microBatches, seed: 0 })) {
      const { loss, applied } = accumulator.step(() => mse(model, xs, ys));
      tf.dispose([xs, ys]);
      microLosses.push(loss);
      window.push(loss);
      if (applied) {
        updateLosses.push(window.reduce((s, v) => s + v, 0) / window.length);
        window = [];
      }
    }
    const ms = performance.now() - start;
    const svg = draw(
      lineChart({
        title: 'SimpleNet in your browser: loss per micro-step and per update',
        xTitle: 'micro-step',
        yTitle: 'mean squared error',
        series: [
          { name: 'micro-batch loss', x: microLosses.map((_, i) => i + 1), y: microLosses },
          { name: 'window loss (logical batch of 64)', x: updateLosses.map((_, i) => (i + 1) * accumulationSteps), y: updateLosses, dashed: true },
        ],
      }),
      locale,
    );
    return {
      numbers: { updates: accumulator.updateStep, firstWindowLoss: updateLosses[0], lastWindowLoss: updateLosses[updateLosses.length - 1], ms },
      svg,
    };
  } finally {
    accumulator.dispose();
    model.dispose();
  }
}

const RUNS = { accumulation, 'training-loop': trainingLoop };

/** Runs one block's example; `locale` is the page's (the block's `data-lang`), `en` or `zh`. */
async function run(kind: keyof typeof RUNS, locale: DisplayLocale = 'en'): Promise<LiveResult & { tensorsLeft: number }> {
  const backend = await bestBackend();
  const before = tf.memory().numTensors;
  const result = RUNS[kind](locale === 'zh' ? 'zh' : 'en');
  return { backend, ...result, tensorsLeft: tf.memory().numTensors - before };
}

(window as unknown as { tfjsAccumulateLive: { run: typeof run } }).tfjsAccumulateLive = { run };
