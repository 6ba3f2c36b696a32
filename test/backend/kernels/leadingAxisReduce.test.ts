import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirtyWasmHeap, expectNoLeak, expectParity, PARITY_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';
import { checkCase } from '../fuzz/harness';
import { sumMean } from '../fuzz/reductions';
import { columnSums } from '../../../src/backend/kernels/leadingAxisReduce';

const CASES: [number[], number | number[], boolean][] = [
  [[16, 28, 28, 16], [0, 1, 2], false], // per-channel statistics of a CNN activation
  [[16, 28, 28, 16], [0, 1, 2], true],
  [[64, 256], 0, false], // a dense bias gradient
  [[5, 7, 3], [-3, -2], true], // negative axes
  [[5, 7, 3], [1, 0], false], // unsorted axes
  [[5, 7, 3], [1, 2], false], // trailing axes: the stock kernel
  [[5, 7, 3], [0, 2], false], // not a leading block: the stock kernel
  [[5, 7, 3], [0, 1, 2], false], // everything: the stock kernel
];

test('Sum and Mean over leading axes match stock cpu', async () => {
  for (const [i, [shape, axis, keepDims]] of CASES.entries()) {
    await expectParity(`sum/mean of [${shape}] over ${JSON.stringify(axis)} keepDims ${keepDims}`, () => {
      const x = randomTensor(shape, i);
      return [tf.sum(x, axis, keepDims), tf.mean(x, axis, keepDims)];
    });
  }
});

test('integer sums keep their dtype and exact values', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = tf.tensor2d([[1, 2], [3, 4], [5, 6]], [3, 2], 'int32');
    const s = tf.sum(x, 0);
    assert.equal(s.dtype, 'int32');
    assert.deepEqual(await s.array(), [9, 12]);
    tf.dispose([x, s]);
  }
});

test('columnSums adds the columns of a hand-checkable matrix', () => {
  // [[1, 2], [3, 4], [5, 6]] has column sums [9, 12]; 5 rows exercise the 4-way unrolled loop's tail.
  assert.deepEqual([...columnSums(new Float32Array([1, 2, 3, 4, 5, 6]), 3, 2)], [9, 12]);
  assert.deepEqual([...columnSums(new Float32Array([1, 1, 1, 1, 1, 2, 2, 2, 2, 2]), 5, 2)], [7, 8]);
});

test('leading-axis Sum and Mean leak no tensor and no backend buffer', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = randomTensor([4, 5, 5, 3], 1);
    await expectNoLeak('Sum/Mean', async () => {
      const out = tf.tidy(() => tf.add(tf.sum(x, [0, 1, 2]), tf.mean(x, [0, 1, 2], true).reshape([3])));
      await out.data();
      out.dispose();
    });
    x.dispose();
  }
});

test('Sum and Mean over an empty axis are zeros on wasm (stock wasm left the output unwritten; issue 31)', async () => {
  for (const set of ['wasm', 'native'] as const) {
    if (!PARITY_BACKENDS.includes(set)) continue;
    await dirtyWasmHeap(set);
    const [s, m] = tf.tidy(() => [tf.sum(tf.zeros([0, 3]), 0), tf.mean(tf.zeros([0, 5, 3]), [0, 1])]);
    assert.deepEqual([...(await s.data())], [0, 0, 0], `sum on ${set}`);
    assert.deepEqual([...(await m.data())], [0, 0, 0], `mean on ${set} (stock cpu's mean of nothing is 0 too)`);
    tf.dispose([s, m]);
  }
  for (const [x, axes] of [[[0, 3], [0]], [[4, 0, 2], [1]], [[0, 2], [1]], [[3, 0], null]] as [number[], number[] | null][]) {
    for (const dtype of ['float32', 'int32'] as const) await checkCase(sumMean, { x, axes, keepDims: false, dtype, seed: 1 });
  }
});
