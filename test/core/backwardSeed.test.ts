import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tidy } from '../../src/core/accumulation';
import { BackwardSeed, microBatchGradients, safeVariableGrads } from '../../src/core/lossGradient';

/**
 * A micro-step's gradients are those of its loss times a factor; the backward pass starts from
 * the factor instead of multiplying the loss by it (lossGradient.ts). That must give every
 * gradient bit for bit as `tf.variableGrads(() => tf.mul(loss, factor))` did, for any factor and
 * for one `BackwardSeed` reused across calls whose factors change, and leave no tensor behind.
 */

const bits = (t: tf.Tensor) => Array.from(new Uint32Array(new Float32Array(t.dataSync()).buffer));

/** A small tanh network's mean squared error, its weights and data drawn from `seed`. */
function problem(seed: number, batch: number) {
  const w1 = tf.variable(tf.randomNormal([3, 4], 0, 1, 'float32', seed), true, `seedTest${seed}w1_${batch}`);
  const w2 = tf.variable(tf.randomNormal([4, 2], 0, 1, 'float32', seed + 1), true, `seedTest${seed}w2_${batch}`);
  const xs = tf.randomNormal([batch, 3], 0, 3, 'float32', seed + 2);
  const ys = tf.randomNormal([batch, 2], 0, 1, 'float32', seed + 3);
  const loss = () => tf.mean(tf.squaredDifference(tf.matMul(tf.tanh(tf.matMul(xs, w1)), w2), ys)) as tf.Scalar;
  return { vars: [w1, w2], loss, dispose: () => tf.dispose([w1, w2, xs, ys]) };
}

// Factors as the accumulator makes them (samples times a power of two) and arbitrary ones.
const factor = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 0, max: 40 })).map(([n, s]) => n * 2 ** -s),
  fc.float({ min: Math.fround(1e-6), max: Math.fround(1e6), noNaN: true }),
  fc.constant(1),
);

