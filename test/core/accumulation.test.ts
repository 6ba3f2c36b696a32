import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addIntoSums, averageGradients, clipByGlobalNorm, globalNorm } from '../../src/core/accumulation';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';

const values = (t: tf.Tensor) => Array.from(t.dataSync());

describe('accumulation math', () => {
  /** Adds one gradient into one sum (null: start from it). */
  const add = (sum: tf.Tensor | null, g: tf.Tensor | null, factor: number) => addIntoSums([sum], [g], factor).sums[0] as tf.Tensor;

  it('adds weighted gradients and averages them once: 1, 2, 3, 4 give 2.5', () => {
    // Hand derivation: (1 + 2 + 3 + 4) / 4 = 2.5.
    let sum: tf.Tensor | null = null;
    for (const g of [1, 2, 3, 4]) sum = add(sum, tf.scalar(g), 1);
    assert.deepEqual(values(averageGradients([sum as tf.Tensor], 4)[0]), [2.5]);
  });

  it('weights uneven micro-batches by their size', () => {
    // Means 1 over 3 samples and 4 over 1 sample: (3·1 + 1·4) / 4 = 1.75.
    const sum = add(add(tf.zeros([2]), tf.tensor1d([1, 1]), 3), tf.tensor1d([4, 4]), 1);
    assert.deepEqual(values(averageGradients([sum], 4)[0]), [1.75, 1.75]);
  });

  it('leaves a sum without gradient as it is, the same tensor', () => {
    const sum = tf.tensor1d([1, 2]);
    const { sums, probe } = addIntoSums([sum, null], [null, null], 5);
    assert.equal(sums[0], sum);
    assert.equal(sums[1], null);
    assert.equal(probe.dataSync()[0], 0);
  });

  it('checks every new sum in the same pass: the probe is 0 when all are finite, NaN when one is not', () => {
    // 3e38 + 3e38 overflows float32: a finite gradient into a finite sum gives Infinity.
    const { probe } = addIntoSums([tf.tensor1d([1]), tf.tensor1d([3e38])], [tf.tensor1d([1]), tf.tensor1d([3e38])], 1);
    assert.ok(Number.isNaN(probe.dataSync()[0]));
    const scaled = addIntoSums([tf.tensor1d([3e38 / 4])], [tf.tensor1d([3e38])], 0.25);
    assert.deepEqual([values(scaled.sums[0] as tf.Tensor)[0], scaled.probe.dataSync()[0]], [Math.fround(Math.fround(3e38 / 4) * 2), 0]);
  });

  it('divides sums held at a scale by the weight at that scale, bit for bit as the unscaled division', () => {
    // 2^-3 is exact: (7 · 2^-3) / (3 · 2^-3) is 7 / 3 rounded once, to the same float32.
    assert.deepEqual(values(averageGradients([tf.scalar(7 / 8)], 3, 3)[0]), values(averageGradients([tf.scalar(7)], 3)[0]));
  });

  it('rejects a total weight of zero', () => {
    assert.throws(() => averageGradients([tf.scalar(1)], 0), /totalWeight/);
  });

  it('computes the global norm over all tensors', () => {
    // sqrt(3² + 4² + 12²) = 13.
    assert.equal(globalNorm([tf.tensor1d([3, 4]), tf.scalar(12)]).dataSync()[0], 13);
  });

  it('clips by global norm and leaves small gradients bit-identical', () => {
    const { clipped, norm } = clipByGlobalNorm([tf.tensor1d([3, 4]), tf.scalar(12)], 6.5);
    assert.equal(norm.dataSync()[0], 13);
    assert.deepEqual(values(clipped[0]), [1.5, 2]);
    assert.deepEqual(values(clipped[1]), [6]);
    const small = clipByGlobalNorm([tf.tensor1d([0.1, 0.2])], 1);
    assert.deepEqual(values(small.clipped[0]), values(tf.tensor1d([0.1, 0.2])));
    assert.throws(() => clipByGlobalNorm([tf.scalar(1)], 0), /clipNorm/);
  });

  it('leaks nothing', () => {
    const before = tf.memory().numTensors;
    tf.tidy(() => {
      const a = [tf.ones([3]), tf.ones([2, 2])];
      clipByGlobalNorm(averageGradients(addIntoSums(a, a, 2).sums as tf.Tensor[], 3), 0.5);
    });
    const input = tf.ones([3]);
    const { clipped, norm, maxAbs, scaledNorm } = clipByGlobalNorm([input], 1);
    tf.dispose([input, ...clipped, norm, maxAbs, scaledNorm]);
    assert.equal(tf.memory().numTensors, before);
  });
});

describe('exploding gradients: clipping and the finiteness check cannot overflow', () => {
  for (const scale of [1e19, 1e25, 1e30, 1e38]) {
    it(`clips a gradient of magnitude ${scale} to a step exactly clipNorm long`, () => {
      const w = tf.variable(tf.zeros([4]));
      const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [w], clipNorm: 0.5 });
      const g = [3, -3, 3, 1].map((x) => x * scale);
      const result = acc.step(() => tf.sum(tf.mul(w, tf.tensor1d(g))) as tf.Scalar);
      assert.equal(result.applied, true);
      const step = Array.from(w.dataSync());
      const length = Math.hypot(...step);
      assert.ok(Math.abs(length - 0.5) <= 1e-6, `step of length ${length}`);
      // The direction is kept: the step is −g / |g| · clipNorm.
      const norm = Math.hypot(...g.map((x) => Math.fround(x)));
      step.forEach((s, i) => assert.ok(Math.abs(s + (0.5 * Math.fround(g[i])) / norm) <= 1e-6, `component ${i}: ${s}`));
      assert.ok(Math.abs((result.gradientNorm as number) - norm) <= 1e-6 * norm, `reported norm ${result.gradientNorm} vs ${norm}`);
      acc.dispose();
      w.dispose();
    });
  }

  it('a step whose gradient elements are large but finite is accumulated, not rejected', () => {
    const w = tf.variable(tf.zeros([4]));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1e-38), accumulationSteps: 2, varList: [w] });
    const result = acc.step(() => tf.sum(tf.mul(w, tf.tensor1d([3e38, 3e38, 3e38, 3e38]))) as tf.Scalar);
    assert.equal(result.skipped, null);
    assert.equal(acc.pendingMicroBatches, 1);
    acc.dispose();
    w.dispose();
  });
});
