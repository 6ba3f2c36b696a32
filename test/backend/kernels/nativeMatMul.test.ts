import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fillRows } from '../../../src/backend/kernels/nativeMatMul';
import { expectNoLeak, expectParity, nativeAvailable, randomTensor, useBackend } from '../../helpers/kernelParity';
import { countingNativeCalls } from '../../helpers/nativeSpy';
import { fusedConv2d, fusedConv2dGradients } from '../fuzz/convolutions';
import { checkCase } from '../fuzz/harness';
import { fusedMatMul } from '../fuzz/products';

const skip = nativeAvailable() ? false : 'the native addon is not built here (npm run native:build says why)';

test('fillRows writes a row into every row of the output', () => {
  for (const rows of [1, 2, 3, 5, 8]) {
    const out = new Float32Array(rows * 3);
    fillRows(out, new Float32Array([1, 2, 3]));
    assert.deepEqual([...out], Array.from({ length: rows }, () => [1, 2, 3]).flat(), `${rows} rows`);
  }
});

test('native BatchMatMul matches stock cpu: transposes, batches, a shared operand, one row or column', { skip }, async () => {
  const cases: [number[], number[], boolean, boolean][] = [
    [[1, 1], [1, 1], false, false],
    [[64, 784], [784, 256], false, false],
    [[64, 784], [64, 256], true, false],
    [[64, 256], [784, 256], false, true],
    [[5, 7], [9, 5], true, true],
    [[1, 7], [7, 1], false, false],
    [[3, 6, 4], [4, 5], false, false], // a batch against one weight: one product of 18 rows
    [[3, 4, 6], [4, 5], true, false],
    [[6, 4], [3, 4, 5], false, false], // one A against a batch of B
    [[2, 3, 6, 4], [2, 3, 5, 4], false, true],
  ];
  const calls = await countingNativeCalls(async () => {
    for (const [aShape, bShape, tA, tB] of cases) {
      await expectParity(`native matMul [${aShape}]${tA ? 'ᵀ' : ''} [${bShape}]${tB ? 'ᵀ' : ''}`, () => tf.matMul(randomTensor(aShape, 1), randomTensor(bShape, 2), tA, tB), ['native', 'native-cpu']);
    }
  });
  assert.equal(calls, 2 * cases.length, 'every case ran in the addon, on wasm and on cpu');
});

test('native fused matMul: a column bias is written into the output first, other biases added after', { skip }, async () => {
  const fused = (shape: number[] | null, activation: 'linear' | 'relu' | 'prelu') => () =>
    tf.fused.matMul({
      a: randomTensor([9, 7], 1),
      b: randomTensor([5, 7], 2),
      transposeB: true,
      bias: shape ? randomTensor(shape, 3) : undefined,
      activation,
      preluActivationWeights: activation === 'prelu' ? randomTensor([5], 4) : undefined,
    });
  // cpu: every bias shape and activation (the stock cpu kernel takes any broadcastable bias).
  const biases: [string, number[] | null][] = [['none', null], ['[n]', [5]], ['[1, n]', [1, 5]], ['[m, n]', [9, 5]], ['[m, 1]', [9, 1]]];
  const onCpu = await countingNativeCalls(async () => {
    for (const [label, shape] of biases) {
      for (const activation of ['linear', 'relu', 'prelu'] as const) await expectParity(`native-cpu fused matMul bias ${label} ${activation}`, fused(shape, activation), ['native-cpu']);
    }
  });
  assert.equal(onCpu, biases.length * 3);
  // wasm (whose stock kernel takes rank-1 biases only): linear and relu in one native product;
  // prelu as the native product, then the Prelu kernel (the project's wasm fused kernel's parts).
  const onWasm = await countingNativeCalls(async () => {
    for (const shape of [null, [5]]) {
      for (const activation of ['linear', 'relu', 'prelu'] as const) await expectParity(`native fused matMul bias [${shape}] ${activation}`, fused(shape, activation), ['native']);
    }
  });
  assert.equal(onWasm, 2 * 3, 'every product runs in the addon, prelu too');
});

test('native dense training step: every gradient product runs in the addon, and nothing leaks', { skip }, async () => {
  for (const set of ['native', 'native-cpu'] as const) {
    await useBackend(set, true);
    const x = randomTensor([16, 20], 1);
    const dy = randomTensor([16, 12], 2);
    const w = tf.variable(randomTensor([20, 12], 3));
    const b = tf.variable(tf.zeros([12]));
    const grads = () => tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) => tf.sum(tf.mul(tf.fused.matMul({ a: xx, b: ww, bias: bb }), dy)))([x, w, b]);
    const calls = await countingNativeCalls(async () => {
      tf.dispose(grads());
    });
    assert.equal(calls, 3, 'forward, dy · Wᵀ and xᵀ · dy');
    await expectNoLeak('native dense gradients', async () => {
      const g = grads();
      await g[1].data();
      tf.dispose(g);
    });
    tf.dispose([x, dy, w, b]);
  }
});

test('fillRows leaves an empty output alone (an empty product with a bias)', () => {
  const out = new Float32Array(0);
  fillRows(out, new Float32Array([1, 2, 3]));
  assert.equal(out.length, 0);
});

test('empty products with a bias return their empty output on native: fused matMul, fused conv2d and its gradient (issue 31)', { skip }, async () => {
  // These threw "RangeError: offset is out of bounds" writing the bias into no rows.
  await checkCase(fusedMatMul, { a: [0, 3], b: [3, 4], transposeA: false, transposeB: false, bias: [4], activation: 'linear', alpha: [4], leakyreluAlpha: 0.2, seed: 1 });
  const conv = { x: [0, 5, 5, 2] as [number, number, number, number], filter: [3, 3, 2, 4] as [number, number, number, number], strides: [1, 1] as [number, number], dilations: [1, 1] as [number, number], pad: 'same' as const, rounding: undefined, seed: 1 };
  await checkCase(fusedConv2d, { ...conv, bias: true, activation: 'relu' });
  await checkCase(fusedConv2dGradients, { ...conv, bias: true });
});
