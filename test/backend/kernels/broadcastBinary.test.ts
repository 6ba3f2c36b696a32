import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';
import { broadcastBinary } from '../../../src/backend/kernels/broadcastBinary';

const PAIRS: [number[], number[]][] = [
  [[4, 5], [4, 5]],
  [[16, 28, 28, 16], [16]], // a per-channel scale
  [[16], [16, 28, 28, 16]],
  [[2, 3, 4], [1, 1, 4]],
  [[2, 1, 4], [3, 1]],
  [[3, 4], []],
  [[], [3, 4]],
  [[2, 3, 1, 5], [1, 3, 4, 1]],
  [[0, 3], [3]],
];

test('Add, Sub, Multiply and RealDiv match stock cpu with and without broadcasting', async () => {
  for (const [i, [a, b]] of PAIRS.entries()) {
    await expectParity(`binary ops [${a}] with [${b}]`, () => {
      const x = randomTensor(a, i);
      // Keep divisors away from zero so the comparison is about the kernels, not about 1/0.
      const y = tf.add(tf.abs(randomTensor(b, 50 + i)), 0.25);
      return [tf.add(x, y), tf.sub(x, y), tf.mul(x, y), tf.div(x, y)];
    }, ['cpu']);
  }
});

test('broadcastBinary follows numpy broadcasting on a hand-checkable case', () => {
  // [[1], [2]] * [10, 20, 30] = [[10, 20, 30], [20, 40, 60]]
  const { values, shape } = broadcastBinary('Multiply', new Float32Array([1, 2]), [2, 1], new Float32Array([10, 20, 30]), [3]);
  assert.deepEqual(shape, [2, 3]);
  assert.deepEqual([...values], [10, 20, 30, 20, 40, 60]);
});

test('int32 arithmetic keeps the stock kernels and exact integers', async () => {
  await useBackend('cpu', true);
  const s = tf.add(tf.tensor1d([1, 2], 'int32'), tf.scalar(3, 'int32'));
  assert.equal(s.dtype, 'int32');
  assert.deepEqual(await s.array(), [4, 5]);
});

test('binary ops leak no tensor', async () => {
  await useBackend('cpu', true);
  const x = randomTensor([4, 3, 3, 2], 1);
  const y = randomTensor([2], 2);
  await expectNoLeak('binary ops', async () => {
    const out = tf.tidy(() => tf.div(tf.mul(tf.sub(tf.add(x, y), y), y), tf.add(y, 2)));
    await out.data();
    out.dispose();
  });
  tf.dispose([x, y]);
});
