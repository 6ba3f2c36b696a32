import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clearWeightCache, derivedWeight, weightCacheSize } from '../../../src/backend/kernels/weightCache';
import { WasmBackend } from '../../../src/backend/kernels/wasmHeap';
import { memoryCounts, useBackend } from '../../helpers/kernelParity';

function derive(backend: WasmBackend, source: tf.Tensor, calls: { n: number }) {
  return derivedWeight(backend, { dataId: source.dataId, shape: source.shape, dtype: source.dtype }, 'test', () => {
    calls.n++;
    return backend.makeOutput(source.shape, 'float32');
  });
}

test('only trainable Variables are cached; other tensors are derived fresh and owned by the caller', async () => {
  await useBackend('wasm', true);
  const backend = tf.backend() as unknown as WasmBackend;
  const calls = { n: 0 };
  const plain = tf.ones([3]);
  const first = derive(backend, plain, calls);
  assert.equal(first.owned, true);
  backend.disposeData(first.info.dataId);
  const frozen = tf.variable(tf.ones([3]), false);
  const fromFrozen = derive(backend, frozen, calls);
  assert.equal(fromFrozen.owned, true, 'a non-trainable variable is not a weight');
  backend.disposeData(fromFrozen.info.dataId);
  const weight = tf.variable(tf.ones([3]));
  const a = derive(backend, weight, calls);
  const b = derive(backend, weight, calls);
  assert.equal(a.owned, false);
  assert.equal(b.info, a.info, 'the second lookup hits');
  assert.equal(calls.n, 3);
  tf.dispose([plain, frozen, weight]);
});

test('clearWeightCache frees every derived buffer', async () => {
  await useBackend('wasm', true);
  const backend = tf.backend() as unknown as WasmBackend;
  clearWeightCache();
  const before = memoryCounts();
  const init = tf.ones([5]);
  const weight = tf.variable(init);
  init.dispose(); // the variable alone owns its value
  derive(backend, weight, { n: 0 });
  assert.equal(weightCacheSize(), 1);
  assert.equal(memoryCounts().buffers, before.buffers + 2, 'the weight and its derived copy');
  clearWeightCache();
  assert.equal(weightCacheSize(), 0);
  weight.dispose();
  assert.deepEqual(memoryCounts(), before);
});
