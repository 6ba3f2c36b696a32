import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seededNormal, seededRandom, shuffledIndices } from '../../../src/tutorial/data/random';
import { splitIntoMicroBatches, syntheticBatch, syntheticMicroBatches } from '../../../src/tutorial/data/synthetic';
import { assertThrowsMentioning } from '../../helpers';

describe('seeded random helpers', () => {
  test('the same seed gives the same stream, another seed another', () => {
    const a = Array.from({ length: 5 }, seededRandom(42));
    const b = Array.from({ length: 5 }, seededRandom(42));
    const c = Array.from({ length: 5 }, seededRandom(43));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.ok(a.every((v) => v >= 0 && v < 1));
  });

  test('the normal generator has mean ~0 and variance ~1', () => {
    const normal = seededNormal(7);
    const values = Array.from({ length: 20000 }, normal);
    const mean = values.reduce((x, y) => x + y, 0) / values.length;
    const variance = values.reduce((x, y) => x + (y - mean) ** 2, 0) / values.length;
    // Standard errors: 1/sqrt(20000) = 0.007 for the mean, sqrt(2/20000) = 0.01 for the variance.
    assert.ok(Math.abs(mean) < 0.03, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1) < 0.04, `variance ${variance}`);
  });

  test('shuffledIndices is a seeded permutation', () => {
    const order = shuffledIndices(100, 5);
    assert.deepEqual([...order].sort((x, y) => x - y), [...Array(100).keys()]);
    assert.deepEqual(order, shuffledIndices(100, 5));
    assert.notDeepEqual(order, shuffledIndices(100, 6));
  });
});

describe('syntheticMicroBatches', () => {
  test('yields the article\'s data: 20 micro-batches of 16 x 10 inputs and 16 x 1 labels, float32', () => {
    const batches = [...syntheticMicroBatches()];
    assert.equal(batches.length, 20);
    for (const { xs, ys } of batches) {
      assert.deepEqual(xs.shape, [16, 10]);
      assert.deepEqual(ys.shape, [16, 1]);
      assert.equal(xs.dtype, 'float32');
      assert.equal(ys.dtype, 'float32');
    }
    tf.dispose(batches.flatMap((b) => [b.xs, b.ys]));
  });

  test('repeats bit for bit with the same seed, and differs with another', () => {
    const read = (seed: number) => [...syntheticMicroBatches({ seed, microBatches: 3 })].map(({ xs, ys }) => {
      const values = [...xs.dataSync(), ...ys.dataSync()];
      tf.dispose([xs, ys]);
      return values;
    });
    assert.deepEqual(read(1), read(1));
    assert.notDeepEqual(read(1), read(2));
  });

  test('syntheticBatch(64) is the first four micro-batches of 16, concatenated', () => {
    const whole = syntheticBatch(64, { seed: 3 });
    const parts = [...syntheticMicroBatches({ seed: 3, microBatches: 4 })];
    const xs = tf.concat(parts.map((p) => p.xs));
    const ys = tf.concat(parts.map((p) => p.ys));
    assert.deepEqual(whole.xs.dataSync(), xs.dataSync());
    assert.deepEqual(whole.ys.dataSync(), ys.dataSync());
    tf.dispose([whole.xs, whole.ys, xs, ys, ...parts.flatMap((p) => [p.xs, p.ys])]);
  });

  test('"linear" labels follow a linear teacher (least squares leaves only the noise); "random" labels do not', () => {
    // Fit ys ~ [xs, 1] w by least squares; the residual variance estimates the label noise (0.1^2 = 0.01).
    const residualVariance = (labels: 'linear' | 'random') =>
      tf.tidy(() => {
        const { xs, ys } = syntheticBatch(2000, { seed: 4, labels });
        const design = tf.concat([xs, tf.ones([2000, 1])], 1);
        const gram = tf.matMul(design, design, true, false);
        const rhs = tf.matMul(design, ys, true, false);
        // Normal equations gram w = rhs, solved by Richardson iteration: with standard normal inputs
        // gram is close to 2000 I, so each step of 1/2500 shrinks the error about fivefold.
        let w = tf.zeros([11, 1]);
        for (let i = 0; i < 200; i++) w = w.add(rhs.sub(gram.matMul(w)).mul(1 / 2500));
        return tf.mean(tf.square(ys.sub(design.matMul(w)))).dataSync()[0];
      });
    const linear = residualVariance('linear');
    const random = residualVariance('random');
    assert.ok(linear < 0.02, `linear residual variance ${linear}`);
    assert.ok(random > 0.8, `random residual variance ${random}`);
  });

  test('bad options name the argument', () => {
    assertThrowsMentioning(() => syntheticMicroBatches({ microBatchSize: 0 }).next(), 'microBatchSize', 'positive integer');
    assertThrowsMentioning(() => syntheticMicroBatches({ labels: 'teacher' as never }).next(), 'labels', '"linear" or "random"');
    assertThrowsMentioning(() => syntheticMicroBatches({ seed: -1 }).next(), 'seed', 'integer >= 0');
    assertThrowsMentioning(() => syntheticBatch(0), 'syntheticBatch', 'n', 'positive integer');
  });
});

describe('splitIntoMicroBatches', () => {
  test('splits a batch into consecutive micro-batches of the given sizes, even or not', () => {
    const batch = syntheticBatch(64, { seed: 5 });
    const parts = splitIntoMicroBatches(batch, [20, 20, 24]);
    assert.deepEqual(parts.map((p) => p.xs.shape), [[20, 10], [20, 10], [24, 10]]);
    const joined = tf.concat(parts.map((p) => p.ys));
    assert.deepEqual(joined.dataSync(), batch.ys.dataSync());
    tf.dispose([batch.xs, batch.ys, joined, ...parts.flatMap((p) => [p.xs, p.ys])]);
  });

  test('sizes that do not add up to the batch are rejected', () => {
    const batch = syntheticBatch(8);
    assertThrowsMentioning(() => splitIntoMicroBatches(batch, [4, 3]), 'sizes', 'adding up to the batch size (8)');
    assertThrowsMentioning(() => splitIntoMicroBatches(batch, []), 'sizes');
    tf.dispose([batch.xs, batch.ys]);
  });
});
