import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GradientAccumulator, GradientAccumulatorArgs } from '../../src/core/gradientAccumulator';
import type { CountedLoss } from '../../src/core/lossGradient';
import { NormalizationKind, cnn, mlp } from '../../src/tutorial/models';
import type { ParallelAccumulatorArgs } from '../../src/parallel';

/**
 * What the parallel trainer's tests share: small seeded 8x8 digit micro-batches as plain arrays,
 * the models, the single-thread reference run and the default arguments.
 */

export const FIXTURES = join(__dirname, '..', 'fixtures', 'parallelLosses.ts');
export const INPUT: [number, number, number] = [8, 8, 1];
export const CLASSES = 4;
/** Uneven micro-batch sizes: a window of 3 twice, then a short window of 1 that flush applies. */
export const SIZES = [4, 3, 5, 4, 2, 4, 4];
export const TOLERANCE = 1e-5;

export type Data = { xs: Float32Array; ys: Float32Array; n: number }[];

/** Seeded micro-batches as plain arrays (so each run gets fresh, transferable copies). */
export function makeData(sizes = SIZES, seed = 0): Data {
  return sizes.map((n, k) =>
    tf.tidy(() => ({
      n,
      xs: tf.randomNormal([n, ...INPUT], 0, 1, 'float32', seed + k).dataSync() as Float32Array,
      ys: tf.oneHot(tf.randomUniform([n], 0, CLASSES, 'int32', seed + 100 + k), CLASSES).toFloat().dataSync() as Float32Array,
    })),
  );
}

export const batchOf = (d: Data[number]) => ({ xs: { values: d.xs.slice(), shape: [d.n, ...INPUT] }, ys: { values: d.ys.slice(), shape: [d.n, CLASSES] } });

export function makeModel(kind: 'mlp' | 'cnn', normalization: NormalizationKind): tf.Sequential {
  return (kind === 'mlp' ? mlp : cnn)({ normalization, inputShape: INPUT, classes: CLASSES, groups: 4, seed: 3 });
}

/** How the reference computes a micro-batch's loss: a mean (stepped with its sampleCount), or another form of the same loss. */
export type ReferenceLoss = (ys: tf.Tensor, predictions: tf.Tensor) => tf.Tensor | CountedLoss;

/**
 * The reference: the single-thread accumulator with the same options over the same
 * micro-batches, flushed unless told not to. Returns the accumulator (the caller disposes it).
 */
export function singleThreadRun(model: tf.LayersModel, optimizer: tf.Optimizer, data: Data, options: Partial<GradientAccumulatorArgs> & { loss?: ReferenceLoss; flush?: boolean } = {}): GradientAccumulator {
  const { loss, flush, ...rest } = options;
  const acc = new GradientAccumulator({ optimizer, accumulationSteps: 3, varList: model.trainableWeights, ...rest });
  for (const d of data) {
    tf.tidy(() => {
      const xs = tf.tensor(d.xs, [d.n, ...INPUT]);
      const ys = tf.tensor(d.ys, [d.n, CLASSES]);
      const predictions = () => model.apply(xs, { training: true }) as tf.Tensor;
      if (loss === undefined) acc.step(() => tf.losses.softmaxCrossEntropy(ys, predictions()), { sampleCount: d.n });
      else acc.step(() => loss(ys, predictions()));
    });
  }
  if (flush !== false) acc.flush();
  return acc;
}

/** The reference run with SGD-like defaults, disposed. */
export function singleThread(model: tf.LayersModel, optimizer: tf.Optimizer, data: Data, accumulationSteps = 3): void {
  singleThreadRun(model, optimizer, data, { accumulationSteps }).dispose();
}

export const trainable = (model: tf.LayersModel) => model.trainableWeights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array));

export function args(model: tf.LayersModel, extra: Partial<ParallelAccumulatorArgs> = {}): ParallelAccumulatorArgs {
  // (An SGD optimizer holds a tensor: create it only when the test does not bring its own.)
  return { model, optimizer: extra.optimizer ?? tf.train.sgd(0.1), accumulationSteps: 3, loss: 'softmaxCrossEntropy', workers: 2, backend: 'wasm', ...extra };
}

/** OS threads of this process (Linux): a terminated worker takes its threads with it. */
export function threadCount(): number {
  return Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
}

