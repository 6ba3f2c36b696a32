import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/index';
import { assertBitIdentical, weightsOf } from '../helpers';

/**
 * optax's `MultiSteps` tests, as scenarios of our own against our API. Each test names the
 * upstream test it mirrors, in optax/transforms/_accumulation_test.py at
 * https://github.com/google-deepmind/optax/blob/2edbcbe2390da13983b92cbef94ac0460ecde1c5/optax/transforms/_accumulation_test.py
 *
 * Not ported: `test_multi_steps_scan_dtype_stability` and `test_multi_steps_mixed_precision`
 * (tfjs accumulates in float32 only, there is no other dtype to keep stable), and
 * `test_multi_steps_zero_nans` (a compatibility check with optax's `zero_nans` transform, which
 * has no tfjs counterpart; non-finite values are ours to handle, see the skip test below).
 *
 * Note: optax's `update` returns the update to add (`+2.5`); a tfjs optimizer applies it, so
 * the same window moves a weight from 0 to −2.5 with SGD at rate 1.
 */

describe('optax MultiSteps (optax/transforms/_accumulation_test.py)', () => {
  // Mirrors MultiStepsTest.test_multi_steps: parameters change only every k-th mini-step, and
  // the loss goes down exactly then; Adam, decoupled weight decay 1e-2 and a scale of -1e-4
  // (our adam(1e-4) with weightDecay) as a stateful inner optimizer that reads the parameters.
  it('test_multi_steps', () => {
    const k = 4;
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [7], kernelInitializer: tf.initializers.glorotUniform({ seed: 0 }) })] });
    const data = tf.ones([32, 7]);
    const lossOf = () => tf.tidy(() => tf.mean(tf.square(model.apply(data) as tf.Tensor)).dataSync()[0]);
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(1e-4), accumulationSteps: k, varList: model.trainableWeights, weightDecay: { rate: 1e-2, exclude: () => false } });
    let previousLoss = lossOf();
    let previous = weightsOf(model);
    for (let i = 0; i < 5 * k; i++) {
      const { applied } = acc.step(() => tf.mean(tf.square(model.apply(data) as tf.Tensor)) as tf.Scalar);
      const loss = lossOf();
      if (i % k < k - 1) {
        assert.equal(applied, false);
        assertBitIdentical(weightsOf(model), previous);
        assert.equal(loss, previousLoss);
      } else {
        assert.equal(applied, true);
        assert.ok(loss < previousLoss, `mini-step ${i}: loss ${loss} did not go below ${previousLoss}`);
        previousLoss = loss;
      }
      previous = weightsOf(model);
    }
    acc.dispose();
    data.dispose();
    model.dispose();
  });

  // Mirrors test_multi_steps_every_k_schedule: 1 mini-step per update for the first two
  // updates, then 3; our schedule reads the update step as optax's reads `gradient_step`.
  it('test_multi_steps_every_k_schedule', () => {
    const a = tf.variable(tf.scalar(0));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1e-4), accumulationSteps: ({ updateStep }) => (updateStep < 2 ? 1 : 3), varList: [a] });
    const zeroGradient = () => acc.step(() => tf.mul(a, 0) as tf.Scalar).applied;
    for (let i = 0; i < 2; i++) assert.equal(zeroGradient(), true);
    for (let i = 0; i < 5; i++) {
      assert.deepEqual([zeroGradient(), zeroGradient(), zeroGradient()], [false, false, true]);
    }
    assert.equal(acc.updateStep, 7);
    acc.dispose();
    a.dispose();
  });

  // Mirrors test_multi_steps_computes_mean: gradients 1, 2, 3, 4 over a window of 4 give one
  // update by their mean, 2.5.
  it('test_multi_steps_computes_mean', () => {
    const a = tf.variable(tf.scalar(0));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 4, varList: [a] });
    const applied = [1, 2, 3, 4].map((g) => acc.step(() => tf.mul(a, g) as tf.Scalar).applied);
    assert.deepEqual(applied, [false, false, false, true]);
    assert.equal(a.dataSync()[0], -2.5);
    acc.dispose();
    a.dispose();
  });

  // Mirrors test_multi_steps_skip_not_finite: with skipping, an Infinity or NaN gradient does
  // not count as a mini-step (optax's `mini_step`, our `pendingMicroBatches`) and moves nothing.
  it('test_multi_steps_skip_not_finite', () => {
    const a = tf.variable(tf.scalar(0));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [a], nonFinite: 'skip-micro-batch' });
    const step = (g: number) => acc.step(() => tf.mul(a, g) as tf.Scalar);
    step(1);
    assert.equal(acc.pendingMicroBatches, 1);
    step(1);
    assert.equal(acc.pendingMicroBatches, 0);
    assert.equal(a.dataSync()[0], -1);
    for (const bad of [Infinity, Number.NaN]) {
      assert.equal(step(bad).skipped, 'micro-batch');
      assert.equal(acc.pendingMicroBatches, 0, `a ${bad} gradient counted as a mini-step`);
      assert.equal(a.dataSync()[0], -1);
    }
    step(1);
    assert.equal(acc.pendingMicroBatches, 1);
    step(1);
    assert.equal(acc.pendingMicroBatches, 0);
    assert.equal(a.dataSync()[0], -2);
    acc.dispose();
    a.dispose();
  });
});
