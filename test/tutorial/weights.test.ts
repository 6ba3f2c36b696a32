import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { maxRelativeDifference, weightsOf } from '../../src/tutorial/weights';
import { assertThrowsMentioning, denseModel } from '../helpers';

describe('weightsOf', () => {
  test('copies every weight of a model, and the copy does not follow later changes', () => {
    const model = denseModel(1);
    const snapshot = weightsOf(model);
    assert.equal(snapshot.length, 4, 'two kernels and two biases');
    assert.deepEqual(snapshot.map((w) => w.length), [80, 8, 8, 1]);
    const kernel = model.weights[0].read() as tf.Variable;
    const original = snapshot[0][0];
    kernel.assign(tf.zerosLike(kernel));
    assert.equal(snapshot[0][0], original);
    assert.equal(weightsOf(model)[0][0], 0);
    model.dispose();
  });

  test('accepts a list of variables and leaks nothing', () => {
    const v = tf.variable(tf.tensor1d([1, 2, 3]));
    const before = tf.memory().numTensors;
    assert.deepEqual(Array.from(weightsOf([v])[0]), [1, 2, 3]);
    assert.equal(tf.memory().numTensors, before);
    v.dispose();
    assertThrowsMentioning(() => weightsOf([v]), 'weightsOf', 'source[0]', 'a live tf.Variable');
    assertThrowsMentioning(() => weightsOf('model' as never), 'weightsOf', 'a tf.LayersModel or an array');
  });
});

describe('maxRelativeDifference', () => {
  test('is the largest absolute difference over the largest reference magnitude (hand check)', () => {
    // |[1, -4] - [1, -2]| = [0, 2], |[0.5] - [1]| = 0.5: max 2; max |b| = 2, so 2 / 2 = 1.
    assert.equal(maxRelativeDifference([[1, -4], [0.5]], [[1, -2], [1]]), 1);
    assert.equal(maxRelativeDifference([[3, 4]], [[3, 4]]), 0);
    assert.equal(maxRelativeDifference([[0]], [[0]]), 0, 'identical zeros are equal, not NaN');
  });

  test('refuses snapshots of different weights', () => {
    assertThrowsMentioning(() => maxRelativeDifference([[1]], [[1], [2]]), 'maxRelativeDifference', 'same count and sizes');
    assertThrowsMentioning(() => maxRelativeDifference([[1, 2]], [[1]]), 'same count and sizes');
  });
});
