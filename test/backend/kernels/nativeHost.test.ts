import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostOf } from '../../../src/backend/kernels/nativeHost';

// The hosts give the addon the backend's own memory: writing through a view is writing the tensor.
for (const name of ['cpu', 'wasm'] as const) {
  test(`the ${name} host's views are the tensors' own memory, and its outputs are real tensors`, async () => {
    assert.ok(await tf.setBackend(name));
    const backend = tf.backend();
    const host = hostOf(name, backend);
    assert.equal(host.name, name);
    const x = tf.tensor([1, 2, 3, 4], [2, 2]);
    host.values(x)[0] = 10;
    assert.deepEqual(Array.from(await x.data()), [10, 2, 3, 4], 'a write through the view changes the tensor');
    const info = host.output([3]);
    host.values(info).set([7, 8, 9]);
    const t = tf.engine().makeTensorFromTensorInfo(info);
    assert.deepEqual(Array.from(await t.data()), [7, 8, 9]);
    tf.dispose([x, t]);
  });
}

test('a backend keeps one host, which still reads its tensors after the wasm heap grows', async () => {
  assert.ok(await tf.setBackend('wasm'));
  const backend = tf.backend();
  const host = hostOf('wasm', backend);
  assert.equal(hostOf('wasm', backend), host, 'made once per backend');
  const x = tf.tensor([1, 2, 3]);
  const before = host.values(x).buffer.byteLength;
  // 64 MiB more than the heap had: it must grow, which detaches every view taken before.
  const big = tf.zeros([before / 4 + 16 * 1024 * 1024]);
  const after = host.values(x);
  assert.ok(after.buffer.byteLength > before, 'the heap grew');
  assert.deepEqual(Array.from(after), [1, 2, 3]);
  tf.dispose([x, big]);
});
