import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SOFTMAX_CROSS_ENTROPY_OP } from '../../../src/backend/kernels/softmaxCrossEntropyGrad';
import { fcParameters } from '../../helpers';
import { expectNoLeak, expectStockGradientBits, randomValues, useBackend, withStockGradient } from '../../helpers/kernelParity';

/**
 * The softmax cross-entropy gradient that skips the labels' gives tfjs's own bit for bit: on each
 * kernel set, every generated case runs with our gradient registered and with tfjs's (ours taken
 * out of the registry for the reference run).
 */

/** Values in [-4, 4), with ±Infinity, NaN, a large 80 or −0 at every fifth element when `specials`. */
function tensorOf(shape: number[], seed: number, specials: boolean): tf.Tensor {
  const pick = [Infinity, -Infinity, NaN, 80, -0];
  const v = randomValues(shape.reduce((x, y) => x * y, 1), seed).map((u, i) => (specials && i % 5 === 2 ? pick[Math.floor((u + 1) * 2.5) % pick.length] : 4 * u));
  return tf.tensor(v, shape);
}

const lossCase = fc.record({
  batch: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 2 }),
  // tf.oneHot needs a depth of 2 or more.
  classes: fc.integer({ min: 2, max: 12 }),
  labels: fc.constantFrom('one-hot', 'soft', 'int32'),
  specials: fc.boolean(),
  smoothing: fc.constantFrom(0, 0.1),
  weighted: fc.boolean(),
  reduction: fc.constantFrom(tf.Reduction.SUM_BY_NONZERO_WEIGHTS, tf.Reduction.MEAN, tf.Reduction.SUM, tf.Reduction.NONE),
  wantLabels: fc.boolean(),
  seed: fc.integer({ min: 1, max: 1e6 }),
});

test('softmax cross-entropy gradients are tfjs own, bit for bit, with and without the labels', async () => {
  await fc.assert(
    fc.asyncProperty(lossCase, async (c) => {
      const shape = [...c.batch, c.classes];
      const run = () => {
        const logits = tensorOf(shape, c.seed, c.specials);
        const raw = tensorOf(shape, c.seed + 1, false);
        const labels =
          c.labels === 'soft' ? tf.softmax(raw) : c.labels === 'int32' ? tf.cast(tf.oneHot(tf.argMax(raw, -1), c.classes), 'int32').reshape(shape) : tf.oneHot(tf.argMax(raw, -1), c.classes).reshape(shape).toFloat();
        const weights = c.weighted ? tf.abs(tensorOf(c.batch, c.seed + 2, false)) : undefined;
        // tfjs smooths labels of rank 2 only (it reads the class count from the second axis).
        const smoothing = shape.length === 2 ? c.smoothing : 0;
        const loss = (l: tf.Tensor, x: tf.Tensor) => tf.sum(tf.losses.softmaxCrossEntropy(l, x, weights, smoothing, c.reduction));
        // int32 labels are not differentiable: only the logits' gradient is asked for then.
        return c.wantLabels && c.labels !== 'int32' ? tf.grads(loss)([labels, logits]) : [tf.grad((x: tf.Tensor) => loss(labels, x))(logits)];
      };
      await expectStockGradientBits(SOFTMAX_CROSS_ENTROPY_OP, `softmax cross-entropy [${shape}] ${JSON.stringify(c)}`, run);
    }),
    fcParameters(40),
  );
});

test('a classifier step computes the labels gradient no more', async () => {
  await useBackend('wasm', true);
  const logits = tensorOf([16, 10], 1, false);
  const labels = tf.oneHot(tf.tensor1d([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6], 'int32'), 10).toFloat();
  const exps = async () => (await tf.profile(() => tf.dispose(tf.grad((x: tf.Tensor) => tf.losses.softmaxCrossEntropy(labels, x))(logits)))).kernels.filter((k) => k.name === 'Exp').length;
  // The forward pass's logSumExp takes one Exp; tfjs's gradient one for each input.
  assert.equal(await withStockGradient(SOFTMAX_CROSS_ENTROPY_OP, exps), 3);
  assert.equal(await exps(), 2);
  await expectNoLeak('softmax cross-entropy gradient', () => tf.dispose(tf.grads((l: tf.Tensor, x: tf.Tensor) => tf.losses.softmaxCrossEntropy(l, x))([labels, logits])));
  tf.dispose([logits, labels]);
});
