import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { captureTensors, readCaptured } from '../../src/core/stateCapture';
import { denseNet, samples } from '../helpers';

/** A run with Adam (slots and running scalars) and an EMA, one micro-batch short of its third update. */
function adamRun() {
  const model = denseNet(3, 2, 8);
  const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.05), accumulationSteps: 2, varList: model.trainableWeights, ema: { decay: 0.9 } });
  const data = samples(5, 3, 12);
  const step = () => acc.step(() => tf.squeeze(tf.squaredDifference(model.apply(data.xs) as tf.Tensor, data.ys), [1]));
  for (let i = 0; i < 5; i++) step();
  const close = () => {
    acc.dispose();
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  };
  return { acc, step, close };
}

describe('getState takes its snapshot at the call (issue 23, item 13)', () => {
  it('a step between the call and the await changes nothing in the state returned', async () => {
    const { acc, step, close } = adamRun();
    const expected = await acc.getState();
    const pending = acc.getState();
    const result = step(); // completes the window: weights, accumulators, slots, EMA and counters all move
    assert.equal(result.applied, true);
    assert.deepEqual(await pending, expected);
    assert.notDeepEqual(await acc.getState(), expected, 'the step did change the live state');
    close();
  });

  it('resuming from a raced snapshot gives the same training as resuming from a clean one', async () => {
    const a = adamRun();
    const clean = JSON.stringify(await a.acc.getState());
    const raced = a.acc.getState();
    a.step();
    assert.equal(JSON.stringify(await raced), clean);
    a.close();
  });
});

describe('captureTensors / readCaptured', () => {
  it('reads zeros for untouched accumulators, null for missing averages, and frees every clone', async () => {
    const v = tf.variable(tf.tensor([1, 2]));
    const accumulator = tf.variable(tf.tensor([3, 4]), false);
    const tensors = tf.memory().numTensors;
    const captured = captureTensors([{ variable: v, accumulator, ema: null }], [], 0, null, { swapped: false });
    accumulator.assign(tf.tensor([9, 9]));
    const read = await readCaptured(captured);
    assert.deepEqual(read.accumulators[0].values, [0, 0]);
    assert.deepEqual(read.ema, [null]);
    assert.equal(read.optimizer, null);
    const touched = await readCaptured(captureTensors([{ variable: v, accumulator, ema: accumulator }], [v.name], 2, null, { swapped: true }));
    assert.deepEqual(touched.accumulators[0].values, [36, 36], 'held times 2^-2, read as the sums themselves');
    assert.deepEqual(touched.ema?.[0]?.values, [1, 2], 'swapped: the average is in the variable');
    assert.equal(tf.memory().numTensors, tensors + 1, 'only the assigned value is new');
    tf.dispose([v, accumulator]);
  });
});
