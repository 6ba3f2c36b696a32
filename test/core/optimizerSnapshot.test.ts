import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { snapshotOptimizer } from '../../src/core/optimizerSnapshot';
import { assertBitIdentical, batch, denseModel, meanLoss, split, weightsOf } from '../helpers';

/** Adam that, when armed, updates everything and then throws: the worst case for atomicity. */
class FailingAdam extends tf.AdamOptimizer {
  armed = false;
  override applyGradients(grads: tf.NamedTensorMap | { name: string; tensor: tf.Tensor }[]): void {
    super.applyGradients(grads as never);
    if (this.armed) throw new Error('injected optimizer failure');
  }
}

async function optimizerValues(optimizer: tf.Optimizer): Promise<{ name: string; values: number[] }[]> {
  const weights = await optimizer.getWeights();
  const out = weights.map((w) => ({ name: w.name, values: Array.from(w.tensor.dataSync()) }));
  for (const w of weights) if (!(w.tensor instanceof tf.Variable)) w.tensor.dispose();
  return out;
}

describe('snapshotOptimizer', () => {
  it('restores slots, iteration count, new slots and weights after an update that threw half-way', async () => {
    const w = tf.variable(tf.tensor1d([1, 2, 3]));
    const adam = tf.train.adam(0.1);
    tf.tidy(() => adam.applyGradients({ [w.name]: tf.tensor1d([1, 1, 1]) } as never));
    const before = await optimizerValues(adam);
    const weights = Array.from(w.dataSync());
    const extra = tf.variable(tf.zeros([2]));
    const tensors = tf.memory().numTensors;
    const snapshot = snapshotOptimizer(adam, [w, extra]);
    // A second variable makes Adam create new slots, which restore must dispose.
    tf.tidy(() => adam.applyGradients({ [w.name]: tf.tensor1d([5, 5, 5]), [extra.name]: tf.tensor1d([1, 1]) } as never));
    snapshot.restore();
    assert.deepEqual(await optimizerValues(adam), before);
    assert.deepEqual(Array.from(w.dataSync()), weights);
    assert.equal(adam.iterations, 1);
    assert.equal(tf.memory().numTensors, tensors);
    adam.dispose();
    tf.dispose([w, extra]);
  });
});

describe('GradientAccumulator: an optimizer that throws on the window\'s last micro-step', () => {
  it('leaves weights, accumulators, optimizer slots, counters and numTensors as before, and the window is not over-filled', async () => {
    const data = batch(64);
    const parts = split(data, [16, 16, 16, 16, 16, 16, 16, 16].slice(0, 4));
    const run = (failOnce: boolean) => {
      const model = denseModel();
      const optimizer = new FailingAdam(0.01, 0.9, 0.999);
      const acc = new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: model.trainableWeights });
      return { model, optimizer, acc, step: (k: number) => acc.step(() => meanLoss(model, parts[k].xs, parts[k].ys)) };
    };
    const reference = run(false);
    [0, 1, 2, 3].forEach((k) => reference.step(k));

    const failing = run(true);
    failing.step(0);
    failing.step(1); // one applied window: Adam has slots and an iteration count
    failing.step(2);
    const state = await failing.acc.getState();
    const weights = weightsOf(failing.model);
    const tensors = tf.memory().numTensors;
    failing.optimizer.armed = true;
    assert.throws(() => failing.step(3), /injected optimizer failure/);
    assert.deepEqual(await failing.acc.getState(), state, 'state (counters, window, accumulators, optimizer slots) changed');
    assertBitIdentical(weightsOf(failing.model), weights);
    assert.equal(tf.memory().numTensors, tensors, 'tensors leaked');
    // Retried, the same micro-batch gives exactly the run that never failed.
    failing.optimizer.armed = false;
    const retried = failing.step(3);
    assert.equal(retried.applied, true);
    assert.equal(retried.windowPosition, 2, 'the window kept the failed micro-batch');
    assertBitIdentical(weightsOf(failing.model), weightsOf(reference.model));
    for (const r of [reference, failing]) {
      r.acc.dispose();
      r.model.dispose();
    }
  });

  it('flush restores the same way', async () => {
    const model = denseModel();
    const optimizer = new FailingAdam(0.01, 0.9, 0.999);
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 4, varList: model.trainableWeights });
    const { xs, ys } = batch(16);
    acc.step(() => meanLoss(model, xs, ys));
    const state = await acc.getState();
    const weights = weightsOf(model);
    const tensors = tf.memory().numTensors;
    optimizer.armed = true;
    assert.throws(() => acc.flush(), /injected/);
    assert.deepEqual(await acc.getState(), state);
    assertBitIdentical(weightsOf(model), weights);
    assert.equal(tf.memory().numTensors, tensors);
    acc.dispose();
    model.dispose();
  });
});
