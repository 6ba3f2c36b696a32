import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addChecked, ADD_CHECKED, uninstallFastKernels } from '../../../src/backend/kernels';
import { addCheckedAll, ADD_CHECKED_ALL } from '../../../src/core/addChecked';
import { expectNoLeak, FAST_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';

/** The ops the kernel replaces, as an accumulator wrote them. */
function reference(sum: tf.Tensor | null, gradient: tf.Tensor, weight: number): tf.Tensor {
  const scaled = weight === 1 ? gradient.clone() : tf.mul(gradient, weight);
  return sum === null ? scaled : tf.add(sum, scaled);
}

// Sizes with and without a tail past the last whole SIMD vector, and a scalar.
const SHAPES = [[784, 256], [10, 7], [3], []];

test('addChecked gives bit-identical sums to tf.add(sum, tf.mul(gradient, weight)), with a zero check', async () => {
  for (const backend of FAST_BACKENDS) {
    for (const fast of [true, false]) {
      await useBackend(backend, fast);
      assert.equal(tf.getKernel(ADD_CHECKED, backend) !== undefined, fast, 'the kernel is there exactly when installed');
      for (const [i, shape] of SHAPES.entries()) {
        for (const weight of [1, 0.37, 16]) {
          for (const withSum of [true, false]) {
            const sum = withSum ? randomTensor(shape, i) : null;
            const gradient = randomTensor(shape, 100 + i);
            const { sum: out, check } = addChecked(sum, gradient, weight);
            const expected = reference(sum, gradient, weight);
            const label = `${backend}${fast ? ' + kernels' : ''} [${shape}] weight ${weight}${withSum ? '' : ' without sum'}`;
            assert.deepEqual(out.shape, shape, label);
            assert.deepEqual(out.dataSync(), expected.dataSync(), label);
            assert.equal(check.dataSync()[0], 0, `${label}: finite`);
            tf.dispose([sum as tf.Tensor, gradient, out, check, expected]);
          }
        }
      }
    }
  }
});

test('the check is NaN for any infinity or NaN, wherever it sits, and 0 for huge finite values', async () => {
  for (const backend of FAST_BACKENDS) {
    for (const fast of [true, false]) {
      await useBackend(backend, fast);
      const n = 1031; // 257 vectors and a tail of 3
      for (const [position, bad] of [[0, Infinity], [517, -Infinity], [1029, NaN], [1030, Infinity]] as const) {
        const values = new Float32Array(n).fill(1);
        values[position] = bad;
        const gradient = tf.tensor1d(values);
        const { sum, check } = addChecked(tf.zeros([n]), gradient);
        assert.ok(Number.isNaN(check.dataSync()[0]), `${backend}${fast ? ' + kernels' : ''}: ${bad} at ${position}`);
        tf.dispose([sum, check, gradient]);
      }
      // 3e38 + 3e38 overflows a plain sum of the values; the check must not call it non-finite.
      const big = tf.fill([n], 3e38);
      const { sum, check } = addChecked(null, big);
      assert.equal(check.dataSync()[0], 0, `${backend}: finite values near the float32 maximum`);
      tf.dispose([sum, check]);
      // The sum itself overflowing to infinity is caught.
      const twice = addChecked(big, big);
      assert.ok(Number.isNaN(twice.check.dataSync()[0]), `${backend}: 3e38 + 3e38 overflows`);
      tf.dispose([big, twice.sum, twice.check]);
    }
  }
});

test('addChecked rejects bad input with named errors and leaves the inputs alone', async () => {
  await useBackend('wasm', true);
  const g = tf.ones([2, 3]);
  const before = tf.memory().numTensors;
  assert.throws(() => addChecked(null, [1, 2] as never), /addChecked: gradient must be a tf.Tensor/);
  assert.throws(() => addChecked(tf.ones([3, 2]), g), /addChecked: sum must be null or a tf.Tensor of the gradient's shape \[2,3\]; got a tensor of shape \[3,2\]/);
  assert.throws(() => addChecked(null, g, Number.NaN), /addChecked: weight must be a finite number/);
  assert.equal(tf.memory().numTensors, before + 1, 'only the rejected [3, 2] sum argument was made');
  tf.dispose(g);
});

test('addChecked leaks no tensor on any backend', async () => {
  for (const backend of FAST_BACKENDS) {
    for (const fast of [true, false]) {
      await useBackend(backend, fast);
      const sum = randomTensor([300, 7], 1);
      const gradient = randomTensor([300, 7], 2);
      await expectNoLeak('addChecked', async () => {
        const a = addChecked(sum, gradient, 0.5);
        const b = addChecked(null, gradient);
        await a.check.data();
        tf.dispose([a.sum, a.check, b.sum, b.check]);
      });
      tf.dispose([sum, gradient]);
    }
  }
  uninstallFastKernels();
});

test('addCheckedAll gives each variable the sum addChecked gives, one check for all, and leaks nothing', async () => {
  const shapes = [[784, 256], [256], [10, 7], [3], []];
  for (const backend of FAST_BACKENDS) {
    for (const fast of [true, false]) {
      await useBackend(backend, fast);
      assert.equal(tf.getKernel(ADD_CHECKED_ALL, backend) !== undefined, fast, 'the kernel is there exactly when installed');
      const gradients = shapes.map((shape, i) => randomTensor(shape, 200 + i));
      // Every other variable has a running sum; the first micro-step of a newcomer has none.
      const sums = shapes.map((shape, i) => (i % 2 === 0 ? randomTensor(shape, 300 + i) : null));
      for (const weight of [1, 0.37]) {
        const label = `${backend}${fast ? ' + kernels' : ''} weight ${weight}`;
        const all = addCheckedAll(sums, gradients, weight);
        gradients.forEach((g, i) => {
          const one = addChecked(sums[i], g, weight);
          assert.deepEqual(all.sums[i].shape, g.shape, label);
          assert.deepEqual(all.sums[i].dataSync(), one.sum.dataSync(), `${label}: variable ${i}`);
          tf.dispose([one.sum, one.check]);
        });
        assert.equal(all.check.dataSync()[0], 0, `${label}: finite`);
        tf.dispose([...all.sums, all.check]);
      }
      // A non-finite value in the last variable alone makes the one check NaN.
      const last = tf.tensor1d([1, 2, Infinity]);
      const poisoned = addCheckedAll([...sums, null], [...gradients, last]);
      assert.ok(Number.isNaN(poisoned.check.dataSync()[0]), `${backend}${fast ? ' + kernels' : ''}: the last variable's infinity`);
      tf.dispose([...poisoned.sums, poisoned.check, last]);
      await expectNoLeak('addCheckedAll', async () => {
        const a = addCheckedAll(sums, gradients, 0.5);
        await a.check.data();
        tf.dispose([...a.sums, a.check]);
      });
      tf.dispose([...gradients, ...sums.filter((s): s is tf.Tensor => s !== null)]);
    }
  }
  uninstallFastKernels();
});

test("a window's last micro-step divides in the kernel, bit for bit what the division after it gives, and leaks nothing", async () => {
  const { GradientAccumulator } = await import('../../../src/core/gradientAccumulator');
  const shapes = [[300, 7], [7], [5, 3, 2]];
  // Uneven micro-batches: the divisor (3 + 5 + 7) · 2^−scale is not a power of two.
  const samples = [3, 5, 7];
  const train = (): Float32Array[] => {
    const vars = shapes.map((shape, i) => tf.variable(randomTensor(shape, 400 + i), true, `fold${i}_${Math.random()}`));
    const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: vars });
    const counts: number[] = [];
    // Two windows: the first makes the accumulators, the second must leave as many tensors as it found.
    for (const window of [0, 1]) {
      for (const [k, n] of samples.entries()) {
        const grads: tf.NamedTensorMap = {};
        vars.forEach((v, i) => (grads[v.name] = randomTensor(v.shape, 500 + 10 * k + 100 * window + i)));
        const result = accumulator.addGradients(grads, n);
        assert.equal(result.applied, k === samples.length - 1);
        tf.dispose(Object.values(grads));
      }
      counts.push(tf.memory().numTensors);
    }
    assert.equal(counts[1], counts[0], 'a window leaves as many tensors as it found');
    const weights = vars.map((v) => Float32Array.from(v.dataSync()));
    accumulator.dispose();
    tf.dispose(vars);
    return weights;
  };
  for (const backend of FAST_BACKENDS) {
    await useBackend(backend, false);
    const stock = train();
    await useBackend(backend, true);
    const fused = train();
    fused.forEach((w, i) => assert.deepEqual(w, stock[i], `${backend}: variable ${i}`));
  }
  uninstallFastKernels();
});
