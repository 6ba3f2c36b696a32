import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uninstallFastKernels } from '../../../src/backend/kernels';
import { nativeScratchSize } from '../../../src/backend/kernels/nativeConv2d';
import { CONV_CASES, ConvCase, convLoss, describeCase } from '../../helpers/convCases';
import { expectNoLeak, expectParity, nativeAvailable, randomTensor, useBackend } from '../../helpers/kernelParity';
import { countingNativeCalls } from '../../helpers/nativeSpy';

const skip = nativeAvailable() ? false : 'the native addon is not built here (npm run native:build says why)';

// The shared cases (strides, same/valid/explicit padding, non-square and 1x1 filters, batch 1,
// one channel), plus the ones only this lowering distinguishes: a pointwise convolution that
// reads the input as its patch matrix, and a 1x1 filter with a stride (which does not).
const CASES: ConvCase[] = [
  ...CONV_CASES,
  { x: [1, 5, 4, 3], filter: [1, 1, 3, 2], strides: 1, pad: 'same' },
  { x: [2, 7, 7, 3], filter: [1, 1, 3, 4], strides: 2, pad: 'valid' },
  { x: [1, 1, 1, 1], filter: [1, 1, 1, 1], strides: 1, pad: 'valid' },
];

/** Forward, filter gradient and input gradient of one case. */
function convAndGradients(c: ConvCase, seed: number): () => tf.Tensor[] {
  return () => {
    const x = randomTensor(c.x, seed) as tf.Tensor4D;
    const f = randomTensor(c.filter, seed + 1) as tf.Tensor4D;
    const loss = convLoss(c, (shape) => randomTensor(shape, seed + 2));
    const y = tf.conv2d(x, f, c.strides, c.pad, 'NHWC', 1, c.rounding);
    const [dx, df] = tf.grads((input: tf.Tensor, filter: tf.Tensor) => loss(input as tf.Tensor4D, filter as tf.Tensor4D))([x, f]);
    return [y, dx, df];
  };
}

test('native Conv2D and both of its gradients match stock cpu on every case (cpu: all in the addon)', { skip }, async () => {
  const calls = await countingNativeCalls(async () => {
    for (const [i, c] of CASES.entries()) await expectParity(`native-cpu conv, ${describeCase(c)}`, convAndGradients(c, 10 * i), ['native-cpu']);
  });
  // Per case: the forward pass twice (the loss runs its own) and the two gradients; the one case
  // whose padding is wider than the filter still runs natively (im2col reads the padding as zero).
  assert.equal(calls, CASES.length * 4, 'every product ran in the addon');
});

test('on wasm the native filter gradient takes every case with more than one input channel', { skip }, async () => {
  const calls = await countingNativeCalls(async () => {
    for (const [i, c] of CASES.entries()) await expectParity(`native conv, ${describeCase(c)}`, convAndGradients(c, 10 * i), ['native']);
  });
  assert.equal(calls, CASES.filter((c) => c.x[3] > 1).length, 'one filter gradient per case with ci > 1; the rest is XNNPACK');
});

test('native dilated forward convolution and fused convolution with bias and activation match stock cpu', { skip }, async () => {
  await expectParity('native dilated conv', () => tf.conv2d(randomTensor([2, 9, 9, 2], 1) as tf.Tensor4D, randomTensor([3, 3, 2, 3], 2) as tf.Tensor4D, 1, 'same', 'NHWC', 2), ['native', 'native-cpu']);
  for (const activation of ['linear', 'relu', 'prelu'] as const) {
    for (const [biasShape, sets] of [[[4], ['native', 'native-cpu']], [[2, 6, 6, 4], ['native-cpu']]] as [number[], ('native' | 'native-cpu')[]][]) {
      await expectParity(`native fused conv ${activation} bias [${biasShape}]`, () =>
        tf.fused.conv2d({
          x: randomTensor([2, 6, 6, 3], 1) as tf.Tensor4D,
          filter: randomTensor([3, 3, 3, 4], 2) as tf.Tensor4D,
          strides: 1,
          pad: 'same',
          bias: randomTensor(biasShape, 3),
          activation,
          preluActivationWeights: activation === 'prelu' ? randomTensor([4], 4) : undefined,
        }), sets);
    }
  }
});

test('the im2col buffer is one shared scratch: reused by every call, freed with the kernels', { skip }, async () => {
  await useBackend('native-cpu', true);
  const c = CONV_CASES[CONV_CASES.length - 1];
  const run = convAndGradients(c, 1);
  tf.dispose(tf.tidy(run));
  const size = nativeScratchSize();
  const [n, h, w, ci] = c.x;
  assert.equal(size, n * h * w * 9 * ci, 'the largest patch matrix of the case, no more');
  tf.dispose(tf.tidy(run));
  assert.equal(nativeScratchSize(), size, 'not grown by a second step');
  uninstallFastKernels('native-cpu');
  assert.equal(nativeScratchSize(), 0);
});

test('native convolutions leak no tensor and no backend buffer', { skip }, async () => {
  for (const set of ['native', 'native-cpu'] as const) {
    await useBackend(set, true);
    for (const c of [CONV_CASES[2], CONV_CASES[CONV_CASES.length - 1], CASES[CASES.length - 3]]) {
      await expectNoLeak(`native conv ${describeCase(c)}`, async () => {
        const out = tf.tidy(convAndGradients(c, 5));
        await out[2].data();
        tf.dispose(out);
      });
    }
  }
});

test('the im2col scratch adds nothing to a CNN window\'s peak tensor memory: the same ratio as on wasm', { skip }, async () => {
  const { measureAccumulation } = await import('../../../src/tutorial/measure');
  const { cnn } = await import('../../../src/tutorial/models');
  const ratios: Record<string, { ratio: number; window: number; step: number }> = {};
  for (const set of ['wasm', 'native'] as const) {
    await useBackend(set, true);
    const model = cnn({ normalization: 'batch', seed: 1 });
    const xs = randomTensor([16, 28, 28, 1], 7);
    const ys = tf.oneHot(tf.tensor1d(Array.from({ length: 16 }, (_, i) => i % 10), 'int32'), 10);
    const microBatches = [0, 4, 8, 12].map((s) => ({ xs: xs.slice(s, 4), ys: ys.slice(s, 4) }));
    const m = await measureAccumulation({ model, loss: tf.losses.softmaxCrossEntropy, microBatches, batch: { xs, ys }, timing: { seconds: 0.01, warmup: 1, warmupSeconds: 0 } });
    ratios[set] = { ratio: m.memoryRatio, window: m.peakBytes.window, step: m.peakBytes.step };
    tf.dispose([xs, ys, ...microBatches.flatMap((b) => [b.xs, b.ys])]);
    model.dispose();
  }
  assert.deepEqual(ratios.native, ratios.wasm);
});
