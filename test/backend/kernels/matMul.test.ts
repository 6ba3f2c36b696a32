import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, PARITY_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';
import { weightCacheSize } from '../../../src/backend/kernels';
import { checkCase } from '../fuzz/harness';
import { batchMatMul, fusedMatMul, weightProducts } from '../fuzz/products';

// Shapes are [m, k] x [k, n] before the transposes; the backward pass of a dense layer needs
// x^T dy (transposeA) and dy W^T (transposeB).
const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [3, 5, 7],
  [64, 784, 256],
  [64, 256, 10],
  [17, 33, 9],
];

test('BatchMatMul matches stock cpu for every transpose combination and shape', async () => {
  for (const [m, k, n] of SHAPES) {
    for (const transposeA of [false, true]) {
      for (const transposeB of [false, true]) {
        await expectParity(`matMul ${m}x${k}x${n} tA=${transposeA} tB=${transposeB}`, () => {
          const a = randomTensor(transposeA ? [k, m] : [m, k], m + k);
          const b = randomTensor(transposeB ? [n, k] : [k, n], k + n);
          return tf.matMul(a, b, transposeA, transposeB);
        });
      }
    }
  }
});

test('BatchMatMul on rank-3 operands: single matrices take the fast path, batches the stock one', async () => {
  for (const [aShape, bShape] of [
    [[1, 6, 4], [1, 6, 5]],
    [[3, 6, 4], [3, 6, 5]],
    [[3, 6, 4], [1, 6, 5]],
  ] as [number[], number[]][]) {
    await expectParity(`batched matMul [${aShape}]^T [${bShape}]`, () => tf.matMul(randomTensor(aShape, 1), randomTensor(bShape, 2), true, false));
  }
});

test('BatchMatMul gradients of a dense layer match stock cpu', async () => {
  await expectParity('dense gradients', () => {
    const x = randomTensor([32, 20], 3);
    const w = randomTensor([20, 12], 4);
    const dy = randomTensor([32, 12], 5);
    return tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(tf.matMul(a, b), dy)))([x, w]);
  });
});

test('fused matMul (dense layers) matches stock cpu for every activation, with and without bias', async () => {
  const activations = ['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'] as const;
  for (const activation of activations) {
    for (const withBias of [true, false]) {
      await expectParity(`fused matMul ${activation} bias=${withBias}`, () =>
        tf.fused.matMul({
          a: randomTensor([9, 7], 1),
          b: randomTensor([5, 7], 2),
          transposeB: true,
          bias: withBias ? randomTensor([5], 3) : undefined,
          activation,
          preluActivationWeights: activation === 'prelu' ? randomTensor([5], 4) : undefined,
          leakyreluAlpha: 0.3,
        }),
      );
    }
  }
});

test('a transposed Variable weight is cached on wasm and freed with the weight', async () => {
  await useBackend('wasm', true);
  // Large enough for the XNNPACK path (small products stay on the stock loop).
  const init = randomTensor([64, 48], 1);
  const w = tf.variable(init);
  init.dispose();
  const dy = randomTensor([32, 48], 2);
  const before = weightCacheSize();
  const product = tf.matMul(dy, w, false, true);
  assert.equal(weightCacheSize(), before + 1);
  const again = tf.matMul(dy, w, false, true);
  assert.deepEqual(await again.data(), await product.data());
  assert.equal(weightCacheSize(), before + 1, 'the second product reuses the cached transpose');
  w.dispose();
  assert.equal(weightCacheSize(), before);
  tf.dispose([dy, product, again]);
});

test('BatchMatMul and _FusedMatMul leak no tensor and no backend buffer', async () => {
  for (const backend of PARITY_BACKENDS) {
    await useBackend(backend, true);
    const a = randomTensor([64, 32], 1);
    const init = randomTensor([48, 32], 2);
    const w = tf.variable(init);
    init.dispose();
    await expectNoLeak('BatchMatMul', async () => {
      const out = tf.tidy(() =>
        tf.add(
          tf.add(tf.matMul(a, w, false, true), tf.matMul(a, a, true, false).sum()),
          tf.fused.matMul({ a, b: w, transposeB: true, bias: tf.ones([48]), activation: 'relu' }),
        ),
      );
      await out.data();
      out.dispose();
    });
    tf.dispose([a, w]);
  }
});

test('a two-axis batch broadcast multiplies every pair of matrices, on every kernel set (issue 31)', async () => {
  // [1, 3] against [3, 1] is nine products; tfjs 4.22 (cpu and wasm) made three, and native
  // returned 24 of 36 values from a freed tensor. Against plain loops.
  await checkCase(batchMatMul, { a: [1, 3, 2, 2], b: [3, 1, 2, 2], transposeA: false, transposeB: false, seed: 1 });
  await checkCase(batchMatMul, { a: [2, 1, 3, 5, 4], b: [4, 1, 6, 4], transposeA: false, transposeB: true, seed: 2 });
  await checkCase(batchMatMul, { a: [3, 1, 4, 2], b: [5, 4, 3], transposeA: true, transposeB: false, seed: 3 });
});

test('empty products: k = 0 gives zeros, no matrices an empty output, on every kernel set', async () => {
  // XNNPACK left a k = 0 output unwritten; a batch of no matrices trapped the wasm module.
  await checkCase(batchMatMul, { a: [2, 0], b: [0, 7], transposeA: false, transposeB: false, seed: 1 });
  await checkCase(batchMatMul, { a: [0, 1, 1], b: [1, 1, 0], transposeA: false, transposeB: false, seed: 1 });
  await checkCase(fusedMatMul, { a: [3, 0], b: [0, 4], transposeA: false, transposeB: false, bias: [4], activation: 'relu', alpha: [4], leakyreluAlpha: 0.2, seed: 1 });
});

test('_FusedMatMul on wasm: batched with a bias, small and transposed with relu and relu6, every activation (issue 31)', async () => {
  // The stock scalar path reads a 1-D bias at the flat output index and clamps partial sums.
  const base = { transposeA: false, transposeB: false, bias: [4], activation: 'linear' as const, alpha: [4], leakyreluAlpha: 0.2, seed: 1 };
  await checkCase(fusedMatMul, { ...base, a: [2, 3, 5], b: [2, 5, 4] });
  await checkCase(fusedMatMul, { ...base, a: [3, 3, 5], b: [5, 4] });
  for (const activation of ['relu', 'relu6'] as const) {
    await checkCase(fusedMatMul, { ...base, a: [5, 3], b: [4, 5], transposeA: true, transposeB: true, activation, bias: null, seed: 4 });
    await checkCase(fusedMatMul, { ...base, a: [60, 3], b: [4, 60], transposeA: true, transposeB: true, activation, seed: 5 });
  }
  for (const activation of ['elu', 'sigmoid', 'leakyrelu', 'prelu'] as const) {
    await checkCase(fusedMatMul, { ...base, a: [6, 7], b: [7, 4], activation, bias: [1, 4], alpha: [1], seed: 6 });
  }
});

test('a weight multiplied again under another shape (a reshape, same data) is repacked on wasm, not the operator XNNPACK packed for the first shape', async () => {
  // XNNPACK caches the packed right-hand operand by tensor id alone: 47x off in the fuzz.
  await checkCase(weightProducts, { x: [19, 55], units: 35, view: [5, 385], seed: 10 });
});
