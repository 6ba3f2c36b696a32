import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../src/accumulatingOptimizer';
import { assertChanged, assertThrowsMentioning, batch, denseModel, maxRelativeDifference, split, weightsOf } from './helpers';

const TOLERANCE = 1e-5;

/** Fits a fresh seeded model for one epoch and returns its weights. */
async function fitWeights(
  optimizer: tf.Optimizer,
  data: { xs: tf.Tensor; ys: tf.Tensor },
  batchSize: number,
  options: { shuffle?: boolean; callbacks?: tf.CustomCallback[]; epochs?: number } = {},
): Promise<Float32Array[]> {
  const model = denseModel();
  model.compile({ optimizer, loss: 'meanSquaredError' });
  await model.fit(data.xs, data.ys, { batchSize, epochs: options.epochs ?? 1, shuffle: options.shuffle ?? false, verbose: 0, callbacks: options.callbacks });
  const weights = weightsOf(model);
  model.dispose();
  return weights;
}

describe('AccumulatingOptimizer with model.fit', () => {
  for (const [name, make] of [
    ['SGD', () => tf.train.sgd(0.1)],
    ['Adam', () => tf.train.adam(0.01)],
  ] as const) {
    it(`fit with batch 16 × accumulationSteps 4 equals fit with batch 64 (${name})`, async () => {
      const data = batch(64);
      const reference = await fitWeights(make(), data, 64);
      assertChanged(weightsOf(denseModel()), reference);
      for (const shuffle of [false, true]) {
        const optimizer = new AccumulatingOptimizer({ optimizer: make(), accumulationSteps: 4 });
        const weights = await fitWeights(optimizer, data, 16, { shuffle });
        const difference = maxRelativeDifference(weights, reference);
        assert.ok(difference <= TOLERANCE, `${name}, shuffle=${shuffle}: relative difference ${difference}`);
        assert.equal(optimizer.iterations, 1);
        assert.equal(optimizer.accumulator.microStep, 4);
        optimizer.dispose();
      }
    });
  }

  it('with its callback, weights an uneven last batch exactly (16, 16, 16, 7 = 55)', async () => {
    const data = batch(55);
    const reference = await fitWeights(tf.train.sgd(0.1), data, 55);
    const withCallback = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const exact = await fitWeights(withCallback, data, 16, { callbacks: [withCallback.callback()] });
    assert.ok(maxRelativeDifference(exact, reference) <= TOLERANCE);
    // Without the callback fit cannot tell batch sizes apart, so each batch counts once.
    const without = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const inexact = await fitWeights(without, data, 16);
    assert.ok(maxRelativeDifference(inexact, reference) > 100 * TOLERANCE);
    withCallback.dispose();
    without.dispose();
  });

  it('with its callback, flushes a short window at the end of each epoch', async () => {
    // 80 samples in batches of 16 with accumulationSteps 4: a full window of 64 and a short one
    // of 16, flushed at the epoch's end. Reference: plain updates on batches of 64 then 16.
    const data = batch(80);
    const [first, second] = split(data, [64, 16]);
    const model = denseModel();
    model.compile({ optimizer: tf.train.adam(0.01), loss: 'meanSquaredError' });
    await model.fit(first.xs, first.ys, { batchSize: 64, verbose: 0 });
    await model.fit(second.xs, second.ys, { batchSize: 16, verbose: 0 });
    const reference = weightsOf(model);
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 4 });
    const weights = await fitWeights(optimizer, data, 16, { callbacks: [optimizer.callback()] });
    assert.ok(maxRelativeDifference(weights, reference) <= TOLERANCE);
    assert.deepEqual([optimizer.iterations, optimizer.accumulator.epoch, optimizer.accumulator.pendingMicroBatches], [2, 1, 0]);
    optimizer.dispose();
    model.dispose();
  });

  it('leaks nothing over 200 batches of fit', async () => {
    const data = batch(16 * 20);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 3, clipNorm: 1 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const callbacks = [optimizer.callback()];
    await model.fit(data.xs, data.ys, { batchSize: 16, epochs: 1, verbose: 0, callbacks });
    const before = tf.memory().numTensors;
    await model.fit(data.xs, data.ys, { batchSize: 16, epochs: 10, verbose: 0, callbacks });
    assert.equal(tf.memory().numTensors, before);
    assert.equal(optimizer.accumulator.microStep, 220);
    optimizer.dispose();
    model.dispose();
  });

  it('rejects varList, which model.fit decides', () => {
    assertThrowsMentioning(
      () => new AccumulatingOptimizer({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [] } as never),
      'varList',
    );
    assertThrowsMentioning(() => new AccumulatingOptimizer({ optimizer: tf.train.sgd(1), accumulationSteps: 0 }), 'accumulationSteps');
  });

  it('describes itself and its wrapped optimizer', () => {
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.5), accumulationSteps: 2, clipNorm: 3 });
    assert.equal(optimizer.getClassName(), 'AccumulatingOptimizer');
    assert.deepEqual(optimizer.getConfig(), {
      optimizer: { className: 'SGD', config: { learningRate: 0.5 } },
      accumulationSteps: 2,
      averaging: 'per-sample',
      clipNorm: 3,
      nonFinite: 'error',
    });
    optimizer.dispose();
  });
});
