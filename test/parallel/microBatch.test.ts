import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkMicroBatch } from '../../src/parallel/microBatch';

describe('checkMicroBatch', () => {
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] })] });

  it('transfers an array that owns its buffer, copies a view into a larger one, and copies tensors out', () => {
    const own = { xs: { values: new Float32Array(6), shape: [2, 3] }, ys: { values: new Float32Array(4), shape: [2, 2] } };
    const checked = checkMicroBatch('test', own, model);
    assert.equal(checked.xs.values, own.xs.values, 'the same array, to be transferred');
    assert.deepEqual(checked.transfer, [own.xs.values.buffer, own.ys.values.buffer]);
    assert.equal(checked.bytes, (6 + 4) * 4);

    const big = new Float32Array(100);
    const view = { xs: { values: big.subarray(10, 16), shape: [2, 3] }, ys: { values: big.subarray(20, 24), shape: [2, 2] } };
    const copied = checkMicroBatch('test', view, model);
    assert.notEqual(copied.xs.values.buffer, big.buffer, 'a view is copied, so transferring it cannot detach the rest');

    const tensors = { xs: tf.ones([2, 3]), ys: tf.zeros([2, 2]) };
    const fromTensors = checkMicroBatch('test', tensors, model);
    assert.deepEqual(Array.from(fromTensors.xs.values), [1, 1, 1, 1, 1, 1]);
    assert.equal(tensors.xs.isDisposed, false, 'the caller still owns its tensors');
    tf.dispose([tensors.xs, tensors.ys]);
  });

  it('names what is wrong', () => {
    const ys = { values: new Float32Array(4), shape: [2, 2] };
    assert.throws(() => checkMicroBatch('test', { xs: { values: new Float32Array(8), shape: [2, 4] }, ys }, model), /test: batch\.xs must be a batch of the model's input shape \[batch, 3\]; got shape \[2, 4\]/);
    assert.throws(() => checkMicroBatch('test', { xs: { values: new Float32Array(5), shape: [2, 3] }, ys }, model), /batch\.xs must be a tf\.Tensor or \{ values: Float32Array \| Int32Array, shape \}.*got shape \[2, 3\] with 5 values/);
    assert.throws(() => checkMicroBatch('test', { xs: { values: [1, 2, 3], shape: [1, 3] }, ys }, model), /batch\.xs must be a tf\.Tensor or/);
    assert.throws(() => checkMicroBatch('test', { xs: tf.ones([2, 3], 'bool'), ys }, model), /batch\.xs must be a float32 or int32 tensor; got a bool tensor/);
  });
});
