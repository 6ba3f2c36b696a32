import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GradientAccumulator } from '../../../src/core/gradientAccumulator';
import {
  FrozenBatchNormalization,
  frozenBatchNormalization,
  recomputeBatchNormStatistics,
} from '../../../src/core/norm/frozenBatchNormalization';
import { assertNoLeak, assertThrowsMentioning } from '../../helpers';
import { assertClose, perturbWeights, sampleInput, saveAndLoad } from '../../helpers/norm';

/** `(x - mean) / sqrt(variance + epsilon) * gamma + beta` per channel (last axis), in float64. */
function frozenReference(x: tf.Tensor, [gamma, beta, mean, variance]: tf.Tensor[], epsilon: number): Float64Array {
  const values = x.dataSync();
  const [g, b, m, v] = [gamma, beta, mean, variance].map((t) => t.dataSync());
  const channels = x.shape[x.rank - 1];
  return Float64Array.from(values, (value, i) => {
    const c = i % channels;
    return ((value - m[c]) / Math.sqrt(v[c] + epsilon)) * g[c] + b[c];
  });
}

function smallConvModel(norm: tf.layers.Layer): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.conv2d({ inputShape: [4, 4, 1], filters: 3, kernelSize: 3, useBias: false, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
      norm,
      tf.layers.flatten(),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) }),
    ],
  });
}

describe('FrozenBatchNormalization', () => {
  test('normalizes with its moving statistics in training and in inference', () => {
    const layer = frozenBatchNormalization({ epsilon: 1e-3 });
    const x = sampleInput([3, 2, 2, 4]);
    layer.apply(x);
    perturbWeights(layer);
    const expected = frozenReference(x, layer.getWeights(), 1e-3);
    const training = layer.apply(x, { training: true }) as tf.Tensor;
    const inference = layer.apply(x, { training: false }) as tf.Tensor;
    assertClose(training.dataSync(), expected, 1e-5, 'training');
    assertClose(inference.dataSync(), expected, 1e-5, 'inference');
    tf.dispose([x, training, inference]);
  });

  test('a sample\'s training output does not depend on the rest of its micro-batch', () => {
    const layer = new FrozenBatchNormalization();
    const x = sampleInput([4, 3]);
    const whole = layer.apply(x, { training: true }) as tf.Tensor;
    const alone = layer.apply(x.slice(1, 1), { training: true }) as tf.Tensor;
    assertClose(alone.dataSync(), whole.slice(1, 1).dataSync(), 1e-7);
    tf.dispose([x, whole, alone]);
  });

  test('loading a trained BatchNormalization\'s weights gives its inference output', () => {
    const batchNorm = tf.layers.batchNormalization({ epsilon: 1e-3, momentum: 0.5 });
    const x = sampleInput([8, 2, 2, 3]);
    // Train-mode calls move BatchNorm's moving statistics away from 0 and 1.
    for (let i = 0; i < 3; i++) tf.dispose(batchNorm.apply(x, { training: true }) as tf.Tensor);
    const frozen = new FrozenBatchNormalization({ epsilon: 1e-3 });
    frozen.apply(x);
    frozen.setWeights(batchNorm.getWeights());
    const a = batchNorm.apply(x, { training: false }) as tf.Tensor;
    const b = frozen.apply(x, { training: true }) as tf.Tensor;
    assertClose(b.dataSync(), a.dataSync(), 1e-5);
    tf.dispose([x, a, b]);
  });

  test('training leaves the statistics alone and trains gamma and beta (trainAffine default true)', () => {
    const model = smallConvModel(new FrozenBatchNormalization());
    const norm = model.layers[1];
    assert.equal(norm.trainableWeights.length, 2);
    const xs = sampleInput([2, 4, 4, 1]);
    const ys = tf.tensor2d([[1, 0], [0, 1]]);
    const before = norm.getWeights().map((w) => w.dataSync().slice());
    const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.5), accumulationSteps: 2, varList: model.trainableWeights });
    assertNoLeak(() => {
      accumulator.step(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor));
    }, 3);
    const after = norm.getWeights().map((w) => w.dataSync());
    assert.notDeepEqual(after[0], before[0], 'gamma was not trained');
    assert.notDeepEqual(after[1], before[1], 'beta was not trained');
    assert.deepEqual(after[2], before[2], 'moving mean changed');
    assert.deepEqual(after[3], before[3], 'moving variance changed');
    accumulator.dispose();
    model.dispose();
    tf.dispose([xs, ys]);
  });

  test('trainAffine false makes the layer a fixed affine map', () => {
    const model = smallConvModel(new FrozenBatchNormalization({ trainAffine: false }));
    assert.equal(model.layers[1].trainableWeights.length, 0);
    assert.equal(model.layers[1].nonTrainableWeights.length, 4);
    model.dispose();
  });

  test('survives model.save / tf.loadLayersModel', async () => {
    const model = smallConvModel(new FrozenBatchNormalization({ epsilon: 1e-4, trainAffine: false }));
    perturbWeights(model.layers[1]);
    const loaded = await saveAndLoad(model);
    const layer = loaded.layers[1] as FrozenBatchNormalization;
    assert.ok(layer instanceof FrozenBatchNormalization);
    assert.equal(layer.epsilon, 1e-4);
    assert.equal(layer.trainAffine, false);
    const x = sampleInput([2, 4, 4, 1]);
    const a = model.predict(x) as tf.Tensor;
    const b = loaded.predict(x) as tf.Tensor;
    assertClose(b.dataSync(), a.dataSync(), 0);
    tf.dispose([x, a, b]);
    model.dispose();
    loaded.dispose();
  });

  test('rejects bad arguments, naming them', () => {
    assertThrowsMentioning(() => new FrozenBatchNormalization({ epsilon: 0 }), 'FrozenBatchNormalization', 'epsilon', '> 0', 'got 0');
    assertThrowsMentioning(() => new FrozenBatchNormalization({ axis: 0 }), 'axis', 'batch');
    assertThrowsMentioning(() => new FrozenBatchNormalization({ trainAffine: 1 as unknown as boolean }), 'trainAffine', 'true or false');
    const layer = new FrozenBatchNormalization({ axis: 2 });
    assertThrowsMentioning(() => layer.apply(tf.zeros([2, 3])), 'axis', '[1, 1]', 'got 2');
  });
});

