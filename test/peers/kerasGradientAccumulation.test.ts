import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer, GradientAccumulator } from '../../src/index';

/**
 * Keras 3's optimizer tests of `gradient_accumulation_steps` and of the EMA it keeps beside it,
 * as scenarios of our own against our API. Each test names the upstream test it mirrors, in
 * keras/src/optimizers/optimizer_test.py at
 * https://github.com/keras-team/keras/blob/04d8e60eac7c33e219782eeb879930eb58a44752/keras/src/optimizers/optimizer_test.py
 *
 * Not ported: `test_overwrite_with_gradient_with_gradient_accumulation` (a per-variable flag of
 * Keras that tfjs variables do not have).
 *
 * Note: Keras's `iterations` counts every `apply_gradients` call; ours are `microStep` (every
 * call) and `updateStep` (applied updates). Keras writes the EMA into the model at the end of
 * `fit` and every `ema_overwrite_frequency` steps; here `finalizeAveragedWeights()` does it
 * when called.
 */

const close = (actual: ArrayLike<number>, expected: number[], what: string) => {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) assert.ok(Math.abs(actual[i] - expected[i]) <= 1e-5, `${what}: ${Array.from(actual)} against ${expected}`);
};

describe('Keras gradient_accumulation_steps (keras/src/optimizers/optimizer_test.py)', () => {
  // Mirrors OptimizerTest.test_gradient_accumulation: SGD at rate 1, 3 steps, gradients of ones;
  // the sums grow 1, 2, the third call applies their mean and the sums start over.
  it('test_gradient_accumulation', async () => {
    const v = tf.variable(tf.tensor([[1, 2], [3, 4]]));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 3, averaging: 'per-micro-batch', varList: [v] });
    const ones = tf.ones([2, 2]);
    const sums = async () => (await acc.getState()).accumulators[0].values;
    const expected: [number[], number[], number][] = [
      [[1, 2, 3, 4], [1, 1, 1, 1], 1],
      [[1, 2, 3, 4], [2, 2, 2, 2], 2],
      [[0, 1, 2, 3], [0, 0, 0, 0], 3],
      [[0, 1, 2, 3], [1, 1, 1, 1], 4],
    ];
    for (const [weights, accumulated, iterations] of expected) {
      acc.addGradients({ [v.name]: ones });
      close(v.dataSync(), weights, `weights at call ${iterations}`);
      close(await sums(), accumulated, `sums at call ${iterations}`);
      assert.equal(acc.microStep, iterations);
    }
    assert.equal(acc.updateStep, 1);
    acc.dispose();
    tf.dispose([v, ones]);
  });

  // Mirrors OptimizerTest.test_ema: SGD at rate 1, momentum 0.9; the average is initialized
  // after the first step, then mixes; at the third step Keras (ema_overwrite_frequency 3)
  // writes it into the variable, as finalizeAveragedWeights does here.
  it('test_ema', async () => {
    const v = tf.variable(tf.tensor([[3, 4], [5, 6]]));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, averaging: 'per-micro-batch', varList: [v], ema: { decay: 0.9 } });
    const ones = tf.ones([2, 2]);
    const average = () => acc.withAveragedWeights(() => Array.from(v.dataSync()));
    acc.addGradients({ [v.name]: ones });
    close(v.dataSync(), [2, 3, 4, 5], 'weights after step 1');
    close(await average(), [2, 3, 4, 5], 'average after step 1 (initialized after the first step)');
    acc.addGradients({ [v.name]: ones });
    close(v.dataSync(), [1, 2, 3, 4], 'weights after step 2');
    close(await average(), [1.9, 2.9, 3.9, 4.9], 'average after step 2');
    acc.addGradients({ [v.name]: ones });
    acc.finalizeAveragedWeights();
    close(v.dataSync(), [1.71, 2.71, 3.71, 4.71], 'weights overwritten with the average');
    close(await average(), [1.71, 2.71, 3.71, 4.71], 'average after step 3');
    acc.dispose();
    tf.dispose([v, ones]);
  });

  // Mirrors OptimizerTest.test_ema_with_model_fit: Dense(2) with ones and no bias, x = 1,
  // y = 0, SGD 0.1, momentum 0.9, two epochs of one batch; after fit both the average and the
  // (finalized) kernel are 0.891: w 1 → 0.9 → 0.81, average 0.9 then 0.9 · 0.9 + 0.1 · 0.81.
  it('test_ema_with_model_fit', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [1], useBias: false, kernelInitializer: 'ones' })] });
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 1, ema: { decay: 0.9 } });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const xs = tf.ones([1, 1]);
    const ys = tf.zeros([1, 2]);
    await model.fit(xs, ys, { batchSize: 1, epochs: 2, verbose: 0, callbacks: [optimizer.callback()] });
    const kernel = model.trainableWeights[0];
    close(await optimizer.accumulator.withAveragedWeights(() => kernel.read().dataSync()), [0.891, 0.891], 'the average');
    optimizer.accumulator.finalizeAveragedWeights();
    close(kernel.read().dataSync(), [0.891, 0.891], 'the finalized kernel');
    optimizer.dispose();
    tf.dispose([xs, ys]);
    model.dispose();
  });
});
