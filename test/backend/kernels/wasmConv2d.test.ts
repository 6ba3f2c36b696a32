import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { installedFastKernels } from '../../../src/backend/kernels';
import { conv2d, depthwiseConv2d, fusedConv2d, fusedDepthwiseConv2d } from '../fuzz/convolutions';
import { checkCase } from '../fuzz/harness';
import { expectNoLeak, randomTensor, useBackend } from '../../helpers/kernelParity';

const geometry = { strides: [1, 1] as [number, number], dilations: [1, 1] as [number, number], rounding: undefined, seed: 1 };

test('a numeric pad with ceil or round rounding: XNNPACK is given explicit padding of tfjs size (issue 31)', async () => {
  // x 5, filter 2, stride 2, pad 1: tfjs rounds 3.5 up to 4 rows, XNNPACK made 3 and wrote them with the wrong row length.
  await checkCase(conv2d, { ...geometry, x: [1, 5, 5, 2], filter: [2, 2, 2, 3], strides: [2, 2], pad: 1, rounding: 'ceil' });
  await checkCase(conv2d, { ...geometry, x: [2, 7, 6, 3], filter: [3, 2, 3, 2], strides: [2, 3], pad: 2, rounding: 'round' });
  await checkCase(depthwiseConv2d, { ...geometry, x: [1, 5, 5, 2], filter: [2, 2, 2, 2], strides: [2, 2], pad: 1, rounding: 'ceil' });
  // tfjs sizes both axes of a numeric pad with the filter height: a 2x1 dilated filter gives 1 column, XNNPACK 3.
  await checkCase(conv2d, { ...geometry, x: [1, 1, 1, 1], filter: [2, 1, 1, 1], dilations: [2, 1], pad: 1 });
  await checkCase(fusedConv2d, { ...geometry, x: [1, 1, 1, 1], filter: [2, 1, 1, 1], dilations: [2, 1], pad: 1, bias: false, activation: 'linear' });
});

test("'same' padding of an image narrower than the filter is tfjs's split, passed explicitly", async () => {
  // XNNPACK's own TensorFlow-SAME split gave 0 here.
  await checkCase(conv2d, { ...geometry, x: [1, 1, 2, 1], filter: [2, 1, 1, 1], strides: [1, 2], pad: 'same' });
  await checkCase(fusedConv2d, { ...geometry, x: [1, 3, 3, 2], filter: [1, 4, 2, 3], strides: [3, 3], pad: 'same', bias: true, activation: 'relu' });
});

test('empty batches, images and channels return without XNNPACK, which aborted the module on them', async () => {
  for (const x of [[0, 5, 5, 2], [1, 0, 5, 2], [1, 5, 5, 0]] as [number, number, number, number][]) {
    await checkCase(conv2d, { ...geometry, x, filter: [3, 3, x[3], 2], pad: 'same' });
    await checkCase(depthwiseConv2d, { ...geometry, x, filter: [3, 3, x[3], 2], pad: 'same' });
  }
  // An image of nothing but padding: zeros, plus the bias and activation of a fused one.
  await checkCase(conv2d, { ...geometry, x: [1, 0, 0, 3], filter: [3, 2, 3, 1], pad: [[0, 0], [1, 2], [1, 1], [0, 0]] });
  await checkCase(fusedConv2d, { ...geometry, x: [1, 2, 2, 0], filter: [1, 1, 0, 3], pad: 'valid', bias: true, activation: 'sigmoid' });
  // The module still works afterwards.
  await useBackend('wasm', true);
  const y = tf.tidy(() => tf.conv2d(randomTensor([1, 4, 4, 2], 1) as tf.Tensor4D, randomTensor([3, 3, 2, 2], 2) as tf.Tensor4D, 1, 'same'));
  assert.equal((await y.data()).length, 32);
  y.dispose();
});

test('fused activations other than a clamp run as the convolution, then the bias and activation kernels', async () => {
  const c = { ...geometry, x: [2, 6, 5, 3] as [number, number, number, number], filter: [3, 2, 3, 4] as [number, number, number, number], pad: 'valid' as const, bias: true };
  for (const activation of ['elu', 'sigmoid', 'leakyrelu', 'prelu'] as const) {
    await checkCase(fusedConv2d, { ...c, activation });
    await checkCase(fusedDepthwiseConv2d, { ...c, filter: [3, 2, 3, 2], activation });
  }
});

test('the wasm convolutions are the project patches, and the fallbacks leak nothing', async () => {
  await useBackend('wasm', true);
  const names = installedFastKernels('wasm').map((k) => k.kernel);
  for (const k of ['Conv2D', 'DepthwiseConv2dNative', 'FusedConv2D', 'FusedDepthwiseConv2D']) assert.ok(names.includes(k), k);
  const x = randomTensor([1, 5, 5, 2], 1) as tf.Tensor4D;
  const f = randomTensor([2, 2, 2, 3], 2) as tf.Tensor4D;
  await expectNoLeak('wasm conv2d with a rounded numeric pad and a fused elu', async () => {
    const ys = tf.tidy(() => [tf.conv2d(x, f, 2, 1, 'NHWC', 1, 'ceil'), tf.conv2d(x, f, 1, 1, 'NHWC', [2, 1]), tf.fused.conv2d({ x, filter: f, strides: 1, pad: 'same', activation: 'elu', bias: tf.ones([3]) })]);
    await Promise.all(ys.map((y) => y.data()));
    tf.dispose(ys);
  });
  tf.dispose([x, f]);
});
