import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/index';
import { maxRelativeDifference } from '../helpers';

/**
 * Accelerate's gradient-accumulation checks in `test_sync`, as scenarios of our own against our
 * API. Each test names the upstream function it mirrors, in
 * src/accelerate/test_utils/scripts/test_sync.py at
 * https://github.com/huggingface/accelerate/blob/010fa01911d569d5e948c2ca5f81e4e43a1f99d7/src/accelerate/test_utils/scripts/test_sync.py
 *
 * Their setup, rebuilt: a regression model `y = a·x + b`, 80 samples of `y = 2x + 3 + noise`
 * in batches of 16 (5 batches), 2 batches per update, against a ground truth trained by hand.
 *
 * Not ported here: `test_noop_sync` and `test_distributed_sync`, which check DDP's `no_sync`
 * across processes; they belong with the parallel trainer's tests.
 *
 * Note: Accelerate's ground truth divides every batch's loss by 2, also in the last window,
 * which holds one batch; ours divides a window by what it holds (`flush`), so the last update
 * is the gradient of that batch's mean loss, as one big batch of it would give.
 */

/** The dataset: 80 seeded samples, in 5 batches of 16. */
function regressionBatches(): { xs: tf.Tensor1D; ys: tf.Tensor1D }[] {
  return tf.tidy(() => {
    const xs = tf.randomNormal([80], 0, 1, 'float32', 42) as tf.Tensor1D;
    const ys = tf.add(tf.add(tf.mul(xs, 2), 3), tf.mul(tf.randomNormal([80], 0, 1, 'float32', 43), 0.1)) as tf.Tensor1D;
    const xb = tf.split(xs, 5) as tf.Tensor1D[];
    const yb = tf.split(ys, 5) as tf.Tensor1D[];
    return xb.map((x, i) => ({ xs: x, ys: yb[i] }));
  });
}

/** The regression model: two scalar weights, a and b, starting from the same values each time. */
function regressionModel() {
  const a = tf.variable(tf.scalar(0.5), true);
  const b = tf.variable(tf.scalar(-0.5), true);
  const loss = (xs: tf.Tensor, ys: tf.Tensor) => tf.losses.meanSquaredError(ys, tf.add(tf.mul(xs, a), b)) as tf.Scalar;
  return { a, b, loss, weights: () => [a, b].map((v) => Float32Array.from(v.dataSync())), dispose: () => tf.dispose([a, b]) };
}

/** Frees one test's accumulator, hand-driven optimizer, both models and the data. */
function release(acc: GradientAccumulator, opt: tf.Optimizer, truth: { dispose(): void }, ours: { dispose(): void }, data: { xs: tf.Tensor; ys: tf.Tensor }[]): void {
  acc.dispose();
  opt.dispose();
  truth.dispose();
  ours.dispose();
  tf.dispose(data.flatMap((d) => [d.xs, d.ys]));
}

