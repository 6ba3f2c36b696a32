import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GradientAccumulator } from '../../../src/core/gradientAccumulator';
import { BatchRenormalization, batchRenormalization } from '../../../src/core/norm/batchRenormalization';
import { assertNoLeak, assertThrowsMentioning } from '../../helpers';
import { assertClose, perturbWeights, sampleInput, saveAndLoad } from '../../helpers/norm';

/** Sets moving mean and variance (and leaves gamma = 1, beta = 0). */
function setStatistics(layer: BatchRenormalization, mean: number[], variance: number[]): void {
  // getWeights hands out the live variables: copy the ones kept so that disposing below is safe.
  const [gamma, beta, , , step] = layer.getWeights().map((w) => w.clone());
  const values = [gamma, beta, tf.tensor1d(mean), tf.tensor1d(variance), step];
  layer.setWeights(values);
  tf.dispose(values);
}

describe('BatchRenormalization', () => {
  test('inference is batch normalization with the moving statistics', () => {
    const layer = batchRenormalization({ epsilon: 1e-3 });
    const x = sampleInput([4, 3]);
    layer.apply(x);
    perturbWeights(layer);
    const [gamma, beta, mean, variance] = layer.getWeights().map((w) => w.dataSync());
    const expected = Array.from(x.dataSync(), (v, i) => ((v - mean[i % 3]) / Math.sqrt(variance[i % 3] + 1e-3)) * gamma[i % 3] + beta[i % 3]);
    const y = layer.apply(x, { training: false }) as tf.Tensor;
    assertClose(y.dataSync(), expected, 1e-5);
    tf.dispose([x, y]);
  });

  test('with r = 1 and d = 0 (rMax 1, dMax 0) training is plain batch normalization', () => {
    const renorm = new BatchRenormalization({ rMax: 1, dMax: 0, epsilon: 1e-3 });
    const batchNorm = tf.layers.batchNormalization({ epsilon: 1e-3 });
    const x = sampleInput([6, 2, 2, 3]);
    renorm.apply(x);
    setStatistics(renorm, [5, -5, 2], [9, 0.1, 4]); // far from the batch's: irrelevant when r = 1, d = 0
    const a = renorm.apply(x, { training: true }) as tf.Tensor;
    const b = batchNorm.apply(x, { training: true }) as tf.Tensor;
    assertClose(a.dataSync(), b.dataSync(), 1e-5);
    tf.dispose([x, a, b]);
  });

  test('with unclipped r and d, the training output equals inference with the moving statistics', () => {
    // y = (x - mu_B)/sigma_B * sigma_B/sigma + (mu_B - mu)/sigma = (x - mu)/sigma: Ioffe 2017, eq. in section 3.
    const layer = new BatchRenormalization({ rMax: 1e6, dMax: 1e6, epsilon: 1e-3 });
    const x = sampleInput([5, 3]);
    layer.apply(x);
    setStatistics(layer, [0.5, -1, 2], [2, 0.5, 3]);
    const inference = layer.apply(x, { training: false }) as tf.Tensor; // before the training call moves the statistics
    const training = layer.apply(x, { training: true }) as tf.Tensor;
    assertClose(training.dataSync(), inference.dataSync(), 1e-5);
    tf.dispose([x, inference, training]);
  });

  test('r and d are clipped to [1/rMax, rMax] and [-dMax, dMax]', () => {
    // One channel, batch [0, 2]: mu_B = 1, sigma_B = 1 (epsilon tiny). Moving mu = 0, sigma = 10:
    // r = clip(0.1, 1/2, 2) = 0.5 and d = clip(0.1, -0.05, 0.05) = 0.05, so y = (x - 1) * 0.5 + 0.05.
    const layer = new BatchRenormalization({ rMax: 2, dMax: 0.05, epsilon: 1e-9 });
    const x = tf.tensor2d([[0], [2]]);
    layer.apply(x);
    setStatistics(layer, [0], [100]);
    const y = layer.apply(x, { training: true }) as tf.Tensor;
    assertClose(y.dataSync(), [-0.45, 0.55], 1e-6);
    tf.dispose([x, y]);
  });

  test('no gradient flows through r and d: the gradient is r times batch normalization\'s', () => {
    const x = sampleInput([4, 2], 8);
    const weights = tf.tensor2d([[1, -2], [0.5, 3], [-1, 1], [2, 0.25]]);
    const renorm = new BatchRenormalization({ rMax: 100, dMax: 100, epsilon: 1e-3 });
    renorm.apply(x);
    setStatistics(renorm, [0.3, -0.2], [4, 0.25]);
    const { mean, variance } = tf.moments(x, 0);
    // Expected r = sigma_B / sigma per channel, from the batch's and the moving statistics.
    const sigmaB = variance.add(1e-3).sqrt();
    const r = sigmaB.div(tf.tensor1d([4, 0.25]).add(1e-3).sqrt());
    const batchNormHat = (a: tf.Tensor) => {
      const m = tf.moments(a, 0);
      return a.sub(m.mean).div(m.variance.add(1e-3).sqrt());
    };
    const expected = tf.grad((a: tf.Tensor) => tf.sum(tf.mul(weights, batchNormHat(a))))(x).mul(r);
    const actual = tf.grad((a: tf.Tensor) => tf.sum(tf.mul(weights, renorm.apply(a, { training: true }) as tf.Tensor)))(x);
    assertClose(actual.dataSync(), expected.dataSync(), 1e-4);
    tf.dispose([x, weights, mean, variance, sigmaB, r, expected, actual]);
  });

  test('moving statistics move by (1 - momentum) towards the micro-batch\'s, once per training call', () => {
    const layer = new BatchRenormalization({ momentum: 0.75 });
    const x = tf.tensor2d([[1, 10], [3, 14]]); // mean [2, 12], biased variance [1, 4]
    tf.dispose(layer.apply(x, { training: true }) as tf.Tensor);
    const [, , mean, variance, step] = layer.getWeights();
    // 0.75 * 0 + 0.25 * [2, 12] and 0.75 * 1 + 0.25 * [1, 4]
    assertClose(mean.dataSync(), [0.5, 3], 1e-6, 'moving mean');
    assertClose(variance.dataSync(), [1, 1.75], 1e-6, 'moving variance');
    assert.equal(step.dataSync()[0], 1);
    tf.dispose(layer.apply(x, { training: false }) as tf.Tensor);
    assert.equal(layer.getWeights()[4].dataSync()[0], 1, 'an inference call counted as a step');
  });

  test('the clipping bounds follow the warm-up and linear ramp schedule', () => {
    const layer = new BatchRenormalization({ rMax: 3, dMax: 5, warmupSteps: 2, rampSteps: 2 });
    const x = sampleInput([2, 3]);
    layer.apply(x);
    const seen: { rMax: number; dMax: number }[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push(layer.currentBounds());
      tf.dispose(layer.apply(x, { training: true }) as tf.Tensor);
    }
    // Steps 0, 1: warm-up (1, 0); 2: ramp start (1, 0); 3: halfway (2, 2.5); 4: full (3, 5).
    assert.deepEqual(seen, [
      { rMax: 1, dMax: 0 },
      { rMax: 1, dMax: 0 },
      { rMax: 1, dMax: 0 },
      { rMax: 2, dMax: 2.5 },
      { rMax: 3, dMax: 5 },
    ]);
    const immediate = new BatchRenormalization({ rMax: 3, dMax: 5 });
    immediate.apply(x);
    assert.deepEqual(immediate.currentBounds(), { rMax: 3, dMax: 5 });
    x.dispose();
  });

  test('survives model.save / tf.loadLayersModel, step counter included', async () => {
    const model = tf.sequential({
      layers: [tf.layers.dense({ inputShape: [3], units: 4, useBias: false }), new BatchRenormalization({ rMax: 2.5, dMax: 4, warmupSteps: 10, rampSteps: 20, momentum: 0.9 })],
    });
    perturbWeights(model.layers[1]);
    const loaded = await saveAndLoad(model);
    const layer = loaded.layers[1] as BatchRenormalization;
    assert.ok(layer instanceof BatchRenormalization);
    assert.deepEqual([layer.rMax, layer.dMax, layer.warmupSteps, layer.rampSteps, layer.momentum], [2.5, 4, 10, 20, 0.9]);
    assert.equal(layer.getWeights()[4].dataSync()[0], 7, 'renorm_step lost');
    const x = sampleInput([3, 3]);
    const a = model.predict(x) as tf.Tensor;
    const b = loaded.predict(x) as tf.Tensor;
    assertClose(b.dataSync(), a.dataSync(), 0);
    tf.dispose([x, a, b]);
    model.dispose();
    loaded.dispose();
  });

  test('training through GradientAccumulator leaks no tensors', () => {
    const model = tf.sequential({
      layers: [tf.layers.dense({ inputShape: [3], units: 4, useBias: false }), new BatchRenormalization(), tf.layers.dense({ units: 2 })],
    });
    const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2, varList: model.trainableWeights });
    const xs = sampleInput([4, 3]);
    const ys = tf.oneHot([0, 1, 1, 0], 2);
    assertNoLeak(() => {
      accumulator.step(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor));
    }, 4);
    accumulator.dispose();
    model.dispose();
    tf.dispose([xs, ys]);
  });

  test('rejects bad arguments, naming them', () => {
    assertThrowsMentioning(() => new BatchRenormalization({ rMax: 0.5 }), 'BatchRenormalization', 'rMax', '>= 1', 'got 0.5');
    assertThrowsMentioning(() => new BatchRenormalization({ dMax: -1 }), 'dMax', '>= 0', 'got -1');
    assertThrowsMentioning(() => new BatchRenormalization({ momentum: 1 }), 'momentum', '[0, 1)', 'got 1');
    assertThrowsMentioning(() => new BatchRenormalization({ epsilon: -1e-3 }), 'epsilon', '> 0');
    assertThrowsMentioning(() => new BatchRenormalization({ warmupSteps: 1.5 }), 'warmupSteps', 'integer >= 0');
    assertThrowsMentioning(() => new BatchRenormalization({ rampSteps: -1 }), 'rampSteps', 'integer >= 0');
    assertThrowsMentioning(() => new BatchRenormalization({ axis: 0 }), 'axis', 'batch');
  });
});
