import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';
import { checkCase } from '../fuzz/harness';
import { maxPool } from '../fuzz/pooling';

interface Case {
  x: [number, number, number, number];
  filter: number | [number, number];
  strides: number | [number, number];
  pad: 'valid' | 'same' | number;
}

const CASES: Case[] = [
  { x: [2, 8, 8, 3], filter: 2, strides: 2, pad: 'valid' },
  { x: [2, 7, 7, 3], filter: 2, strides: 2, pad: 'same' },
  { x: [1, 9, 9, 2], filter: 3, strides: 1, pad: 'same' }, // overlapping windows add up
  { x: [3, 10, 8, 4], filter: [3, 2], strides: [2, 1], pad: 'valid' },
  { x: [1, 6, 6, 1], filter: 3, strides: 2, pad: 1 },
  { x: [16, 28, 28, 16], filter: 2, strides: 2, pad: 'same' },
];

test('MaxPoolGrad matches stock cpu across filters, strides and paddings', async () => {
  for (const [i, c] of CASES.entries()) {
    await expectParity(`maxPool gradient x [${c.x}] filter ${JSON.stringify(c.filter)} strides ${JSON.stringify(c.strides)} pad ${c.pad}`, () => {
      const x = randomTensor(c.x, 100 + i) as tf.Tensor4D;
      return tf.grad((t: tf.Tensor) => { const input = t as tf.Tensor4D;
        const y = tf.maxPool(input, c.filter, c.strides, c.pad);
        return tf.sum(tf.mul(y, randomTensor(y.shape, 110 + i)));
      })(x);
    });
  }
});

test('MaxPoolGrad sends a tie to the first maximum and skips windows of -Infinity, as stock cpu does', async () => {
  await expectParity('maxPool gradient with ties', () => {
    // Values in {0, 1, 2}: most windows hold several equal maxima.
    const x = tf.floor(tf.mul(tf.add(randomTensor([2, 6, 6, 3], 7), 1), 1.5)) as tf.Tensor4D;
    const withInf = tf.concat([x, tf.fill([2, 6, 6, 1], -Infinity) as tf.Tensor4D], 3);
    return tf.grad((input: tf.Tensor) => tf.sum(tf.maxPool(input as tf.Tensor4D, 3, 1, 'same')))(withInf);
  });
});

test('the SIMD 2x2 path (stride 2, channels a multiple of 4) breaks ties and skips NaN/-Infinity windows as stock cpu does', async () => {
  await expectParity('maxPool 2x2 gradient with ties, NaN and -Infinity', () => {
    // Values in {0, 1, 2} (many tied maxima), one channel of -Infinity, one with a NaN in places.
    const x = tf.floor(tf.mul(tf.add(randomTensor([3, 8, 6, 6], 9), 1), 1.5));
    const nanMask = tf.greater(randomTensor([3, 8, 6, 1], 10), 0.3);
    const withNaN = tf.where(nanMask, tf.fill([3, 8, 6, 1], NaN), tf.slice(x, [0, 0, 0, 0], [3, 8, 6, 1]));
    const input = tf.concat([x, withNaN, tf.fill([3, 8, 6, 1], -Infinity)], 3) as tf.Tensor4D;
    return tf.grad((t: tf.Tensor) => {
      const y = tf.maxPool(t as tf.Tensor4D, 2, 2, 'valid');
      return tf.sum(tf.mul(y, randomTensor(y.shape, 11)));
    })(input);
  });
});

test('MaxPoolGrad leaks no tensor and no backend buffer', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = randomTensor([2, 8, 8, 3], 1) as tf.Tensor4D;
    await expectNoLeak('MaxPoolGrad', async () => {
      const g = tf.grad((input: tf.Tensor) => tf.sum(tf.maxPool(input as tf.Tensor4D, 2, 2, 'valid')))(x);
      await g.data();
      g.dispose();
    });
    x.dispose();
  }
});

test('MaxPoolGrad with a numeric pad and ceil rounding takes the output size from dy, on every kernel set (issue 31)', async () => {
  // tfjs's gradient drops dimRoundingMode: recomputed from the attributes, the output of
  // maxPool([1, 6, 7, 1], 2, 2, 1, 'ceil') is 4x4 instead of 4x5, and the gradient was off by 1.8.
  // Against plain loops: stock tfjs's own gradient is wrong here too.
  await checkCase(maxPool, { x: [1, 6, 7, 1], filterSize: [2, 2], strides: [2, 2], pad: 1, rounding: 'ceil', values: 'random', seed: 1 });
  await checkCase(maxPool, { x: [2, 5, 9, 4], filterSize: [3, 2], strides: [2, 3], pad: 2, rounding: 'round', values: 'ties', seed: 2 });
});
