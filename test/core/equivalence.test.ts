import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkEquivalence } from '../../src/core/equivalence';
import { assertThrowsMentioning, batch, denseModel, weightsOf, assertBitIdentical } from '../helpers';

/** A Dense model with a layer in the middle that may break equivalence. */
function modelWith(middle: tf.layers.Layer): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 8, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) }),
      middle,
      tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: 4 }) }),
    ],
  });
}

describe('checkEquivalence', () => {
  it('takes a per-sample (1-D) loss, the form the README recommends, and judges it as its mean (issue 32, item 10)', () => {
    const { xs, ys } = batch(24);
    const model = denseModel();
    const perSample = checkEquivalence({ model, xs, ys, accumulationSteps: 3, loss: (t, p) => tf.mean(tf.squaredDifference(t, p), 1) });
    const mean = checkEquivalence({ model, xs, ys, accumulationSteps: 3 });
    assert.equal(perSample.equivalent, true);
    assert.deepEqual(perSample.variables, mean.variables);
    assertThrowsMentioning(() => checkEquivalence({ model, xs, ys, loss: (t, p) => tf.squaredDifference(t, p) }), 'loss must be a function (yTrue, yPred) => a scalar mean loss or a 1-D per-sample loss', 'a tensor of shape [24, 1]');
    model.dispose();
  });

  it('finds a Dense model equivalent, also for an uneven split (63 = 16 + 16 + 16 + 15)', () => {
    for (const n of [64, 63]) {
      const { xs, ys } = batch(n);
      const report = checkEquivalence({ model: denseModel(), xs, ys, accumulationSteps: 4 });
      assert.equal(report.equivalent, true, `max relative difference ${report.maxRelativeDifference}`);
      assert.equal(report.deterministic, true);
      assert.ok(report.maxRelativeDifference <= 1e-5);
      assert.ok(report.roundingNoise >= 0 && report.roundingNoise < 1e-5, `rounding noise ${report.roundingNoise}`);
      assert.equal(report.bound, Math.max(1e-5, 10 * report.roundingNoise));
      assert.deepEqual(report.suspects, []);
      assert.equal(report.variables.length, 4);
      assert.deepEqual(report.microBatchSizes, n === 64 ? [16, 16, 16, 16] : [16, 16, 16, 15]);
    }
  });

  it('names BatchNormalization as the layer that breaks it, and restores its moving statistics', () => {
    const { xs, ys } = batch(64);
    const model = modelWith(tf.layers.batchNormalization({ name: 'bn' }));
    const before = weightsOf(model);
    const report = checkEquivalence({ model, xs, ys, accumulationSteps: 4 });
    assert.equal(report.equivalent, false);
    assert.equal(report.deterministic, true);
    assert.ok(report.maxRelativeDifference > 1e-3, `${report.maxRelativeDifference}`);
    assert.ok(report.maxRelativeDifference > 100 * report.bound, 'far above rounding');
    assert.deepEqual(report.suspects.map((s) => [s.layer, s.className]), [['bn', 'BatchNormalization']]);
    assert.match(report.suspects[0].reason, /micro-batch/);
    assertBitIdentical(weightsOf(model), before);
  });

  it('finds LayerNormalization harmless: it normalizes each sample on its own', () => {
    const { xs, ys } = batch(64);
    const report = checkEquivalence({ model: modelWith(tf.layers.layerNormalization()), xs, ys });
    assert.equal(report.equivalent, true, `${report.maxRelativeDifference}`);
  });

  it('reports Dropout as non-deterministic', () => {
    const { xs, ys } = batch(64);
    const report = checkEquivalence({ model: modelWith(tf.layers.dropout({ rate: 0.5, name: 'drop' })), xs, ys });
    assert.equal(report.deterministic, false);
    assert.equal(report.equivalent, false);
    assert.deepEqual(report.suspects.map((s) => s.layer), ['drop']);
  });

  it('leaks nothing', () => {
    const { xs, ys } = batch(32);
    const model = modelWith(tf.layers.batchNormalization());
    checkEquivalence({ model, xs, ys });
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) checkEquivalence({ model, xs, ys, accumulationSteps: 3 });
    assert.equal(tf.memory().numTensors, before);
  });

  it('rejects bad input', () => {
    const { xs, ys } = batch(8);
    const model = denseModel();
    assertThrowsMentioning(() => checkEquivalence({ model: {} as never, xs, ys }), 'model', 'tf.LayersModel');
    assertThrowsMentioning(() => checkEquivalence({ model, xs, ys: tf.zeros([7, 1]) }), 'ys', 'same batch size');
    for (const accumulationSteps of [0, 2.5, 9]) {
      assertThrowsMentioning(() => checkEquivalence({ model, xs, ys, accumulationSteps }), 'accumulationSteps', 'positive integer');
    }
    assertThrowsMentioning(() => checkEquivalence({ model, xs, ys, tolerance: -1 }), 'tolerance', '> 0');
  });
});

describe('checkEquivalence when the loss throws', () => {
  it('rethrows, leaks no tensor and leaves the weights as they were', () => {
    const model = denseModel();
    const { xs, ys } = batch(16);
    const weights = weightsOf(model);
    for (const failAt of [1, 3, 6]) {
      let calls = 0;
      const loss = (yTrue: tf.Tensor, yPred: tf.Tensor) => {
        const value = tf.losses.meanSquaredError(yTrue, yPred);
        if (++calls === failAt) throw new Error('injected loss failure');
        return value;
      };
      const tensors = tf.memory().numTensors;
      assert.throws(() => checkEquivalence({ model, xs, ys, loss }), /injected loss failure/);
      assert.equal(tf.memory().numTensors, tensors, `failing at call ${failAt} leaked tensors`);
      assertBitIdentical(weightsOf(model), weights);
    }
    assertThrowsMentioning(() => checkEquivalence({ model, xs, ys, tolerence: 1e-3 } as never), 'unknown key "tolerence"');
    tf.dispose([xs, ys]);
    model.dispose();
  });
});
