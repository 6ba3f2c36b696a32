import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uninstallFastKernels } from '../../../src/backend/kernels';
import fc from 'fast-check';
import { col2im, im2col } from '../../../src/backend/kernels/im2col';
import { loadNativeBlas, NativeAddon } from '../../../src/backend/kernels/nativeBlas';
import { geometryArray, NATIVE_PATCH_BLOCK_FLOATS, nativeConv2dPatches, nativePatchBlocks, nativeScratchSize } from '../../../src/backend/kernels/nativeConv2d';
import { KernelPatch } from '../../../src/backend/kernels/registry';
import { CONV_CASES, ConvCase, convLoss, describeCase } from '../../helpers/convCases';
import { expectNoLeak, expectParity, nativeAvailable, randomTensor, randomValues, relativeError, TOLERANCE, useBackend } from '../../helpers/kernelParity';
import { countingNativeCalls } from '../../helpers/nativeSpy';
import { fusedConv2d } from '../fuzz/convolutions';
import { checkCase } from '../fuzz/harness';

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

/**
 * The products a case makes when all four of its kernels run in the addon: the forward pass
 * twice (the loss runs its own) and the two gradients, each one product per block of patch rows.
 */
function nativeProducts(c: ConvCase): number {
  const g = tf.backend_util.computeConv2DInfo(c.x, c.filter, c.strides, 1, c.pad, c.rounding);
  return 4 * nativePatchBlocks(g);
}

for (const set of ['native-cpu', 'native'] as const) {
  test(`${set}: Conv2D and both of its gradients match stock cpu on every case, all in the addon`, { skip }, async () => {
    const calls = await countingNativeCalls(async () => {
      for (const [i, c] of CASES.entries()) await expectParity(`${set} conv, ${describeCase(c)}`, convAndGradients(c, 10 * i), [set]);
    });
    // Every case runs natively on both backends, the one whose padding is wider than the filter
    // too (im2col reads the padding as zero), and the digit CNN's, whose patch matrices span
    // several blocks.
    assert.equal(calls, CASES.reduce((sum, c) => sum + nativeProducts(c), 0), 'every product ran in the addon');
    assert.ok(CASES.some((c) => nativeProducts(c) > 4), 'some case is cut into several blocks');
  });
}

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
  const depth = 9 * ci;
  assert.equal(size, Math.min(n * h * w, Math.floor(NATIVE_PATCH_BLOCK_FLOATS / depth)) * depth, 'one block of patch rows of the case, no more');
  assert.ok(size < n * h * w * depth, 'less than the whole patch matrix');
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

/** The addon of this machine (only called when it is built). */
const addonHere = () => (loadNativeBlas() as { addon: NativeAddon }).addon;

