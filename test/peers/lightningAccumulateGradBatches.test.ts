import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { epochSchedule, GradientAccumulator } from '../../src/index';
import { assertThrowsMentioning } from '../helpers';

/**
 * Lightning's tests of `accumulate_grad_batches` and of its `GradientAccumulationScheduler`, as
 * scenarios of our own against our API: an epoch is a loop of `step` calls closed by `endEpoch`
 * (which applies a short last window, as Lightning steps on an epoch's last batch). Each test
 * names the upstream test it mirrors, in
 * tests/tests_pytorch/callbacks/test_gradient_accumulation_scheduler.py at
 * https://github.com/Lightning-AI/pytorch-lightning/blob/2027ab89d3a5e4b3812c2aa0515aa810bd81b51b/tests/tests_pytorch/callbacks/test_gradient_accumulation_scheduler.py
 * and tests/tests_pytorch/trainer/test_trainer.py at
 * https://github.com/Lightning-AI/pytorch-lightning/blob/9bf5a55495990714de299e65fe6079210bf4c54a/tests/tests_pytorch/trainer/test_trainer.py
 *
 * Not ported: the strategy, manual-optimization, hook-override and Trainer-argument checks
 * (`test_unsupported_strategies`, `test_unsupported_manual_optimization`,
 * `test_warn_if_model_has_overridden_optimization_hooks`,
 * `test_raises_when_accumulate_grad_batches_with_callback`), which are about Lightning's Trainer.
 */

/** A scalar weight trained by `epochs` epochs of `batches` micro-batches; returns the updates and what each batch did. */
function train(accumulationSteps: number | ReturnType<typeof epochSchedule>, batches: number, epochs: number) {
  const w = tf.variable(tf.scalar(1));
  const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps, varList: [w] });
  const moved: boolean[][] = [];
  for (let e = 0; e < epochs; e++) {
    const epoch: boolean[] = [];
    for (let b = 0; b < batches; b++) {
      const before = w.dataSync()[0];
      acc.step(() => tf.mul(tf.square(w), 0.5 + b / batches) as tf.Scalar);
      // On the epoch's last batch the short window is applied before the next batch starts.
      if (b === batches - 1) acc.endEpoch();
      epoch.push(w.dataSync()[0] !== before);
    }
    moved.push(epoch);
  }
  const updates = acc.updateStep;
  acc.dispose();
  w.dispose();
  return { updates, moved };
}

describe('Lightning accumulate_grad_batches and GradientAccumulationScheduler', () => {
  // Mirrors test_trainer_accumulate_grad_batches_zero_grad: 20 batches in one epoch with k of
  // 1, 2 and 3 give ceil(20 / k) optimizer steps.
  it('test_trainer_accumulate_grad_batches_zero_grad', () => {
    for (const k of [1, 2, 3]) assert.equal(train(k, 20, 1).updates, Math.ceil(20 / k), `k = ${k}`);
  });

  // Mirrors test_trainer_accumulate_grad_batches_with_callback: 4 epochs of 10 batches with the
  // schedules { 1: 2, 3: 4 } (factor 1 in epoch 0) and { 0: 2, 2: 1 }.
  it('test_trainer_accumulate_grad_batches_with_callback', () => {
    assert.equal(train(epochSchedule({ 1: 2, 3: 4 }), 10, 4).updates, 10 + 5 + 5 + 3);
    assert.equal(train(epochSchedule({ 0: 2, 2: 1 }), 10, 4).updates, 5 + 5 + 10 + 10);
  });

  // Mirrors test_invalid_keys_for_grad_accum_scheduler: { 1: 2, -3: 4 } is refused by name.
  // Note: Lightning also refuses the string key "2"; a JavaScript object's keys are all strings,
  // so ours reads "2" as epoch 2 and refuses keys that are not whole epochs, such as 1.5.
  it('test_invalid_keys_for_grad_accum_scheduler', () => {
    assertThrowsMentioning(() => epochSchedule({ 1: 2, [-3]: 4 }), 'epochSchedule: table must be keyed by whole epochs', 'a key -3');
    assertThrowsMentioning(() => epochSchedule({ 0: 2, 1.5: 1 }), 'whole epochs', 'a key 1.5');
  });

  // Mirrors test_invalid_values_for_grad_accum_scheduler: { 1: 0, 3: 4 } and { 0: 2, 2: "2" }.
  it('test_invalid_values_for_grad_accum_scheduler', () => {
    assertThrowsMentioning(() => epochSchedule({ 1: 0, 3: 4 }), 'table[1] must be a positive integer', 'got 0');
    assertThrowsMentioning(() => epochSchedule({ 0: 2, 2: '2' as never }), 'table[2] must be a positive integer', 'got "2"');
  });

  // Mirrors test_gradient_accumulation_scheduling_last_batch (test_trainer.py): with k of 3 and
  // 4, and epochs that k divides or not, the weights change exactly on a window's last batch
  // and on the epoch's last batch, and on no other, over two epochs.
  it('test_gradient_accumulation_scheduling_last_batch', () => {
    for (const [k, batches] of [[3, 12], [3, 10], [4, 12], [4, 9]]) {
      const { moved } = train(k, batches, 2);
      for (const epoch of moved) {
        const expected = epoch.map((_, b) => (b + 1) % k === 0 || b === batches - 1);
        assert.deepEqual(epoch, expected, `k = ${k}, ${batches} batches`);
      }
    }
  });
});
