import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { singleThreadWindow, windowData } from '../../src/parallel/benchWindow';
import { mlp } from '../../src/tutorial/models';

describe('benchWindow', () => {
  it('makes a window of the model\'s shapes, and its single-thread run applies one update per window without leaking', () => {
    const model = mlp({ normalization: 'none', inputShape: [4, 4, 1], classes: 3, seed: 2 });
    const a = windowData(model, 3, 2);
    assert.deepEqual([a.xsShape, a.ysShape, a.batches.length], [[2, 4, 4, 1], [2, 3], 3]);
    assert.ok(a.batches.every((d) => d.xs.length === 32 && d.ys.length === 6 && d.ys.reduce((s, v) => s + v, 0) === 2), 'one-hot labels, one per sample');
    const before = model.trainableWeights.map((w) => Array.from(w.read().dataSync()));
    const window = singleThreadWindow(model, a, 'softmaxCrossEntropy');
    window.run();
    const tensors = tf.memory().numTensors;
    window.run();
    assert.equal(tf.memory().numTensors, tensors);
    assert.notDeepEqual(model.trainableWeights.map((w) => Array.from(w.read().dataSync())), before, 'the window updated the weights');
    window.dispose();
    model.dispose();
  });
});