test('the addon\'s im2col and col2im equal the JS ones (src/backend/kernels/im2col.ts) on any geometry and row range', { skip }, () => {
  fc.assert(
    fc.property(
      fc.record({
        n: fc.integer({ min: 1, max: 3 }), h: fc.integer({ min: 1, max: 8 }), w: fc.integer({ min: 1, max: 8 }), ci: fc.integer({ min: 1, max: 4 }),
        kh: fc.integer({ min: 1, max: 4 }), kw: fc.integer({ min: 1, max: 4 }), sh: fc.integer({ min: 1, max: 3 }), sw: fc.integer({ min: 1, max: 3 }),
        dilation: fc.integer({ min: 1, max: 2 }), pad: fc.constantFrom('same', 'valid', 1, 2), seed: fc.nat(1000), cut: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      (r) => {
        // tfjs takes strides or dilations above 1, not both.
        const dilation = r.sh > 1 || r.sw > 1 ? 1 : r.dilation;
        if ((r.kh - 1) * dilation + 1 > r.h + 4 || (r.kw - 1) * dilation + 1 > r.w + 4) return;
        const g = tf.backend_util.computeConv2DInfo([r.n, r.h, r.w, r.ci], [r.kh, r.kw, r.ci, 1], [r.sh, r.sw], dilation, r.pad as 'same');
        const rows = g.batchSize * g.outHeight * g.outWidth;
        if (g.outHeight <= 0 || g.outWidth <= 0) return;
        const depth = r.kh * r.kw * r.ci;
        const x = randomValues(r.n * r.h * r.w * r.ci, r.seed);
        const want = new Float32Array(rows * depth);
        im2col(x, g, want);
        // Two calls split at a random row give the whole matrix.
        const split = Math.floor(r.cut * rows);
        const got = new Float32Array(rows * depth);
        addonHere().im2col(x, geometryArray(g), 0, split, got.subarray(0, split * depth));
        addonHere().im2col(x, geometryArray(g), split, rows - split, got.subarray(split * depth));
        assert.deepEqual(got, want);
        const cols = randomValues(rows * depth, r.seed + 1);
        const wantDx = new Float32Array(x.length);
        col2im(cols, g, wantDx);
        const gotDx = randomValues(x.length, r.seed + 2); // garbage: `zero` clears it
        addonHere().col2im(cols.subarray(0, split * depth), geometryArray(g), 0, split, gotDx, true);
        addonHere().col2im(cols.subarray(split * depth), geometryArray(g), split, rows - split, gotDx, false);
        for (let i = 0; i < x.length; i++) assert.ok(Math.abs(gotDx[i] - wantDx[i]) <= 1e-5 * (1 + Math.abs(wantDx[i])), `dx[${i}]: ${gotDx[i]} vs ${wantDx[i]}`);
      },
    ),
    { numRuns: 300 },
  );
});

test('the addon\'s im2col and col2im check every argument before touching memory', { skip }, () => {
  const addon = addonHere();
  const g = tf.backend_util.computeConv2DInfo([1, 4, 4, 2], [3, 3, 2, 1], 1, 1, 'same');
  const geometry = geometryArray(g);
  const x = new Float32Array(32);
  const dst = new Float32Array(16 * 18);
  addon.im2col(x, geometry, 0, 16, dst);
  assert.throws(() => addon.im2col(x, geometry, 1, 16, dst), /native im2col: rowStart \+ rowCount is past the last patch row/);
  assert.throws(() => addon.im2col(x.subarray(1), geometry, 0, 16, dst), /native im2col: the image array is shorter/);
  assert.throws(() => addon.im2col(x, geometry, 0, 16, dst.subarray(1)), /native im2col: the patch array is shorter/);
  assert.throws(() => addon.im2col(x, geometry.slice(1), 0, 1, dst), /native im2col: geometry must be an array of 14 integers/);
  assert.throws(() => addon.im2col(x, geometry.map((v, i) => (i === 8 ? 0 : v)), 0, 1, dst), /strides and dilations must be at least 1/);
  assert.throws(() => addon.im2col(x, geometry.map((v, i) => (i === 0 ? -1 : v)), 0, 1, dst), /native im2col: geometry.batch must be a non-negative integer/);
  assert.throws(() => addon.im2col(new Float64Array(32) as never, geometry, 0, 1, dst), /native im2col: x must be a Float32Array/);
  assert.throws(() => addon.col2im(dst, geometry, 0, 16, x.subarray(2), true), /native col2im: the image array is shorter/);
  assert.throws(() => (addon.col2im as (...args: unknown[]) => void)(dst, geometry, 0, 16, x), /native col2im: expected 6 arguments/);
});

test('every block size gives the same convolution and gradients as the stock cpu kernels, down to one row per block', { skip }, async () => {
  await useBackend('cpu', false);
  const backend = tf.backend();
  const info = (t: tf.Tensor): tf.TensorInfo => ({ dataId: t.dataId, shape: t.shape, dtype: t.dtype });
  for (const c of [CONV_CASES[0], CONV_CASES[4], CONV_CASES[6], CASES[CASES.length - 2]]) {
    const x = randomTensor(c.x, 1);
    const f = randomTensor(c.filter, 2);
    const attrs = { strides: c.strides, pad: c.pad, dataFormat: 'NHWC', dilations: 1, ...(c.rounding ? { dimRoundingMode: c.rounding } : {}) } as tf.NamedAttrMap;
    const dy = randomTensor(tf.conv2d(x as tf.Tensor4D, f as tf.Tensor4D, c.strides, c.pad, 'NHWC', 1, c.rounding).shape, 3);
    const calls: [string, tf.NamedTensorInfoMap, tf.NamedAttrMap][] = [
      ['Conv2D', { x: info(x), filter: info(f) }, attrs],
      ['Conv2DBackpropFilter', { x: info(x), dy: info(dy) }, { ...attrs, filterShape: c.filter }],
      ['Conv2DBackpropInput', { dy: info(dy), filter: info(f) }, { ...attrs, inputShape: c.x }],
    ];
    for (const [kernelName, inputs, kernelAttrs] of calls) {
      const stock = tf.getKernel(kernelName, 'cpu')?.kernelFunc as unknown as (a: unknown) => tf.TensorInfo;
      const want = tf.engine().makeTensorFromTensorInfo(stock({ inputs, attrs: kernelAttrs, backend }));
      for (const blockFloats of [1, 7, 50, 1 << 30]) {
        const patch = nativeConv2dPatches('cpu', { blockFloats }).find((p) => p.kernelName === kernelName) as KernelPatch;
        const got = tf.engine().makeTensorFromTensorInfo(patch.build(undefined)({ inputs, attrs: kernelAttrs, backend }) as tf.TensorInfo);
        const err = relativeError(got.dataSync() as Float32Array, want.dataSync() as Float32Array);
        assert.ok(err <= TOLERANCE, `${kernelName} ${describeCase(c)}, blocks of ${blockFloats} floats: ${err}`);
        got.dispose();
      }
      want.dispose();
    }
    tf.dispose([x, f, dy]);
  }
});

test('an empty batch gives zero gradients natively, not leftover memory', { skip }, async () => {
  for (const set of ['native', 'native-cpu'] as const) {
    await useBackend(set, true);
    // Garbage on the heap first, where the empty batch's gradient could land.
    tf.dispose(tf.tidy(() => tf.fill([3, 3, 2, 4], 7)));
    const df = tf.tidy(() => tf.grad((f: tf.Tensor) => tf.sum(tf.conv2d(tf.zeros([0, 5, 5, 2]) as tf.Tensor4D, f as tf.Tensor4D, 1, 'same')))(randomTensor([3, 3, 2, 4], 1)));
    assert.deepEqual([...(await df.data())], new Array(72).fill(0), `${set}: the filter gradient of an empty batch`);
    df.dispose();
  }
});

test('native FusedConv2D with activations other than linear and relu is right: the convolution, then the bias and activation (issue 31)', async () => {
  // These had fallen back to the stock wasm kernel, wrong for this shape (a 'same' image narrower
  // than the filter), and aborted the module with a numeric pad it sized differently.
  const base = { x: [1, 3, 3, 2] as [number, number, number, number], filter: [1, 4, 2, 3] as [number, number, number, number], strides: [3, 3] as [number, number], dilations: [1, 1] as [number, number], pad: 'same' as const, rounding: undefined, seed: 16960, bias: true };
  for (const activation of ['relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'] as const) await checkCase(fusedConv2d, { ...base, activation });
  await checkCase(fusedConv2d, { x: [2, 7, 1, 3], filter: [4, 2, 3, 3], strides: [2, 1], dilations: [1, 1], pad: 1, rounding: 'round', seed: 114920, bias: false, activation: 'sigmoid' });
});