describe('Accelerate test_sync (src/accelerate/test_utils/scripts/test_sync.py)', () => {
  // Mirrors test_gradient_accumulation: the accumulated gradient matches the ground truth's at
  // every sync point (every second batch and the last one), and between them nothing is applied.
  it('test_gradient_accumulation', () => {
    const data = regressionBatches();
    const truth = regressionModel();
    const ours = regressionModel();
    const opt = tf.train.sgd(0.1);
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2, averaging: 'per-micro-batch', varList: [ours.a, ours.b] });
    let held: tf.NamedTensorMap | null = null;
    let heldCount = 0;
    data.forEach(({ xs, ys }, iteration) => {
      // The ground truth by hand: sum the batch gradients, step at the sync points with their mean.
      const { grads } = tf.variableGrads(() => truth.loss(xs, ys), [truth.a, truth.b]);
      held = held === null ? grads : tf.tidy(() => Object.fromEntries(Object.entries(held as tf.NamedTensorMap).map(([k, g]) => [k, tf.add(g, grads[k])])));
      heldCount += 1;
      const last = iteration === data.length - 1;
      const sync = (iteration + 1) % 2 === 0 || last;
      const before = ours.weights();
      const { applied } = acc.step(() => ours.loss(xs, ys));
      const flushed = last && !applied ? acc.flush().applied : false;
      if (sync) {
        tf.tidy(() => opt.applyGradients(Object.fromEntries(Object.entries(held as tf.NamedTensorMap).map(([k, g]) => [k, tf.div(g, heldCount)])) as never));
        held = null;
        heldCount = 0;
        assert.ok(applied || flushed, `batch ${iteration} is a sync point`);
        assert.ok(maxRelativeDifference(ours.weights(), truth.weights()) <= 1e-6, `batch ${iteration}: the weights after the update differ`);
      } else {
        assert.equal(applied, false, `batch ${iteration} is not a sync point`);
        assert.deepEqual(ours.weights(), before, `batch ${iteration} moved the weights`);
      }
    });
    // Accelerate ends with `accelerator.step == 0`: no micro-batch is left in a window.
    assert.equal(acc.pendingMicroBatches, 0);
    assert.equal(acc.updateStep, 3);
    release(acc, opt, truth, ours, data);
  });

  // Mirrors test_gradient_accumulation_with_opt_and_scheduler: AdamW at 1e-3 with a LambdaLR of
  // step^0.65; the optimizer and the schedule advance only at sync points, exactly as often as
  // in the loop by hand, and the weights follow it.
  it('test_gradient_accumulation_with_opt_and_scheduler', () => {
    const data = regressionBatches();
    const truth = regressionModel();
    const ours = regressionModel();
    const schedule = (step: number) => 1e-3 * step ** 0.65;
    // torch's AdamW: decoupled decay 0.01 before the Adam step, at the scheduled rate.
    const opt = tf.train.adam(schedule(0));
    const acc = new GradientAccumulator({
      optimizer: tf.train.adam(1e-3), accumulationSteps: 2, averaging: 'per-micro-batch', varList: [ours.a, ours.b],
      learningRate: schedule, weightDecay: { rate: 0.01, exclude: () => false },
    });
    let sums: tf.Tensor[] | null = null;
    let count = 0;
    let schedulerSteps = 0;
    data.forEach(({ xs, ys }, iteration) => {
      const { grads } = tf.variableGrads(() => truth.loss(xs, ys), [truth.a, truth.b]);
      const g = [grads[truth.a.name], grads[truth.b.name]];
      sums = sums === null ? g : tf.tidy(() => (sums as tf.Tensor[]).map((s, i) => tf.add(s, g[i])));
      count += 1;
      if ((iteration + 1) % 2 === 0 || iteration === data.length - 1) {
        const rate = schedule(schedulerSteps);
        (opt as unknown as { learningRate: number }).learningRate = rate;
        tf.tidy(() => {
          [truth.a, truth.b].forEach((v) => v.assign(tf.mul(v, 1 - rate * 0.01)));
          opt.applyGradients({ [truth.a.name]: tf.div((sums as tf.Tensor[])[0], count), [truth.b.name]: tf.div((sums as tf.Tensor[])[1], count) } as never);
        });
        schedulerSteps += 1;
        sums = null;
        count = 0;
      }
      acc.step(() => ours.loss(xs, ys));
      if (iteration === data.length - 1) acc.flush();
      assert.equal(acc.optimizer.iterations, opt.iterations, `the optimizers were not called as often at batch ${iteration}`);
      assert.equal(acc.updateStep, schedulerSteps, `the schedule did not advance as often at batch ${iteration}`);
      assert.ok(maxRelativeDifference(ours.weights(), truth.weights()) <= 1e-5, `batch ${iteration}: the weights differ`);
    });
    assert.equal(acc.pendingMicroBatches, 0);
    release(acc, opt, truth, ours, data);
  });
});
