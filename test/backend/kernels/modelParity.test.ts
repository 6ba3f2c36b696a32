import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, PARITY_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';
import { cnn, mlp } from '../../../src/tutorial/models';
import { GradientAccumulator } from '../../../src/core/gradientAccumulator';

// Whole-model gradients on the fast backends against tfjs's stock cpu kernels: every kernel of a
// real training step at once (forward, BatchNorm in training mode, pooling, dense, softmax).

function lossOf(model: tf.LayersModel, xs: tf.Tensor, ys: tf.Tensor): () => tf.Scalar {
  return () => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor) as tf.Scalar;
}

function gradientsOf(model: tf.LayersModel, batch: number, seed: number): () => tf.Tensor[] {
  return () => {
    const xs = randomTensor([batch, 28, 28, 1], seed);
    const ys = tf.oneHot(tf.tensor1d(Array.from({ length: batch }, (_, i) => (i * 7 + seed) % 10), 'int32'), 10);
    const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
    const { grads } = tf.variableGrads(lossOf(model, xs, ys), vars);
    return vars.map((v) => grads[v.name]);
  };
}

test('CNN with BatchNorm: every gradient matches stock cpu (micro-batches of 16 and 4)', async () => {
  await useBackend('cpu', false);
  const model = cnn({ normalization: 'batch', seed: 1 });
  for (const batch of [16, 4]) await expectParity(`cnn(batch) gradients, batch ${batch}`, gradientsOf(model, batch, 3));
  model.dispose();
});

test('CNN with GroupNorm: every gradient matches stock cpu', async () => {
  await useBackend('cpu', false);
  const model = cnn({ normalization: 'group', seed: 2 });
  await expectParity('cnn(group) gradients', gradientsOf(model, 8, 4));
  model.dispose();
});

test('MLP 784-256-256-10: every gradient matches stock cpu, with and without BatchNorm', async () => {
  for (const normalization of ['none', 'batch'] as const) {
    await useBackend('cpu', false);
    const model = mlp({ normalization, seed: 3 });
    await expectParity(`mlp(${normalization}) gradients`, gradientsOf(model, 64, 5));
    model.dispose();
  }
});

test('an accumulation window of the CNN leaks nothing on the fast backends', async () => {
  for (const backend of PARITY_BACKENDS) {
    await useBackend(backend, true);
    const model = cnn({ normalization: 'batch', seed: 1 });
    const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: 2, varList: model.trainableWeights });
    const xs = randomTensor([4, 28, 28, 1], 9);
    const ys = tf.oneHot(tf.tensor1d([1, 2, 3, 4], 'int32'), 10);
    await expectNoLeak('CNN accumulation window', () => {
      accumulator.step(lossOf(model, xs, ys));
      const { applied } = accumulator.step(lossOf(model, xs, ys));
      assert.ok(applied);
    });
    accumulator.dispose();
    tf.dispose([xs, ys]);
    model.dispose();
  }
});
