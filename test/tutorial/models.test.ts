import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { ARTICLE_SETUP, NORMALIZATIONS, cnn, mlp, simpleNet } from '../../src/tutorial/models';
import { BatchRenormalization } from '../../src/core/norm/batchRenormalization';
import { FrozenBatchNormalization } from '../../src/core/norm/frozenBatchNormalization';
import { GroupNormalization } from '../../src/core/norm/groupNormalization';
import { assertNoLeak, assertThrowsMentioning } from '../helpers';

const classNames = (model: tf.LayersModel) => model.layers.map((l) => l.getClassName());

describe('simpleNet', () => {
  test('is the article\'s network: one dense layer 10 -> 1 with a bias', () => {
    const model = simpleNet();
    assert.deepEqual(classNames(model), ['Dense']);
    assert.deepEqual(model.inputs[0].shape, [null, 10]);
    assert.deepEqual(model.outputs[0].shape, [null, 1]);
    assert.equal(model.countParams(), 11);
    assert.deepEqual(
      { ...ARTICLE_SETUP },
      { inputSize: 10, outputSize: 1, learningRate: 0.01, loss: 'meanSquaredError', microBatchSize: 16, accumulationSteps: 4, microBatches: 20 },
    );
    model.dispose();
  });

  test('the seed fixes the initial weights', () => {
    const [a, b, c] = [simpleNet({ seed: 1 }), simpleNet({ seed: 1 }), simpleNet({ seed: 2 })];
    assert.deepEqual(a.getWeights()[0].dataSync(), b.getWeights()[0].dataSync());
    assert.notDeepEqual(a.getWeights()[0].dataSync(), c.getWeights()[0].dataSync());
    [a, b, c].forEach((m) => m.dispose());
  });
});

describe('cnn', () => {
  test('with batch normalization is exactly conv-BN-ReLU-pool twice, flatten, dense 10', () => {
    const model = cnn({ normalization: 'batch' });
    assert.deepEqual(classNames(model), [
      'Conv2D', 'BatchNormalization', 'Activation', 'MaxPooling2D',
      'Conv2D', 'BatchNormalization', 'Activation', 'MaxPooling2D',
      'Flatten', 'Dense',
    ]);
    const [conv1, , relu, pool, conv2] = model.layers;
    const c1 = conv1.getConfig();
    const c2 = conv2.getConfig();
    assert.deepEqual([c1.filters, c1.kernelSize, c1.padding, c1.useBias], [16, [3, 3], 'same', false]);
    assert.deepEqual([c2.filters, c2.kernelSize], [32, [3, 3]]);
    assert.equal(relu.getConfig().activation, 'relu');
    assert.deepEqual(pool.getConfig().poolSize, [2, 2]);
    assert.deepEqual(model.layers[8].outputShape, [null, 7 * 7 * 32]);
    assert.deepEqual(model.outputs[0].shape, [null, 10]);
    assert.equal(model.layers[9].getConfig().activation, 'linear', 'the last layer emits logits');
    model.dispose();
  });

  test('each normalization puts its layer after each convolution', () => {
    const expected: Record<string, unknown> = {
      batch: 'BatchNormalization',
      group: GroupNormalization,
      layer: GroupNormalization,
      'frozen-batch': FrozenBatchNormalization,
      'batch-renorm': BatchRenormalization,
    };
    for (const normalization of NORMALIZATIONS) {
      const model = cnn({ normalization, groups: 4 });
      const norms = [model.layers[1], model.layers[5]];
      if (normalization === 'none') {
        assert.deepEqual(classNames(model), ['Conv2D', 'Activation', 'MaxPooling2D', 'Conv2D', 'Activation', 'MaxPooling2D', 'Flatten', 'Dense']);
        assert.equal(model.layers[0].getConfig().useBias, true, 'without normalization the convolution keeps its bias');
      } else if (typeof expected[normalization] === 'string') {
        norms.forEach((l) => assert.equal(l.getClassName(), expected[normalization]));
      } else {
        norms.forEach((l) => assert.ok(l instanceof (expected[normalization] as typeof GroupNormalization), `${normalization}: ${l.getClassName()}`));
      }
      if (normalization === 'group') assert.equal((norms[0] as GroupNormalization).groups, 4);
      if (normalization === 'layer') assert.equal((norms[0] as GroupNormalization).groups, 1, 'layer norm over (H, W, C) is one group');
      model.dispose();
    }
  });

  test('every normalization trains through GradientAccumulator without leaking', () => {
    const xs = tf.randomNormal([2, 28, 28, 1], 0, 1, 'float32', 4);
    const ys = tf.oneHot([3, 7], 10);
    for (const normalization of NORMALIZATIONS) {
      const model = cnn({ normalization, seed: 1 });
      const before = model.getWeights().map((w) => w.dataSync().slice());
      const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.05), accumulationSteps: 2, varList: model.trainableWeights });
      assertNoLeak(() => {
        accumulator.step(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor), { sampleCount: 2 });
      }, 2);
      assert.ok(
        model.getWeights().some((w, i) => w.dataSync().some((v, k) => v !== before[i][k])),
        `${normalization}: no weight changed`,
      );
      accumulator.dispose();
      model.dispose();
    }
    tf.dispose([xs, ys]);
  });

  test('the seed fixes the initial weights', () => {
    const [a, b, c] = [cnn({ normalization: 'group', seed: 3 }), cnn({ normalization: 'group', seed: 3 }), cnn({ normalization: 'group', seed: 4 })];
    a.getWeights().forEach((w, i) => assert.deepEqual(w.dataSync(), b.getWeights()[i].dataSync()));
    assert.notDeepEqual(a.getWeights()[0].dataSync(), c.getWeights()[0].dataSync());
    [a, b, c].forEach((m) => m.dispose());
  });
});

