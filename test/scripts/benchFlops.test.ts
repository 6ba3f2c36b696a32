import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cnn, mlp, simpleNet } from '../../src/models';
import { stepFlops } from '../../scripts/benchFlops';

test('stepFlops counts the MLP by hand: 784x256 + 256x256 + 256x10 multiply-adds per sample', () => {
  const model = mlp({ normalization: 'none', seed: 0 });
  const f = stepFlops(model, 64);
  assert.equal(f.forwardMacsPerSample, 784 * 256 + 256 * 256 + 256 * 10);
  assert.equal(f.firstLayerMacsPerSample, 784 * 256);
  // Forward, weight gradients, input gradients of the two upper layers only.
  assert.equal(f.trainingFlops, 2 * 64 * (3 * 268_800 - 200_704));
  model.dispose();
});

test('stepFlops counts convolutions per output position', () => {
  const model = cnn({ normalization: 'batch', seed: 0 });
  const f = stepFlops(model, 16);
  const conv1 = 28 * 28 * 3 * 3 * 1 * 16;
  const conv2 = 14 * 14 * 3 * 3 * 16 * 32;
  const dense = 7 * 7 * 32 * 10;
  assert.equal(f.forwardMacsPerSample, conv1 + conv2 + dense, 'BatchNorm scales are not counted');
  assert.equal(f.trainingFlops, 2 * 16 * (3 * (conv1 + conv2 + dense) - conv1));
  model.dispose();
});

test('stepFlops of the one-layer SimpleNet has no input gradient at all', () => {
  const model = simpleNet({ seed: 0 });
  assert.equal(stepFlops(model, 1).trainingFlops, 2 * 2 * 10, 'forward and weight gradient only');
  model.dispose();
  assert.equal(tf.memory().numTensors, 0);
});
