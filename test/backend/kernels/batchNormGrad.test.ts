import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';
import { BATCH_NORM_GRAD } from '../../../src/backend/kernels';

const EPSILON = 1e-3;

function positive(t: tf.Tensor): tf.Tensor {
  return tf.add(tf.abs(t), 0.5);
}

test('the fused BatchNorm gradient matches stock cpu for given statistics (all five inputs)', async () => {
  for (const [i, shape] of [[4, 5, 5, 3], [16, 28, 28, 16], [8, 1, 1, 32]].entries()) {
    {
      const paramShape = [shape[3]];
      await expectParity(`batchNorm grads x [${shape}] params [${paramShape}]`, () => {
        const x = randomTensor(shape, 1 + i) as tf.Tensor4D;
        const mean = randomTensor(paramShape, 2 + i);
        const variance = positive(randomTensor(paramShape, 3 + i));
        const offset = randomTensor(paramShape, 4 + i);
        const scale = randomTensor(paramShape, 5 + i);
        const dy = randomTensor(shape, 6 + i);
        return tf.grads((a: tf.Tensor, m: tf.Tensor, v: tf.Tensor, o: tf.Tensor, s: tf.Tensor) =>
          tf.sum(tf.mul(tf.batchNorm(a, m, v, o, s, EPSILON), dy)),
        )([x, mean, variance, offset, scale]);
      });
    }
  }
});

test('the fused BatchNorm gradient matches stock cpu on 2-D inputs', async () => {
  // tfjs 4.22's own gradient fails (in Identity) when scale or offset is left out, and throws
  // for statistics shaped [1, 1, 1, C]; both are covered below on the fused path alone.
  await expectParity('batchNorm grads on [batch, features]', () => {
    const x = randomTensor([32, 10], 15);
    const mean = randomTensor([10], 16);
    const variance = positive(randomTensor([10], 17));
    const scale = randomTensor([10], 18);
    const offset = randomTensor([10], 20);
    return tf.grads((a: tf.Tensor, s: tf.Tensor) => tf.sum(tf.mul(tf.batchNorm(a, mean, variance, offset, s, EPSILON), randomTensor([32, 10], 19))))([x, scale]);
  });
});

test('statistics shaped [1, 1, 1, C] get the same gradients as statistics shaped [C]', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const grads = (paramShape: number[]) =>
      tf.tidy(() => {
        const x = randomTensor([4, 3, 3, 5], 31);
        const params = [32, 33, 34, 35].map((seed, k) => {
          const t = randomTensor([5], seed);
          return tf.reshape(k === 1 ? positive(t) : t, paramShape);
        });
        const dy = randomTensor([4, 3, 3, 5], 36);
        return tf
          .grads((a: tf.Tensor, m: tf.Tensor, v: tf.Tensor, o: tf.Tensor, s: tf.Tensor) => tf.sum(tf.mul(tf.batchNorm(a, m, v, o, s, EPSILON), dy)))([x, ...params])
          .map((g) => tf.reshape(g, [-1]));
      });
    const flat = grads([5]);
    const broadcast = grads([1, 1, 1, 5]);
    for (let k = 0; k < flat.length; k++) assert.deepEqual(await broadcast[k].data(), await flat[k].data());
    tf.dispose([...flat, ...broadcast]);
  }
});

test('training-mode BatchNorm (batch statistics from tf.moments) has the stock gradient', async () => {
  // The statistics depend on x, so the gradient also flows through tf.moments, as in
  // tfjs-layers' BatchNormalization during training.
  await expectParity('batchNorm over moments', () => {
    const x = randomTensor([8, 6, 6, 4], 21);
    const gamma = positive(randomTensor([4], 22));
    const beta = randomTensor([4], 23);
    const dy = randomTensor([8, 6, 6, 4], 24);
    return tf.grads((a: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => {
      const { mean, variance } = tf.moments(a, [0, 1, 2]);
      return tf.sum(tf.mul(tf.batchNorm(a, mean, variance, b, g, EPSILON), dy));
    })([x, gamma, beta]);
  });
});

test('statistics that are not one value per channel use the stock gradient', async () => {
  await useBackend('wasm', true);
  let calls = 0;
  const config = tf.getKernel(BATCH_NORM_GRAD, 'wasm') as tf.KernelConfig;
  tf.unregisterKernel(BATCH_NORM_GRAD, 'wasm');
  tf.registerKernel({ ...config, kernelFunc: (args) => (calls++, config.kernelFunc(args)) });
  try {
    const x = randomTensor([2, 3, 3, 4], 1);
    tf.grad((a: tf.Tensor) => tf.sum(tf.batchNorm(a, tf.zeros([2, 3, 3, 4]), tf.ones([2, 3, 3, 4]), tf.zeros([2, 3, 3, 4]), tf.ones([2, 3, 3, 4]))))(x);
    assert.equal(calls, 0, 'a full-shape mean is not fused');
    tf.grad((a: tf.Tensor) => tf.sum(tf.batchNorm(a, tf.zeros([4]), tf.ones([4]), tf.zeros([4]), tf.ones([4]))))(x);
    assert.equal(calls, 1, 'per-channel statistics are fused');
  } finally {
    tf.unregisterKernel(BATCH_NORM_GRAD, 'wasm');
    tf.registerKernel(config);
  }
});

test('the fused BatchNorm gradient leaks no tensor and no backend buffer', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = randomTensor([4, 5, 5, 3], 1);
    const gamma = tf.ones([3]);
    const beta = tf.zeros([3]);
    await expectNoLeak('FusedBatchNorm gradient', async () => {
      const grads = tf.grads((a: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => {
        const { mean, variance } = tf.moments(a, [0, 1, 2]);
        return tf.sum(tf.square(tf.batchNorm(a, mean, variance, b, g, EPSILON)));
      })([x, gamma, beta]);
      await Promise.all(grads.map((g) => g.data()));
      tf.dispose(grads);
    });
    tf.dispose([x, gamma, beta]);
  }
});
