import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, randomTensor, useBackend, values } from '../../helpers/kernelParity';
import { uninstallFastKernels } from '../../../src/backend/kernels';
import { checkCase } from '../fuzz/harness';
import { sumMeanGradients } from '../fuzz/reductions';

const CASES: [number[], number | number[], boolean][] = [
  [[8, 6, 6, 4], [0, 1, 2], false], // BatchNorm statistics
  [[8, 6, 6, 4], [0, 1, 2], true],
  [[5, 7], 1, false],
  [[5, 7, 3], [0, 2], true],
  [[5, 7, 3], [-1], false],
];

test('Sum and Mean gradients match stock cpu', async () => {
  for (const [i, [shape, axis, keepDims]] of CASES.entries()) {
    await expectParity(`sum/mean gradients of [${shape}] over ${JSON.stringify(axis)}`, () => {
      const x = randomTensor(shape, i);
      const upstream = (t: tf.Tensor) => tf.mul(t, randomTensor(t.shape, 10 + i));
      return [
        tf.grad((a: tf.Tensor) => tf.sum(upstream(tf.sum(a, axis, keepDims))))(x),
        tf.grad((a: tf.Tensor) => tf.sum(upstream(tf.mean(a, axis, keepDims))))(x),
      ];
    });
  }
});

test('the broadcast gradients are bit-identical to tfjs own on the same backend', async () => {
  const fn = () => {
    const x = randomTensor([6, 5, 5, 3], 1);
    // Upstream gradients that do not depend on the reduced values (our forward Sum and Mean add
    // in float64, so the reduced values themselves may differ in the last bit).
    return [
      tf.grad((a: tf.Tensor) => tf.sum(tf.mul(tf.mean(a, [0, 1, 2]), randomTensor([3], 2))))(x),
      tf.grad((a: tf.Tensor) => tf.sum(tf.mul(tf.sum(a, [0, 1]), randomTensor([5, 3], 3))))(x),
    ];
  };
  await useBackend('wasm', true);
  const ours = await values(fn);
  uninstallFastKernels();
  await useBackend('wasm', false);
  const stock = await values(fn);
  ours.forEach((o, i) => assert.deepEqual(o.data, stock[i].data));
});

test('Sum and Mean gradients leak no tensor', async () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = randomTensor([4, 3, 3, 2], 1);
    await expectNoLeak('Sum/Mean gradients', async () => {
      const g = tf.grad((a: tf.Tensor) => tf.add(tf.sum(tf.mean(a, [0, 1, 2])), tf.sum(tf.sum(a, 0))))(x);
      await g.data();
      g.dispose();
    });
    x.dispose();
  }
});

test('Sum and Mean gradients of zero-size inputs are zero-size, on every kernel set (issue 31)', async () => {
  // tf.broadcastTo reads a target axis of 0 as "no broadcast" and returned its [1, 3] input.
  for (const [x, axes] of [[[0, 3], [0]], [[3, 0], [1]], [[2, 0, 4], [0, 2]], [[0], null]] as [number[], number[] | null][]) {
    for (const keepDims of [false, true]) await checkCase(sumMeanGradients, { x, axes, keepDims, dtype: 'float32', seed: 1 });
  }
});