describe('recomputeBatchNormStatistics', () => {
  test('sets each layer\'s statistics to those of its input, layer after layer', () => {
    const model = tf.sequential({
      layers: [
        tf.layers.dense({ inputShape: [3], units: 4, kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
        new FrozenBatchNormalization(),
        tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
        tf.layers.batchNormalization(),
      ],
    });
    const xs = sampleInput([16, 3]);
    assert.equal(recomputeBatchNormStatistics(model, xs), 2);
    // The first layer's input is dense(xs); the second's is dense(normalized first output).
    const [first, third] = [model.layers[0], model.layers[2]];
    tf.tidy(() => {
      const h1 = first.apply(xs) as tf.Tensor;
      const m1 = tf.moments(h1, 0);
      const [, , mean1, variance1] = model.layers[1].getWeights();
      assertClose(mean1.dataSync(), m1.mean.dataSync(), 1e-6, 'first mean');
      assertClose(variance1.dataSync(), m1.variance.dataSync(), 1e-5, 'first variance');
      const h2 = third.apply(model.layers[1].apply(h1)) as tf.Tensor;
      const m2 = tf.moments(h2, 0);
      const [, , mean2, variance2] = model.layers[3].getWeights();
      assertClose(mean2.dataSync(), m2.mean.dataSync(), 1e-6, 'second mean');
      assertClose(variance2.dataSync(), m2.variance.dataSync(), 1e-5, 'second variance');
      // With its own statistics, the frozen layer's output over xs is standardized.
      const out = tf.moments(model.layers[1].apply(h1) as tf.Tensor, 0);
      assertClose(out.mean.dataSync(), [0, 0, 0, 0], 1e-5, 'standardized mean');
    });
    assertNoLeak(() => recomputeBatchNormStatistics(model, xs), 2);
    xs.dispose();
    model.dispose();
  });

  test('rejects a non-sequential model and a batch of one', () => {
    const input = tf.input({ shape: [2] });
    const functional = tf.model({ inputs: input, outputs: tf.layers.dense({ units: 1 }).apply(input) as tf.SymbolicTensor });
    assertThrowsMentioning(() => recomputeBatchNormStatistics(functional as unknown as tf.Sequential, tf.zeros([4, 2])), 'model', 'tf.Sequential');
    const sequential = tf.sequential({ layers: [tf.layers.dense({ inputShape: [2], units: 1 })] });
    assertThrowsMentioning(() => recomputeBatchNormStatistics(sequential, tf.zeros([1, 2])), 'xs', 'at least 2');
  });
});
