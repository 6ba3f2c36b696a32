import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, memoryCounts, useBackend } from '../../helpers/kernelParity';

test('a clone on wasm shares the data, and outlives its source', async () => {
  await useBackend('wasm', true);
  const before = memoryCounts();
  const x = tf.tensor1d([1, 2, 3]);
  const y = tf.clone(x);
  assert.equal(memoryCounts().buffers, before.buffers + 1, 'one buffer for the tensor and its clone');
  x.dispose();
  assert.deepEqual(await y.data(), new Float32Array([1, 2, 3]));
  y.dispose();
  assert.deepEqual(memoryCounts(), before);
});

test('a clone of a Variable keeps its value when the Variable is assigned', async () => {
  await useBackend('wasm', true);
  const v = tf.variable(tf.tensor1d([1, 2]));
  const snapshot = tf.clone(v);
  tf.tidy(() => v.assign(tf.tensor1d([5, 6])));
  assert.deepEqual(await snapshot.data(), new Float32Array([1, 2]));
  assert.deepEqual(await v.data(), new Float32Array([5, 6]));
  tf.dispose([v, snapshot]);
});

test('Identity leaks no tensor and no backend buffer', async () => {
  await useBackend('wasm', true);
  const x = tf.ones([3, 3]);
  await expectNoLeak('Identity', async () => {
    const y = tf.clone(x);
    await y.data();
    y.dispose();
  });
  x.dispose();
});

test('a cast to the same dtype shares the data on wasm; other casts convert', async () => {
  await useBackend('wasm', true);
  const before = memoryCounts();
  const x = tf.tensor1d([1.5, -2.5]);
  const same = tf.cast(x, 'float32');
  assert.equal(memoryCounts().buffers, before.buffers + 1, 'no copy');
  const ints = tf.cast(x, 'int32');
  assert.equal(ints.dtype, 'int32');
  assert.deepEqual(await ints.data(), new Int32Array([1, -2]));
  x.dispose();
  assert.deepEqual(await same.data(), new Float32Array([1.5, -2.5]));
  tf.dispose([same, ints]);
  assert.deepEqual(memoryCounts(), before);
});
