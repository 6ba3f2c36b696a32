/**
 * The bench's models and data (scripts/bench/bench.ts): the tutorial's models with fixed seeds,
 * seeded batches, their losses, as PyTorch's peer builds the same (bench_torch.py).
 */
import * as tf from '@tensorflow/tfjs';
import { cnn, mlp, simpleNet, stepFlops } from '../../src/tutorial/index';
import type { ModelName } from './benchArgs';

/** How the tables name each model. */
export const MODEL_LABEL: Record<ModelName, string> = { simpleNet: 'SimpleNet 10-1', mlp: 'MLP 784-256-256-10', cnn: 'CNN conv16-conv32-dense10' };

export function buildModel(name: ModelName): tf.LayersModel {
  if (name === 'simpleNet') return simpleNet({ seed: 1 });
  if (name === 'mlp') return mlp({ normalization: 'none', seed: 1 });
  return cnn({ normalization: 'batch', seed: 1 });
}

export function batchOf(name: ModelName, batch: number, seed: number): { xs: tf.Tensor; ys: tf.Tensor } {
  return tf.tidy(() => {
    if (name === 'simpleNet') return { xs: tf.randomNormal([batch, 10], 0, 1, 'float32', seed), ys: tf.randomNormal([batch, 1], 0, 1, 'float32', seed + 1) };
    const labels = tf.tensor1d(Array.from({ length: batch }, (_, i) => (i * 7 + seed) % 10), 'int32');
    return { xs: tf.randomNormal([batch, 28, 28, 1], 0, 1, 'float32', seed), ys: tf.oneHot(labels, 10) };
  });
}

export const lossOf = (name: ModelName) => (name === 'simpleNet' ? tf.losses.meanSquaredError : tf.losses.softmaxCrossEntropy);

export function lossFn(name: ModelName, model: tf.LayersModel, data: { xs: tf.Tensor; ys: tf.Tensor }): () => tf.Scalar {
  return () => lossOf(name)(data.ys, model.apply(data.xs, { training: true }) as tf.Tensor) as tf.Scalar;
}

export const trainable = (model: tf.LayersModel): tf.Variable[] => model.trainableWeights.map((w) => w.read() as tf.Variable);

export function flopsOf(name: ModelName, batch: number): number {
  const model = buildModel(name);
  const flops = stepFlops(model, batch).trainingFlops;
  model.dispose();
  return flops;
}
