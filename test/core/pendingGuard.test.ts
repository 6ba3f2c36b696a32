import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { PendingGuard } from '../../src/core/pendingGuard';
import { FixedStepOptimizer } from '../helpers/customOptimizer';
import { assertThrowsMentioning, assertUntouched, untouched } from '../helpers';

describe('PendingGuard', () => {
  it('refuses by name while something is pending, and lets calls through once it settled (also after a throw)', async () => {
    const guard = new PendingGuard('Owner');
    guard.check('step');
    let release: () => void = () => {};
    const running = guard.during('setState', () => new Promise<void>((resolve) => (release = resolve)));
    assertThrowsMentioning(() => guard.check('step'), 'Owner: step was called while a setState() has not finished', 'await it first');
    release();
    await running;
    guard.check('step');
    await assert.rejects(guard.during('getState', async () => { throw new Error('inside'); }), /inside/);
    guard.check('step');
  });
});

describe('an accumulator refuses changes while a state call of a custom optimizer is half-way', () => {
  it('getState through a custom getWeights: step, flush, setState and dispose are refused and change nothing; afterwards they work', async () => {
    const w = tf.variable(tf.tensor([1, 2]));
    const acc = new GradientAccumulator({ optimizer: new FixedStepOptimizer(0.5), accumulationSteps: 2, varList: [w] });
    const step = () => acc.step(() => tf.sum(tf.mul(w, tf.tensor([1, 3]))) as tf.Scalar);
    step();
    const before = await untouched(acc, [w]);
    const pending = acc.getState();
    assertThrowsMentioning(step, 'step was called while a getState() has not finished');
    assertThrowsMentioning(() => acc.flush(), 'flush');
    assertThrowsMentioning(() => acc.dispose(), 'dispose');
    const state = await pending;
    assert.deepEqual(state, before.state);
    await assertUntouched(acc, [w], before, 'calls refused during getState');
    const restoring = acc.setState(state);
    assertThrowsMentioning(step, 'while a setState() has not finished');
    await restoring;
    // The read through getWeights frees its iteration tensor, the restore its old values: no leak.
    const tensors = tf.memory().numTensors;
    await acc.setState(await acc.getState());
    assert.equal(tf.memory().numTensors, tensors, 'getState/setState through a custom optimizer leaked');
    assert.equal(step().applied, true);
    assert.deepEqual(Array.from(w.dataSync()), [0.5, 0.5]);
    acc.dispose();
    w.dispose();
  });

  it('a built-in optimizer needs no guard: a step right after getState is accepted', async () => {
    const w = tf.variable(tf.tensor([1, 2]));
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.5), accumulationSteps: 2, varList: [w] });
    const pending = acc.getState();
    acc.step(() => tf.sum(w) as tf.Scalar);
    assert.equal((await pending).counters.microStep, 0);
    acc.dispose();
    w.dispose();
  });
});
