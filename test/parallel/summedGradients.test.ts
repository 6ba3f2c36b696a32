import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { addSummedGradients } from '../../src/parallel/summedGradients';

describe('addSummedGradients', () => {
  it('gradient sums 10 and 6 over 4 samples apply the mean gradients 2.5 and 1.5 (by hand), leaving an untouched variable alone', () => {
    const w = tf.variable(tf.tensor1d([1, 1]));
    const untouched = tf.variable(tf.scalar(7));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.5), accumulationSteps: 1, varList: [w, untouched] });
    const sums = tf.tensor1d([10, 6]);
    const result = addSummedGradients(acc, [w, untouched], [sums, null], 4);
    assert.deepEqual([result.applied, result.updateStep], [true, 1]);
    // w − 0.5 × [10, 6] / 4 = [1 − 1.25, 1 − 0.75]
    assert.deepEqual(Array.from(w.dataSync()), [-0.25, 0.25]);
    assert.equal(untouched.dataSync()[0], 7);
    // The first call created the accumulator's Variables; later calls add no tensor.
    const tensors = tf.memory().numTensors;
    addSummedGradients(acc, [w, untouched], [sums, null], 4);
    assert.equal(tf.memory().numTensors, tensors, 'no tensor left behind');
    acc.dispose();
    tf.dispose([w, untouched, sums]);
  });
});
