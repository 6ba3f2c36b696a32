import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SOFTMAX_CROSS_ENTROPY_OP } from '../../../src/backend/kernels/softmaxCrossEntropyGrad';
import { fcParameters } from '../../helpers';
import { expectNoLeak, expectStockGradientBits, randomTensor, useBackend, withStockGradient } from '../../helpers/kernelParity';
import { softmaxCrossEntropyGradient } from '../fuzz/losses';

/**
 * The softmax cross-entropy gradient that skips the labels' gives tfjs's own bit for bit: on each
 * kernel set, every case of the kernel fuzz's family runs with our gradient registered and with
 * tfjs's (ours taken out of the registry for the reference run).
 */

test('softmax cross-entropy gradients are tfjs own, bit for bit, with and without the labels', async () => {
  const family = softmaxCrossEntropyGradient;
  await fc.assert(
    fc.asyncProperty(family.cases, async (c) => expectStockGradientBits(SOFTMAX_CROSS_ENTROPY_OP, `${family.name}: ${family.describe(c)}`, () => family.run(c))),
    fcParameters(40),
  );
});

test('a classifier step computes the labels gradient no more', async () => {
  await useBackend('wasm', true);
  const logits = randomTensor([16, 10], 1);
  const labels = tf.oneHot(tf.tensor1d([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6], 'int32'), 10).toFloat();
  const exps = async () => (await tf.profile(() => tf.dispose(tf.grad((x: tf.Tensor) => tf.losses.softmaxCrossEntropy(labels, x))(logits)))).kernels.filter((k) => k.name === 'Exp').length;
  // The forward pass's logSumExp takes one Exp; tfjs's gradient one for each input.
  assert.equal(await withStockGradient(SOFTMAX_CROSS_ENTROPY_OP, exps), 3);
  assert.equal(await exps(), 2);
  await expectNoLeak('softmax cross-entropy gradient', () => tf.dispose(tf.grads((l: tf.Tensor, x: tf.Tensor) => tf.losses.softmaxCrossEntropy(l, x))([labels, logits])));
  tf.dispose([logits, labels]);
});
