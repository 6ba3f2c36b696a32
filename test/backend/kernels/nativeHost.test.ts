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
