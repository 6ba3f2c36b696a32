import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatherRows } from '../../src/core/gatherRows';
import { assertNoLeak, assertThrowsMentioning } from '../helpers';

describe('gatherRows: tf.gather along axis 0 with a scatterND gradient', () => {
  it('gathers like tf.gather and sums the gradient of repeated rows (hand-checkable)', () => {
    const table = tf.variable(tf.tensor2d([[1, 2], [3, 4], [5, 6]]));
    const ids = tf.tensor1d([2, 0, 2], 'int32');
    assert.deepEqual(gatherRows(table, ids).arraySync(), [[5, 6], [1, 2], [5, 6]]);
    // d/dtable of Σ (gathered · [[1, 10], [100, 1000], [2, 20]]): row 2 receives 1+2 and 10+20.
    const weights = tf.tensor2d([[1, 10], [100, 1000], [2, 20]]);
    const { grads } = tf.variableGrads(() => tf.sum(tf.mul(gatherRows(table, ids), weights)) as tf.Scalar, [table]);
    assert.deepEqual(grads[table.name].arraySync(), [[100, 1000], [0, 0], [3, 30]]);
    tf.dispose([table, ids, weights, ...Object.values(grads)]);
  });

  it('keeps its indices for the backward pass when they were made inside the loss function', () => {
    const table = tf.variable(tf.tensor1d([1, 2, 3]));
    const { value, grads } = tf.variableGrads(() => tf.sum(gatherRows(table, tf.tensor1d([1, 1], 'int32'))) as tf.Scalar, [table]);
    assert.deepEqual(grads[table.name].arraySync(), [0, 2, 0]);
    tf.dispose([table, value, ...Object.values(grads)]);
  });

  it('leaks nothing forward or backward', () => {
    const table = tf.variable(tf.ones([4, 3]));
    const ids = tf.tensor1d([3, 1], 'int32');
    assertNoLeak(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(gatherRows(table, ids)) as tf.Scalar, [table]);
      tf.dispose([value, ...Object.values(grads)]);
    }, 3);
    tf.dispose([table, ids]);
  });

  it('names what it accepts', () => {
    const table = tf.ones([2, 2]);
    assertThrowsMentioning(() => gatherRows(table, tf.tensor1d([0.5])), 'gatherRows', 'indices', 'int32');
    assertThrowsMentioning(() => gatherRows(tf.scalar(1), tf.tensor1d([0], 'int32')), 'gatherRows', 'table', 'rank >= 1');
    table.dispose();
  });
});
