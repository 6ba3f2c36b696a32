import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator, NonFiniteGradientError } from '../../src/core/gradientAccumulator';

/**
 * `addGradientSums`: a contribution reduced elsewhere (sums plus a count) added exactly, and
 * `addNonFinite`: micro-batches found non-finite elsewhere, under the core's policy.
 */

function setup(accumulationSteps = 1, extra: { nonFinite?: 'error' | 'skip-micro-batch' | 'skip-window'; averaging?: 'per-sample' | 'per-micro-batch' } = {}) {
  const w = tf.variable(tf.tensor1d([1, 1]));
  const untouched = tf.variable(tf.scalar(7));
  const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.5), accumulationSteps, varList: [w, untouched], ...extra });
  const done = () => {
    acc.dispose();
    tf.dispose([w, untouched]);
  };
  return { w, untouched, acc, done };
}

describe('GradientAccumulator.addGradientSums', () => {
  it('sums 10 and 6 over 4 samples apply the mean gradients 2.5 and 1.5 (by hand), leaving an untouched variable alone', () => {
    const { w, untouched, acc, done } = setup();
    const sums = tf.tensor1d([10, 6]);
    const result = acc.addGradientSums({ [w.name]: sums }, { count: 4, unit: 'samples' });
    assert.deepEqual([result.applied, result.updateStep, result.sampleCount], [true, 1, 4]);
    // w − 0.5 × [10, 6] / 4 = [1 − 1.25, 1 − 0.75]
    assert.deepEqual(Array.from(w.dataSync()), [-0.25, 0.25]);
    assert.equal(untouched.dataSync()[0], 7);
    const tensors = tf.memory().numTensors;
    acc.addGradientSums({ [w.name]: sums }, { count: 4 });
    assert.equal(tf.memory().numTensors, tensors, 'no tensor left behind');
    sums.dispose();
    done();
  });

  it('takes a fractional count (weighted tokens): sums 5 and 2.5 over 2.5 give the mean 2 and 1', () => {
    const { w, acc, done } = setup();
    const sums = tf.tensor1d([5, 2.5]);
    acc.addGradientSums({ [w.name]: sums }, { count: 2.5 });
    assert.deepEqual(Array.from(w.dataSync()), [0, 0.5]);
    sums.dispose();
    done();
  });

  it('is exact: the update is w − lr · (sums / count) with one float32 division, bit for bit', () => {
    const { w, acc, done } = setup();
    const values = [0.1, 1 / 3];
    const count = 3;
    const expected = tf.tidy(() => tf.sub(w, tf.mul(tf.div(tf.tensor1d(values), count), 0.5)).dataSync() as Float32Array);
    const sums = tf.tensor1d(values);
    acc.addGradientSums({ [w.name]: sums }, { count });
    assert.deepEqual(Array.from(w.dataSync()), Array.from(expected));
    sums.dispose();
    done();
  });

  it('counts several micro-batches at once, and the window closes on the micro-batch that fills it', () => {
    const { w, acc, done } = setup(4);
    const sums = tf.tensor1d([3, 3]);
    const first = acc.addGradientSums({ [w.name]: sums }, { count: 6, microBatches: 3, unit: 'samples', lossSum: 1.5 });
    assert.deepEqual([first.applied, first.windowPosition, acc.microStep, acc.pendingMicroBatches, first.windowLoss], [false, 3, 3, 3, 0.25]);
    const second = acc.addGradientSums({ [w.name]: sums }, { count: 2, unit: 'samples', lossSum: 0.5 });
    assert.deepEqual([second.applied, acc.microStep, acc.updateStep, second.windowLoss], [true, 4, 1, 0.25]);
    // The window's sum [6, 6] over 8 samples: w − 0.5 × 0.75.
    assert.deepEqual(Array.from(w.dataSync()), [0.625, 0.625]);
    sums.dispose();
    done();
  });

  it('refuses bad contributions by name and changes nothing', () => {
    const { w, untouched, acc, done } = setup(3);
    const sums = tf.tensor1d([1, 2]);
    acc.addGradientSums({ [w.name]: sums }, { count: 2 });
    const wrongShape = tf.tensor2d([[1, 2]]);
    const before = { tensors: tf.memory().numTensors, state: acc.state, w: Array.from(w.dataSync()) };
    const cases: [() => unknown, RegExp][] = [
      [() => acc.addGradientSums({ [w.name]: sums }, { count: -1 }), /args\.count must be a finite number ≥ 0/],
      [() => acc.addGradientSums({ [w.name]: sums }, { count: Number.NaN }), /args\.count must be a finite number ≥ 0 .*; got NaN/],
      [() => acc.addGradientSums({ [w.name]: sums }, { count: 2.5, unit: 'samples' }), /args\.count must be a whole number of samples/],
      [() => acc.addGradientSums({ [w.name]: sums }, { count: 2, unit: 'micro-batches' }), /args\.unit must be "samples" or "counts" under "per-sample" averaging/],
      [() => acc.addGradientSums({ [w.name]: wrongShape }, { count: 2 }), /sums\[".*"\] must be a float32 tensor of the variable's shape \[2\]; got a float32 tensor of shape \[1, 2\]/],
      [() => acc.addGradientSums({ nope: sums }, { count: 2 }), /sums\["nope"\] must be keyed by the name of a trained variable/],
      [() => acc.addGradientSums({}, { count: 2 }), /sums must be a map with at least one summed gradient; got an empty map/],
      [() => acc.addGradientSums({ [w.name]: sums }, { count: 2, sampleCount: 2 } as never), /args has an unknown key "sampleCount"/],
      [() => acc.addGradientSums({ [w.name]: sums }, { count: 2, microBatches: 3 }), /args\.microBatches must be at most 2, the micro-batches the open window still takes/],
      [() => acc.addGradientSums({ [w.name]: sums }, undefined as never), /args must be an object \{ count/],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, message);
      assert.deepEqual({ tensors: tf.memory().numTensors, state: acc.state, w: Array.from(w.dataSync()) }, before, String(message));
    }
    assert.equal(untouched.dataSync()[0], 7);
    tf.dispose([sums, wrongShape]);
    done();
  });

  it('a sum that overflows float32 at the window\'s scale follows the non-finite policy', () => {
    const { w, acc, done } = setup(2);
    const huge = tf.tensor1d([3e38, 0]);
    // Sums already at the window's scale (2^-1 for 2 micro-batches) are added as they are.
    assert.equal(acc.openWindow().scale, 1);
    acc.addGradientSums({ [w.name]: huge }, { count: 1, scale: 1 });
    assert.throws(() => acc.addGradientSums({ [w.name]: huge }, { count: 1, scale: 1 }), NonFiniteGradientError);
    assert.deepEqual([acc.microStep, acc.pendingMicroBatches], [1, 1]);
    huge.dispose();
    done();
  });
});

describe('GradientAccumulator.addNonFinite', () => {
  it('"error" throws NonFiniteGradientError naming the micro-steps and changes nothing; "skip-window" counts and drops the window', () => {
    const error = setup(3);
    const state = error.acc.state;
    assert.throws(() => error.acc.addNonFinite(2), (e: Error) => e instanceof NonFiniteGradientError && /micro-steps 1–2 produced a non-finite/.test(e.message));
    assert.deepEqual(error.acc.state, state);
    assert.throws(() => error.acc.addNonFinite(0), /addNonFinite: microBatches must be a positive integer/);
    error.done();

    const skip = setup(3, { nonFinite: 'skip-window' });
    const sums = tf.tensor1d([1, 1]);
    skip.acc.addGradientSums({ [skip.w.name]: sums }, { count: 2 });
    assert.throws(() => skip.acc.addNonFinite(3), /at most 2/);
    const result = skip.acc.addNonFinite(2);
    assert.deepEqual([result.skipped, skip.acc.skippedMicroBatches, skip.acc.skippedWindows, skip.acc.pendingMicroBatches], ['window', 2, 1, 0]);
    assert.deepEqual(Array.from(skip.w.dataSync()), [1, 1], 'a dropped window applies nothing');
    sums.dispose();
    skip.done();

    const micro = setup(3, { nonFinite: 'skip-micro-batch' });
    micro.acc.addNonFinite(5);
    assert.deepEqual([micro.acc.microStep, micro.acc.skippedMicroBatches, micro.acc.pendingMicroBatches], [5, 5, 0]);
    micro.done();
  });
});
