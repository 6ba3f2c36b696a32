import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONV_CASES, convLoss, describeCase } from '../../helpers/convCases';
import { dirtyWasmHeap, expectNoLeak, expectParity, PARITY_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';
import { installedFastKernels } from '../../../src/backend/kernels';

// The reference is tfjs's own cpu kernel (TensorBuffer loops, float64 sums); tfjs's conv
// gradient rejects dilations > 1, so the kernel never sees them.

test('Conv2DBackpropFilter matches stock cpu across strides, paddings, shapes and batch sizes', async () => {
  for (const [i, c] of CONV_CASES.entries()) {
    await expectParity(`filter gradient, ${describeCase(c)}`, () => {
      const x = randomTensor(c.x, 10 + i) as tf.Tensor4D;
      const f = randomTensor(c.filter, 20 + i) as tf.Tensor4D;
      const loss = convLoss(c, (shape) => randomTensor(shape, 30 + i));
      return tf.grad((filter: tf.Tensor) => loss(x, filter as tf.Tensor4D))(f);
    });
  }
});

test('Conv2DBackpropFilter is the project kernel on both backends', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    assert.ok(installedFastKernels(backend).some((k) => k.kernel === 'Conv2DBackpropFilter'));
  }
});

test('Conv2DBackpropFilter leaks no tensor and no backend buffer', async () => {
  const c = CONV_CASES[3];
  for (const backend of PARITY_BACKENDS) {
    await useBackend(backend, true);
    const x = randomTensor(c.x, 1) as tf.Tensor4D;
    const f = randomTensor(c.filter, 2) as tf.Tensor4D;
    const loss = convLoss(c, (shape) => tf.onesLike(tf.zeros(shape)));
    await expectNoLeak('Conv2DBackpropFilter', async () => {
      const g = tf.grad((filter: tf.Tensor) => loss(x, filter as tf.Tensor4D))(f);
      await g.data();
      g.dispose();
    });
    tf.dispose([x, f]);
  }
});

test('the wasm filter gradient of an empty batch is zeros, not a freed tensor left on the heap (issue 31)', async () => {
  await dirtyWasmHeap('wasm');
  const dW = tf.tidy(() =>
    tf.engine().runKernel('Conv2DBackpropFilter', { x: tf.zeros([0, 5, 5, 3]), dy: tf.zeros([0, 5, 5, 4]) }, { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] }) as tf.Tensor,
  );
  assert.deepEqual(dW.shape, [3, 3, 3, 4]);
  assert.deepEqual([...(await dW.data())], new Array(108).fill(0));
  dW.dispose();
  // And through tf.grad, on every kernel set.
  await expectParity('filter gradient of a conv over an empty batch', () =>
    tf.grad((f: tf.Tensor) => tf.sum(tf.conv2d(tf.zeros([0, 5, 5, 3]) as tf.Tensor4D, f as tf.Tensor4D, 1, 'same')))(randomTensor([3, 3, 3, 4], 3)),
  );
});