describe('mlp', () => {
  test('is 784-256-256-10 with the normalization after each hidden dense layer', () => {
    const model = mlp({ normalization: 'batch' });
    assert.deepEqual(classNames(model), ['Flatten', 'Dense', 'BatchNormalization', 'Activation', 'Dense', 'BatchNormalization', 'Activation', 'Dense']);
    assert.deepEqual(model.layers[0].outputShape, [null, 784]);
    assert.deepEqual([model.layers[1].outputShape, model.layers[4].outputShape, model.outputs[0].shape], [[null, 256], [null, 256], [null, 10]]);
    model.dispose();
    const layerNorm = mlp({ normalization: 'layer' });
    const norm = layerNorm.layers[2] as GroupNormalization;
    assert.equal(norm.getClassName(), 'GroupNormalization', 'LayerNorm is GroupNorm with one group, without tf.layers.layerNormalization\'s tiles');
    assert.equal(norm.groups, 1);
    // The same function as tfjs's own LayerNormalization of the same features, to float rounding.
    const reference = tf.layers.layerNormalization({ epsilon: 1e-5 });
    const [ours, theirs] = tf.tidy(() => {
      const x = tf.randomNormal([3, 256], 2, 3, 'float32', 5);
      return [norm.apply(x) as tf.Tensor, reference.apply(x) as tf.Tensor].map((t) => Array.from(t.dataSync()));
    });
    reference.dispose();
    assert.ok(ours.every((v, i) => Math.abs(v - theirs[i]) < 1e-5), 'matches tf.layers.layerNormalization');
    layerNorm.dispose();
    const none = mlp({ normalization: 'none' });
    assert.deepEqual(classNames(none), ['Flatten', 'Dense', 'Activation', 'Dense', 'Activation', 'Dense']);
    none.dispose();
  });

  test('accepts every normalization and predicts 10 logits', () => {
    for (const normalization of NORMALIZATIONS) {
      const model = mlp({ normalization });
      const y = model.predict(tf.zeros([3, 28, 28, 1])) as tf.Tensor;
      assert.deepEqual(y.shape, [3, 10]);
      y.dispose();
      model.dispose();
    }
  });
});

describe('model arguments', () => {
  test('an unknown normalization names the argument and the accepted values', () => {
    for (const build of [cnn, mlp]) {
      assertThrowsMentioning(
        () => build({ normalization: 'instance' as never }),
        build.name,
        'normalization',
        '"batch", "group", "layer", "frozen-batch", "batch-renorm", "none"',
        'got "instance"',
      );
      assertThrowsMentioning(() => build(undefined as never), 'args', 'normalization');
    }
  });

  test('groups that do not divide a layer\'s width, and other bad options, are named', () => {
    assertThrowsMentioning(() => cnn({ normalization: 'group', groups: 3 }), 'cnn', 'groups', 'divisor', '(16 here)', 'got 3');
    assertThrowsMentioning(() => mlp({ normalization: 'group', groups: 0 }), 'mlp', 'groups', 'positive integer', 'got 0');
    assertThrowsMentioning(() => cnn({ normalization: 'batch', momentum: 1 }), 'momentum', '[0, 1)');
    assertThrowsMentioning(() => cnn({ normalization: 'batch', seed: -1 }), 'seed', 'integer >= 0');
    assertThrowsMentioning(() => cnn({ normalization: 'batch', inputShape: [28, 28] }), 'inputShape', 'three positive integers');
    assertThrowsMentioning(() => simpleNet({ inputSize: 0 }), 'simpleNet', 'inputSize', 'positive integer');
  });
});
