import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { assertThrowsMentioning } from '../helpers';

/** The misuses issue 9 lists, each refused with a message that names the problem. */
describe('GradientAccumulator: every misuse gets a named error', () => {
  it('unknown option keys, in the constructor and every options argument', async () => {
    const w = tf.variable(tf.zeros([2]));
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [w], clipnorm: 1 } as never), 'unknown key "clipnorm"', 'did you mean "clipNorm"');
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, normalization: 'per-sample' } as never), 'unknown key "normalization"');
    assertThrowsMentioning(() => new AccumulatingOptimizer({ optimizer: tf.train.sgd(1), accumulationSteps: 2, clipnorm: 1 } as never), 'unknown key "clipnorm"');
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [w] });
    assertThrowsMentioning(() => acc.step(() => tf.sum(w) as tf.Scalar, { samplecount: 4 } as never), 'unknown key "samplecount"');
    assertThrowsMentioning(() => acc.endEpoch({ flsh: false } as never), 'unknown key "flsh"');
    await assert.rejects(acc.getState({ includeOptimiser: false } as never), /unknown key "includeOptimiser"/);
    await assert.rejects(acc.setState(await acc.getState(), { matchby: 'order' } as never), /unknown key "matchby"/);
    acc.dispose();
    w.dispose();
  });

  it('a missing optimizer, endEpoch(null), an int32 loss, a loss of no trained variable', () => {
    const w = tf.variable(tf.zeros([2]));
    for (const make of [() => new GradientAccumulator({ accumulationSteps: 2 } as never), () => new AccumulatingOptimizer({ accumulationSteps: 2 } as never)]) {
      assertThrowsMentioning(make, 'optimizer must be a tf.Optimizer', 'got undefined');
    }
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [w] });
    assertThrowsMentioning(() => acc.endEpoch(null as never), 'endEpoch', 'options must be an object', 'got null');
    const elsewhere = tf.variable(tf.ones([2]));
    const tensors = tf.memory().numTensors;
    assertThrowsMentioning(() => acc.step(() => tf.sum(tf.cast(w, 'int32')) as tf.Scalar), 'lossFn', 'float32', 'int32');
    assertThrowsMentioning(() => acc.step(() => tf.sum(elsewhere) as tf.Scalar), 'lossFn', 'depends on at least one trained variable', w.name);
    assertThrowsMentioning(() => acc.step(() => tf.scalar(1)), 'depends on at least one trained variable');
    assert.equal(tf.memory().numTensors, tensors, 'a failed step leaked tensors');
    assert.equal(acc.microStep, 0);
    acc.dispose();
    tf.dispose([w, elsewhere]);
  });

  it('two accumulators sharing one optimizer, after one of them is disposed', () => {
    const w = tf.variable(tf.zeros([2]));
    const optimizer = tf.train.adam(0.1);
    const first = new GradientAccumulator({ optimizer, accumulationSteps: 1, varList: [w] });
    const second = new GradientAccumulator({ optimizer, accumulationSteps: 1, varList: [w] });
    first.dispose();
    assertThrowsMentioning(() => second.step(() => tf.sum(w) as tf.Scalar), 'its optimizer was disposed by another', 'keepOptimizer');
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 1, varList: [w] }), 'its optimizer was disposed');
    second.dispose();
    // Negative case: keepOptimizer leaves it usable.
    const kept = tf.train.sgd(0.1);
    const a = new GradientAccumulator({ optimizer: kept, accumulationSteps: 1, varList: [w] });
    a.dispose({ keepOptimizer: true });
    const b = new GradientAccumulator({ optimizer: kept, accumulationSteps: 1, varList: [w] });
    assert.equal(b.step(() => tf.sum(w) as tf.Scalar).applied, true);
    b.dispose();
    w.dispose();
  });
});

describe('GradientAccumulator: boolean options are type-checked (issue 32, item 9)', () => {
  it('refuses { keepOptimizer: 1 }, { includeOptimizer: "no" } and { flush: "no" } by name, and changes nothing', async () => {
    const w = tf.variable(tf.zeros([2]));
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.1), accumulationSteps: 2, varList: [w] });
    acc.step(() => tf.sum(w) as tf.Scalar);
    const state = await acc.getState();
    assertThrowsMentioning(() => acc.dispose({ keepOptimizer: 1 } as never), 'keepOptimizer must be true, false or left out', 'got 1');
    await assert.rejects(acc.getState({ includeOptimizer: 'no' } as never), /includeOptimizer must be true, false or left out; got "no"/);
    await assert.rejects(acc.setState(state, { includeOptimizer: 0 } as never), /includeOptimizer must be true, false or left out; got 0/);
    assertThrowsMentioning(() => acc.endEpoch({ flush: 'no' } as never), 'flush must be true, false or left out');
    assert.deepEqual(await acc.getState(), state, 'a refused call changed the state');
    // Negative case: real booleans work.
    assert.equal((await acc.getState({ includeOptimizer: false })).optimizer, null);
    acc.dispose({ keepOptimizer: false });
    w.dispose();
  });
});
