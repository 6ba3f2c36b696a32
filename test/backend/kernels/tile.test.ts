import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';
import { tileInto } from '../../../src/backend/kernels/tile';

const CASES: [number[], number[]][] = [
  [[3], [4]],
  [[1, 1, 1, 16], [16, 28, 28, 1]], // the broadcast of the stock BatchNorm gradient
  [[2, 3], [1, 1]],
  [[2, 3], [3, 2]],
  [[2, 1, 3], [2, 5, 1]],
  [[2, 3, 4, 5], [2, 1, 3, 2]],
  [[1, 2, 1, 2, 3], [2, 1, 2, 1, 2]],
  [[0, 3], [2, 2]],
];

test('Tile matches stock cpu for float32 across ranks and repetitions', async () => {
  for (const [i, [shape, reps]] of CASES.entries()) {
    await expectParity(`tile [${shape}] by [${reps}]`, () => tf.tile(randomTensor(shape, i), reps));
  }
});

test('Tile keeps int32 and bool values exact', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const ints = tf.tensor2d([[1, -2], [3, 4]], [2, 2], 'int32');
    const tiledInts = tf.tile(ints, [2, 3]);
    assert.equal(tiledInts.dtype, 'int32');
    assert.deepEqual(await tiledInts.array(), [
      [1, -2, 1, -2, 1, -2],
      [3, 4, 3, 4, 3, 4],
      [1, -2, 1, -2, 1, -2],
      [3, 4, 3, 4, 3, 4],
    ]);
    const bools = tf.tile(tf.tensor1d([true, false], 'bool'), [2]);
    assert.equal(bools.dtype, 'bool');
    assert.deepEqual(await bools.array(), [1, 0, 1, 0]);
    tf.dispose([ints, tiledInts, bools]);
  }
});

test('tileInto writes the numpy tile of a hand-checkable case', () => {
  // np.tile([[1, 2], [3, 4]], (2, 2)) = [[1,2,1,2],[3,4,3,4],[1,2,1,2],[3,4,3,4]]
  const out = new Float32Array(16);
  tileInto(new Float32Array([1, 2, 3, 4]), [2, 2], [2, 2], out);
  assert.deepEqual([...out], [1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4]);
});

test('Tile leaks no tensor and no backend buffer', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = randomTensor([1, 1, 1, 8], 1);
    await expectNoLeak('Tile', async () => {
      const t = tf.tile(x, [4, 3, 3, 1]);
      await t.data();
      t.dispose();
    });
    x.dispose();
  }
});