describe('BackwardSeed and the seeded backward pass', () => {
  it('gives the gradients of factor × loss bit for bit, for one seed reused over changing factors', async () => {
    await tf.setBackend('cpu');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 6 }), fc.array(factor, { minLength: 1, maxLength: 5 }), (seed, batch, factors) => {
        const p = problem(seed, batch);
        const held = new BackwardSeed();
        const before = tf.memory().numTensors;
        try {
          for (const c of factors) {
            const expected = tf.variableGrads(() => tf.mul(p.loss(), c) as tf.Scalar, p.vars);
            const got = tidy(() => safeVariableGrads('test', p.loss, p.vars, { seed: held, of: () => c }));
            const plain = tf.tidy(p.loss);
            assert.deepEqual(bits(got.value), bits(plain), 'the value is the loss, not multiplied');
            p.vars.forEach((v, i) => assert.deepEqual(bits(got.gradients[i] as tf.Tensor), bits(expected.grads[v.name]), `factor ${c}, ${v.name}`));
            tf.dispose([expected.value, ...Object.values(expected.grads), got.value, ...(got.gradients as tf.Tensor[]), plain]);
          }
          assert.equal(tf.memory().numTensors, before + 1, 'only the seed stays, until its owner disposes it');
        } finally {
          held.dispose();
          p.dispose();
        }
        assert.equal(tf.memory().numTensors, before - 4, "the problem's four tensors freed, nothing else left");
      }),
      { numRuns: 60, seed: 3512 },
    );
  });

  it('gives the same bits where the seed itself is passed on: a loss that is a variable, Mod, a gradient tfjs adds and frees', async () => {
    await tf.setBackend('cpu');
    fc.assert(
      fc.property(fc.float({ min: Math.fround(-50), max: Math.fround(50), noNaN: true }), fc.array(factor, { minLength: 2, maxLength: 4 }), (start, factors) => {
        const v = tf.variable(tf.scalar(start), true);
        const w = tf.variable(tf.tensor1d([start, 2 * start, 3]), true);
        const losses: (() => tf.Scalar)[] = [
          () => v as tf.Scalar,
          () => tf.mod(v, 7) as tf.Scalar,
          () => tf.tidy(() => {
            const a = tf.mul(v, 3);
            return tf.mod(a, tf.add(a, 10)) as tf.Scalar;
          }),
          () => tf.sum(tf.mod(w, 5)) as tf.Scalar,
        ];
        const held = new BackwardSeed();
        const before = tf.memory().numTensors;
        try {
          for (const loss of losses) {
            const kept: { gradient: tf.Tensor; bits: number[] }[] = [];
            for (const c of factors) {
              const expected = tf.variableGrads(() => tf.mul(loss(), c) as tf.Scalar, [v, w]);
              const got = tidy(() => safeVariableGrads('test', loss, [v, w], { seed: held, of: () => c }));
              [v, w].forEach((x, i) => {
                const e = expected.grads[x.name];
                const g = got.gradients[i];
                assert.deepEqual(g === null ? null : bits(g), e === undefined ? null : bits(e), `factor ${c}, ${x.name}`);
              });
              got.value.dispose();
              tf.dispose([expected.value, ...Object.values(expected.grads)]);
              for (const g of got.gradients) if (g !== null) kept.push({ gradient: g, bits: bits(g) });
            }
            // Gradients kept past later micro-steps still hold their own factor's values.
            kept.forEach((k) => assert.deepEqual(bits(k.gradient), k.bits, 'a gradient changed after the seed did'));
            tf.dispose(kept.map((k) => k.gradient));
          }
        } finally {
          held.dispose();
        }
        assert.equal(tf.memory().numTensors, before, 'nothing left behind, the seed included');
        tf.dispose([v, w]);
      }),
      { numRuns: 40, seed: 3513 },
    );
  });

  it('writes the seed only when its float32 value changes, and refuses a non-finite one by name', async () => {
    await tf.setBackend('cpu');
    const seed = new BackwardSeed();
    assert.equal(seed.allocated, false, 'nothing is made before first use');
    const first = seed.tensor.dataId;
    seed.set(1);
    assert.equal(seed.tensor.dataId, first, 'the value it holds already: no write');
    seed.set(0.1);
    const second = seed.tensor.dataId;
    assert.notEqual(second, first);
    seed.set(Math.fround(0.1));
    assert.equal(seed.tensor.dataId, second, 'the same float32 value: no write');
    assert.equal(seed.tensor.dataSync()[0], Math.fround(0.1));
    assert.throws(() => seed.set(Number.NaN), /BackwardSeed.*value.*a finite number/s);
    seed.dispose();
    assert.equal(seed.allocated, false);
    assert.equal(seed.tensor.dataSync()[0], 1, 'made again, holding 1');
    seed.dispose();
  });

  it('leaves no tensor behind when the loss throws, and frees a seed the failing call made', async () => {
    await tf.setBackend('cpu');
    const p = problem(7, 3);
    const seed = new BackwardSeed();
    const before = tf.memory().numTensors;
    const failing = (): tf.Scalar => {
      p.loss();
      throw new Error('loss failed');
    };
    assert.throws(() => tidy(() => safeVariableGrads('test', failing, p.vars, { seed, of: () => 3 })), /loss failed/);
    assert.equal(seed.allocated, false, 'the seed this call made is gone again');
    assert.equal(tf.memory().numTensors, before);
    // A seed that existed before the call stays (its owner frees it).
    seed.set(5);
    assert.throws(() => microBatchGradients('test', 'per-micro-batch', failing, p.vars, undefined, undefined, () => 1, seed), /loss failed/);
    assert.equal(seed.allocated, true);
    assert.equal(tf.memory().numTensors, before + 1);
    seed.dispose();
    assert.equal(tf.memory().numTensors, before);
    p.dispose();
  });
});
