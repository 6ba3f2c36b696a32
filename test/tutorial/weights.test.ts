import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { maxRelativeDifference, updateNorm, updateRelativeError, weightsOf } from '../../src/tutorial/weights';
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

describe('updateRelativeError', () => {
  const before = [Float32Array.from([1, 2]), Float32Array.from([3])];
  const step = (c: number): Float32Array[] => before.map((w) => w.map((v) => v - c * 0.001 * v));
  test('is 0 for the right update, 1 for none, and |c - 1| for c times the right one, where the weights barely differ', () => {
    assert.equal(updateRelativeError(before, step(1), step(1)), 0);
    assert.equal(updateRelativeError(before, before, step(1)), 1);
    assert.ok(Math.abs(updateRelativeError(before, step(1.5), step(1)) - 0.5) < 1e-4);
    assert.ok(maxRelativeDifference(step(1.5), step(1)) < 1e-3, 'the measure over the weights hides the 50% error');
  });

  test('is |c - 1| for any update and any scale (property, seeded)', () => {
    const vector = fc.array(fc.float({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(vector, vector, fc.double({ min: 0, max: 3, noNaN: true }), (w, d, c) => {
        const n = Math.min(w.length, d.length);
        const b = [Float64Array.from(w.slice(0, n))];
        const delta = d.slice(0, n);
        fc.pre(delta.some((x) => Math.abs(x) > 1e-3));
        const ref = [b[0].map((v, i) => v + delta[i])];
        const after = [b[0].map((v, i) => v + c * delta[i])];
        return Math.abs(updateRelativeError(b, after, ref) - Math.abs(c - 1)) < 1e-9 * (1 + c);
      }),
      { seed: 20261204, numRuns: 200 },
    );
  });

  test('refuses snapshots of other weights, or a reference that did not move, naming what is accepted', () => {
    assertThrowsMentioning(() => updateRelativeError(before, [before[0]], step(1)), 'three snapshots of the same weights');
    assertThrowsMentioning(() => updateRelativeError(before, step(1), before), 'weights that moved');
  });
});

describe('updateNorm', () => {
  test('is the Euclidean norm of after - before over every weight, against a plain loop (property, seeded)', () => {
    const snapshot = fc.array(fc.array(fc.float({ min: -100, max: 100, noNaN: true, noDefaultInfinity: true }), { minLength: 0, maxLength: 6 }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(snapshot, fc.double({ min: -5, max: 5, noNaN: true }), (w, shift) => {
        const before = w.map((a) => Float32Array.from(a));
        const after = before.map((a, i) => a.map((v, k) => v + shift * ((i + k) % 3)));
        let sum = 0;
        for (let i = 0; i < before.length; i++) for (let k = 0; k < before[i].length; k++) sum += (after[i][k] - before[i][k]) * (after[i][k] - before[i][k]);
        return Math.abs(updateNorm(before, after) - Math.sqrt(sum)) <= 1e-12 * (1 + Math.sqrt(sum)) && updateNorm(before, before) === 0;
      }),
      { seed: 20261205, numRuns: 200 },
    );
  });

  test('refuses snapshots of other weights, naming what is accepted', () => {
    assertThrowsMentioning(() => updateNorm([Float32Array.from([1, 2])], [Float32Array.from([1])]), 'two snapshots of the same weights');
    assertThrowsMentioning(() => updateNorm([Float32Array.from([1])], []), 'two snapshots of the same weights');
  });
});
