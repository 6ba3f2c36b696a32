import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addChecked } from '../../src/core/addChecked';
import { assertThrowsMentioning } from '../helpers';

// The core's dispatcher on its own: with no one-pass kernel registered (the default cpu backend
// of these tests), addChecked is tfjs ops. test/backend/kernels/addChecked.test.ts checks the kernels.

test('without a registered kernel, addChecked adds with tfjs ops and checks exactly', () => {
  const sum = tf.tensor1d([1, 2, 3e38]);
  const gradient = tf.tensor1d([0.5, -2, 3e38]);
  const big = addChecked(sum, gradient, 1);
  // 3e38 + 3e38 overflows float32: the new sum holds Infinity, and the check says so.
  assert.ok(Number.isNaN(big.check.dataSync()[0]));
  const finite = addChecked(tf.tensor1d([3e38, -3e38]), tf.tensor1d([1, -1]), 1);
  assert.equal(finite.check.dataSync()[0], 0, 'huge finite values are not flagged (a plain sum would overflow)');
  const scaled = addChecked(null, tf.tensor1d([1, 2]), 0.5);
  assert.deepEqual(Array.from(scaled.sum.dataSync()), [0.5, 1]);
  tf.dispose([sum, gradient, big.sum, big.check, finite.sum, finite.check, scaled.sum, scaled.check]);
});

test('addChecked names a bad argument', () => {
  const g = tf.tensor1d([1, 2]);
  assertThrowsMentioning(() => addChecked(null, [1, 2] as never), 'addChecked', 'gradient', 'a tf.Tensor');
  assertThrowsMentioning(() => addChecked(tf.zeros([3]), g), 'addChecked', 'sum', '[2]');
  assertThrowsMentioning(() => addChecked(null, g, Number.NaN), 'addChecked', 'weight', 'a finite number');
  g.dispose();
});

test('the checks of several sums, added as the accumulator adds them, are 0 only when all are finite', () => {
  // The accumulator adds each weight's check (addIntoSums, src/core/accumulation.ts); the total says whether any
  // element of any new sum is NaN or ±Infinity, whatever the magnitudes.
  const probe = (values: number[][]) =>
    tf.tidy(() => {
      const checks = values.map((v) => addChecked(null, tf.tensor1d(v)).check);
      return checks.length === 0 ? 0 : tf.addN(checks).dataSync()[0];
    });
  assert.equal(probe([[3e38, 3e38, 3e38], [-3e38]]), 0, 'finite values whose sum overflows');
  assert.ok(Number.isNaN(probe([[1, 2], [NaN]])));
  assert.ok(Number.isNaN(probe([[Infinity, 1]])));
  assert.ok(Number.isNaN(probe([[1], [-Infinity]])));
  assert.equal(probe([]), 0);
  // The old check, a plain sum, is the negative case: it calls these finite values non-finite.
  assert.equal(Number.isFinite(tf.tidy(() => tf.sum(tf.tensor1d([3e38, 3e38])).dataSync()[0])), false);
});
