import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadNativeBlas, NativeAddon } from '../../../src/backend/kernels/nativeBlas';
import { expectNoLeak, expectParity, nativeAvailable, randomTensor, useBackend } from '../../helpers/kernelParity';
import { countingNativeCalls } from '../../helpers/nativeSpy';

const skip = nativeAvailable() ? false : 'the native addon is not built here (npm run native:build says why)';
const SETS = ['native', 'native-cpu'] as const;

test('native per-channel Sum and Mean over leading axes match stock cpu; other axes go to the backend\'s kernels', { skip }, async () => {
  const cases: [number[], number[], boolean][] = [
    [[4, 5, 6, 3], [0, 1, 2], true],
    [[4, 5, 6, 3], [0, 1, 2], false],
    [[7, 9], [0], false],
    [[1, 1, 1, 5], [0, 1, 2], true], // batch 1, one pixel
    [[3, 4, 2, 1], [0, 1, 2], false], // one channel
  ];
  const calls = await countingNativeCalls(async () => {
    for (const [i, [shape, axes, keepDims]] of cases.entries()) {
      await expectParity(`sum/mean [${shape}] over [${axes}]`, () => [tf.sum(randomTensor(shape, i), axes, keepDims), tf.mean(randomTensor(shape, i + 9), axes, keepDims)], SETS);
    }
    // Not a leading block of axes: the project's or the stock kernel.
    await expectParity('sum over the channels', () => [tf.sum(randomTensor([4, 5, 3], 1), -1), tf.mean(randomTensor([4, 5, 3], 2), [0, 2])], SETS);
  }, ['channelSums']);
  assert.equal(calls, cases.length * 2 * SETS.length, 'one native reduction per leading-axes Sum and Mean, none for the others');
});

test('native per-channel broadcasts of Add, Sub, Multiply and RealDiv match stock cpu in either operand order', { skip }, async () => {
  const ops = [tf.add, tf.sub, tf.mul, tf.div] as const;
  const shapes: [number[], number[]][] = [
    [[2, 5, 4, 3], [1, 1, 1, 3]],
    [[2, 5, 4, 3], [3]],
    [[6, 8], [1, 8]],
    [[1, 1, 1, 4], [4]], // as many rows as one: nothing to broadcast, the backend's kernel
  ];
  const calls = await countingNativeCalls(async () => {
    for (const [i, [full, channel]] of shapes.entries()) {
      // Divisors kept away from zero, so that the relative comparison is meaningful.
      const divisor = () => tf.add(tf.abs(randomTensor(channel, i + 1)), 0.5);
      await expectParity(`binary [${full}] with [${channel}]`, () => ops.flatMap((op) => [op(randomTensor(full, i), op === tf.div ? divisor() : randomTensor(channel, i + 1)), op(randomTensor(channel, i + 2), op === tf.div ? tf.add(tf.abs(randomTensor(full, i + 3)), 0.5) : randomTensor(full, i + 3))]), SETS);
    }
    // Same shapes, scalars and other broadcasts: the backend's kernels.
    await expectParity('other broadcasts', () => [tf.sub(randomTensor([3, 4, 2], 1), randomTensor([3, 4, 2], 2)), tf.mul(randomTensor([3, 4, 2], 3), tf.scalar(2)), tf.add(randomTensor([3, 4, 2], 4), randomTensor([3, 1, 2], 5)), tf.sub(randomTensor([3, 4, 1], 6), randomTensor([3, 4, 5], 7))], SETS);
  }, ['channelBinary']);
  // Every op in both orders for the three broadcasting shapes, on both backends.
  assert.equal(calls, 3 * ops.length * 2 * SETS.length);
});

test('integer tensors go to the backend\'s kernels', { skip }, async () => {
  const calls = await countingNativeCalls(async () => {
    await expectParity('int32', () => [tf.sum(tf.ones([4, 3], 'int32'), 0), tf.add(tf.ones([4, 3], 'int32'), tf.ones([3], 'int32'))], SETS);
  }, ['channelSums', 'channelBinary']);
  assert.equal(calls, 0);
});

test('the addon\'s channel functions check every argument before touching memory', { skip }, () => {
  const addon = (loadNativeBlas() as { addon: NativeAddon }).addon;
  const x = new Float32Array(12);
  const c = new Float32Array(3);
  addon.channelSums(x, 4, 3, c, 1);
  addon.channelBinary(1, x, 4, 3, c, new Float32Array(12), false);
  assert.throws(() => addon.channelSums(x, 5, 3, c, 1), /native channelSums: x is shorter than its rows x cols/);
  assert.throws(() => addon.channelSums(x, 4, 3, c.subarray(1), 1), /native channelSums: out is shorter/);
  assert.throws(() => addon.channelBinary(4, x, 4, 3, c, x, false), /native channelBinary: op must be 0 \(add\), 1 \(subtract\), 2 \(multiply\) or 3 \(divide\)/);
  assert.throws(() => addon.channelBinary(0, x, 4, 3, c.subarray(1), x, false), /native channelBinary: perChannel is shorter/);
  assert.throws(() => addon.channelBinary(0, x, 4, 3, c, x.subarray(1), false), /native channelBinary: out is shorter/);
  assert.throws(() => (addon.channelBinary as (...args: unknown[]) => void)(0, x, 4, 3, c, x), /native channelBinary: expected 7 arguments/);
});

test('native per-channel kernels leak no tensor and no backend buffer', { skip }, async () => {
  for (const set of SETS) {
    await useBackend(set, true);
    await expectNoLeak(`native channels on ${set}`, async () => {
      const out = tf.tidy(() => {
        const x = randomTensor([2, 3, 3, 4], 1);
        const m = tf.mean(x, [0, 1, 2], true);
        return tf.sum(tf.mul(tf.sub(x, m), tf.div(tf.scalar(1), tf.add(m, 2))), [0, 1, 2]);
      });
      await out.data();
      out.dispose();
    });
  }
});
