import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { AccumulatorState } from '../../src/core/state';
import { assertBitIdentical, batch, denseModel, perSampleLoss, split, weightsOf } from '../helpers';

/** An Adam accumulator stopped mid-window (2 of 4 micro-batches of 16, after one full window). */
async function midWindow() {
  const model = denseModel();
  const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.01), accumulationSteps: 4, varList: model.trainableWeights });
  const parts = split(batch(96), [16, 16, 16, 16, 16, 16]);
  for (const { xs, ys } of parts) acc.step(() => perSampleLoss(model, xs, ys));
  const state = await acc.getState();
  return { model, acc, state };
}

type Corruption = [string, (s: AccumulatorState) => unknown, ...string[]];

const CORRUPTIONS: Corruption[] = [
  ['a string in accumulator values', (s) => ((s.accumulators[0].values as unknown[])[3] = '0.5'), 'state.accumulators[0]', 'values[3]', 'finite number'],
  ['a null in accumulator values', (s) => ((s.accumulators[1].values as unknown[])[0] = null), 'values[0]', 'got null'],
  ['a null in optimizer values', (s) => ((s.optimizer![2].values as unknown[])[1] = null), 'state.optimizer[2]', 'got null'],
  ['a string in optimizer values', (s) => ((s.optimizer![1].values as unknown[])[0] = 'NaN'), 'state.optimizer[1]', 'finite number'],
  ['a slot of the wrong shape', (s) => { s.optimizer![1].shape = [80]; }, 'state.optimizer[1]', 'shape', '[10, 8]'],
  ['a slot of another optimizer', (s) => { s.optimizer![1].name = s.optimizer![1].name.replace(/\/m$/, '/momentum'); }, 'Adam optimizer', '"/m"'],
  ['slots in another order', (s) => { const o = s.optimizer!; [o[1], o[2]] = [o[2], o[1]]; }, "variables' order"],
  ['0 micro-batches with weight 1000', (s) => { s.window.microBatches = 0; s.window.weight = 1000; }, 'state.window'],
  ['a full window', (s) => { s.window.microBatches = 4; }, 'state.window.microBatches', 'below the window size'],
  ['unit micro-batches with a sample weight', (s) => { s.window.unit = 'micro-batches'; }, 'state.window.weight', 'number of micro-batches'],
  ['fewer samples than micro-batches', (s) => { s.window.weight = 1; }, 'state.window.weight', 'at least one sample'],
  ['a non-integer counter', (s) => { s.counters.microStep = 2.5; }, 'state.counters.microStep'],
  ['a touched variable without accumulator', (s) => { s.window.touched.push('nowhere/kernel'); }, 'state.window.touched', 'nowhere/kernel'],
  ['an Infinity (as JSON cannot hold it, but objects can)', (s) => { s.accumulators[0].values[0] = Infinity; }, 'finite'],
  ['the other averaging', (s) => { (s as { averaging: string }).averaging = 'per-micro-batch'; }, 'state.averaging'],
];

describe('GradientAccumulator.setState: validate everything, then commit at once', () => {
  for (const [name, corrupt, ...fragments] of CORRUPTIONS) {
    it(`refuses ${name} and changes nothing`, async () => {
      const { model, acc, state } = await midWindow();
      const weights = weightsOf(model);
      const tensors = tf.memory().numTensors;
      const copy = JSON.parse(JSON.stringify(state)) as AccumulatorState;
      corrupt(copy);
      await assert.rejects(acc.setState(copy), (error: Error) => {
        for (const f of fragments) assert.ok(error.message.includes(f), `"${error.message}" does not mention "${f}"`);
        return true;
      });
      assert.deepEqual(await acc.getState(), state, 'the accumulator or its optimizer changed');
      assertBitIdentical(weightsOf(model), weights);
      assert.equal(tf.memory().numTensors, tensors, 'tensors leaked');
      acc.dispose();
      model.dispose();
    });
  }

  it('refuses a JSON string with a short message that does not echo it', async () => {
    const { model, acc, state } = await midWindow();
    const text = JSON.stringify(state);
    await assert.rejects(acc.setState(text as never), (error: Error) => {
      assert.ok(error.message.includes('JSON.parse'), error.message);
      assert.ok(error.message.includes(`a string of ${text.length} characters`), error.message);
      assert.ok(error.message.length < 300, `message of ${error.message.length} characters`);
      return true;
    });
    acc.dispose();
    model.dispose();
  });

  it('refuses Adam state in an accumulator around SGD (foreign state) and changes nothing', async () => {
    const { model, acc, state } = await midWindow();
    const sgd = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4, varList: model.trainableWeights });
    const tensors = tf.memory().numTensors;
    await assert.rejects(sgd.setState(state), /SGD optimizer \(it has none\)/);
    assert.equal(tf.memory().numTensors, tensors);
    assert.equal(sgd.pendingMicroBatches, 0);
    [acc, sgd].forEach((a) => a.dispose());
    model.dispose();
  });

  it('reads a version-1 state (normalization, touched flags) and resumes it', async () => {
    const { model, acc, state } = await midWindow();
    const v1 = {
      ...JSON.parse(JSON.stringify(state)),
      format: 'tfjs-accumulate/state@1',
      normalization: 'per-sample',
      window: { ...state.window, touched: state.accumulators.map((a) => state.window.touched.includes(a.name)) },
    };
    delete v1.averaging;
    delete v1.window.lossSum;
    await acc.setState(v1);
    const after = await acc.getState();
    // Version 1 (and 2) held the sums unscaled: they are restored at scale 0, the values unchanged.
    assert.deepEqual({ ...after, window: { ...after.window, lossSum: 0 } }, { ...state, window: { ...state.window, lossSum: 0, scale: 0 } });
    assert.equal(after.window.lossSum, null, 'a version-1 window does not know its loss');
    acc.dispose();
    model.dispose();
  });

  it('a successful restore leaks nothing, however often it is repeated', async () => {
    const { model, acc, state } = await midWindow();
    await acc.setState(state);
    const tensors = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await acc.setState(state);
    assert.equal(tf.memory().numTensors, tensors);
    acc.dispose();
    model.dispose();
  });
});
