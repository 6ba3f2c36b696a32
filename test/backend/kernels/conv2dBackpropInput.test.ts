import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONV_CASES, convLoss, describeCase } from '../../helpers/convCases';
import { expectNoLeak, expectParity, PARITY_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';
import { weightCacheSize } from '../../../src/backend/kernels';
import { convWeightGradients } from '../fuzz/convolutions';
import { checkCase } from '../fuzz/harness';

test('Conv2DBackpropInput matches stock cpu across strides, paddings, shapes and batch sizes', async () => {
  for (const [i, c] of CONV_CASES.entries()) {
    await expectParity(`input gradient, ${describeCase(c)}`, () => {
      const x = randomTensor(c.x, 40 + i) as tf.Tensor4D;
      const f = randomTensor(c.filter, 50 + i) as tf.Tensor4D;
      const loss = convLoss(c, (shape) => randomTensor(shape, 60 + i));
      return tf.grad((input: tf.Tensor) => loss(input as tf.Tensor4D, f))(x);
    });
  }
});

test('Conv2DBackpropInput with a Variable filter caches the flipped filter until the filter changes', async () => {
  await useBackend('wasm', true);
  const c = CONV_CASES[0];
  const x = randomTensor(c.x, 1) as tf.Tensor4D;
  const init = randomTensor(c.filter, 2);
  const f = tf.variable(init);
  init.dispose(); // so that the variable alone owns its first value
  const grad = () => tf.tidy(() => tf.grad((input: tf.Tensor) => tf.sum(tf.conv2d(input as tf.Tensor4D, f as tf.Tensor4D, 1, 'same')))(x));
  const first = await grad().data();
  assert.equal(weightCacheSize(), 1);
  const again = await grad().data();
  assert.deepEqual(again, first, 'a cached flipped filter gives the same gradient');
  // A new value for the filter must not reuse the stale flipped copy.
  tf.tidy(() => f.assign(tf.mul(f, 2)));
  const doubled = await grad().data();
  doubled.forEach((v, k) => assert.ok(Math.abs(v - 2 * first[k]) <= 1e-5 * Math.abs(2 * first[k]) + 1e-6));
  assert.equal(weightCacheSize(), 1, 'the stale entry is freed');
  f.dispose();
  assert.equal(weightCacheSize(), 0, 'disposing the weight frees its derived copy');
  x.dispose();
});

test('Conv2DBackpropInput leaks no tensor and no backend buffer', async () => {
  for (const c of [CONV_CASES[0], CONV_CASES[2]]) {
    for (const backend of PARITY_BACKENDS) {
      await useBackend(backend, true);
      const x = randomTensor(c.x, 1) as tf.Tensor4D;
      const f = tf.variable(randomTensor(c.filter, 2)) as unknown as tf.Tensor4D;
      await expectNoLeak(`Conv2DBackpropInput ${describeCase(c)}`, async () => {
        const g = tf.grad((input: tf.Tensor) => tf.sum(tf.conv2d(input as tf.Tensor4D, f, c.strides, c.pad)))(x);
        await g.data();
        g.dispose();
      });
      tf.dispose([x, f]);
    }
  }
});

test('a cached flipped filter is never reused for another shape of the same variable (issue 31)', async () => {
  // The variable [3, 3, 2, 4] seen (reshaped, same data) as [3, 3, 4, 2]: the copy flipped for the
  // first shape has the other layout; the cache is keyed by shape too.
  await checkCase(convWeightGradients, { x: [1, 5, 5, 2], filter: [3, 3, 2, 4], view: [3, 3, 4, 2], strides: 1, pad: 'same', seed: 1 });
  await checkCase(convWeightGradients, { x: [2, 6, 5, 4], filter: [2, 2, 4, 3], view: [2, 2, 6, 2], strides: 2, pad: 'valid', seed: 2 });
});
