import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';

test('Relu and Step (and the ReLU gradient) match stock cpu, NaN and -0 included', async () => {
  await expectParity('relu / step', () => {
    const x = tf.concat([randomTensor([200], 1), tf.tensor1d([NaN, -0, 0, Infinity, -Infinity])]);
    return [tf.relu(x), tf.step(x), tf.step(x, 0.25), tf.grad((a: tf.Tensor) => tf.sum(tf.relu(a)))(x)];
  }, ['cpu']);
});

test('Relu keeps NaN and maps -0 to +0, as Math.max(0, x) does', async () => {
  await useBackend('cpu', true);
  const y = await tf.relu(tf.tensor1d([NaN, -0, -1, 2])).data();
  assert.ok(Number.isNaN(y[0]));
  assert.ok(Object.is(y[1], 0));
  assert.deepEqual([...y.slice(2)], [0, 2]);
});

test('Relu and Step leak no tensor', async () => {
  await useBackend('cpu', true);
  const x = randomTensor([64], 1);
  await expectNoLeak('Relu/Step', async () => {
    const y = tf.tidy(() => tf.add(tf.relu(x), tf.step(x)));
    await y.data();
    y.dispose();
  });
  x.dispose();
});
