import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maxPoolLoops } from '../../../src/backend/kernels/wasmPool';
import { checkCase } from '../fuzz/harness';
import { maxPool } from '../fuzz/pooling';
import { expectNoLeak, randomTensor, useBackend } from '../../helpers/kernelParity';

test('maxPoolLoops takes each window maximum, skips NaN and gives -Infinity to a window of padding', () => {
  // 1 x 2 x 3 x 1, window 2x2, stride 2, padding 1 on every side: 2 x 2 windows.
  const g = tf.backend_util.computePool2DInfo([1, 2, 3, 1], 2, 2, 1, 1);
  const y = new Float32Array(4);
  maxPoolLoops(new Float32Array([1, NaN, 3, 4, 5, -Infinity]), g, y);
  assert.deepEqual([...y], [1, 3, 4, 5]);
  // One pixel, window 2, stride 2, pad 1, ceil: 2 x 2 windows, three of them padding only.
  const ceil = tf.backend_util.computePool2DInfo([1, 1, 1, 1], 2, 2, 1, 1, 'ceil');
  const out = new Float32Array(ceil.outHeight * ceil.outWidth);
  maxPoolLoops(new Float32Array([2]), ceil, out);
  assert.deepEqual([...out], [2, -Infinity, -Infinity, -Infinity]);
});

test('wasm MaxPool with a rounded numeric pad, a pad as wide as the window, or empty tensors matches plain loops', async () => {
  // XNNPACK sized these differently from tfjs (wrong row length), refused the wide pad (output
  // left unwritten), or aborted the module on empty tensors.
  await checkCase(maxPool, { x: [1, 6, 7, 1], filterSize: [2, 2], strides: [2, 2], pad: 1, rounding: 'ceil', values: 'random', seed: 1 });
  await checkCase(maxPool, { x: [2, 4, 5, 3], filterSize: [1, 2], strides: [1, 2], pad: 2, rounding: undefined, values: 'ties', seed: 2 });
  await checkCase(maxPool, { x: [0, 4, 4, 2], filterSize: [2, 2], strides: [2, 2], pad: 'valid', rounding: undefined, values: 'random', seed: 3 });
  await checkCase(maxPool, { x: [3, 8, 2, 1], filterSize: [3, 4], strides: [2, 3], pad: 0, rounding: 'floor', values: 'random', seed: 4 });
});

test('wasm MaxPool leaves the common case to XNNPACK and leaks nothing on its own path', async () => {
  await useBackend('wasm', true);
  const x = randomTensor([2, 6, 7, 3], 1) as tf.Tensor4D;
  await expectNoLeak('wasm MaxPool', async () => {
    const ys = [tf.maxPool(x, 2, 2, 'valid'), tf.maxPool(x, 2, 2, 1, 'ceil')];
    await Promise.all(ys.map((y) => y.data()));
    tf.dispose(ys);
  });
  x.dispose();
});
