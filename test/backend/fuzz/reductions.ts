import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family } from './harness';

/**
 * `Sum` and `Mean` over any set of axes (the project's kernels take the leading ones, the
 * per-channel statistics; the rest must still be right), ranks 1-5 with zero-size axes, with and
 * without `keepDims`, int32 sums; and their gradients (the project's broadcast).
 */

interface ReduceCase {
  x: number[];
  /** Axes reduced (distinct, in range); null for every axis. */
  axes: number[] | null;
  keepDims: boolean;
  dtype: 'float32' | 'int32';
  seed: number;
}

const cases: fc.Arbitrary<ReduceCase> = fc
  .record({
    x: fc.array(dim(5, true), { minLength: 1, maxLength: 5 }),
    pick: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    leading: fc.boolean(),
    all: fc.boolean(),
    keepDims: fc.boolean(),
    dtype: fc.constantFrom<'float32' | 'int32'>('float32', 'float32', 'int32'),
    seed: fc.integer({ min: 1, max: 1e6 }),
  })
  .map((r) => {
    const rank = r.x.length;
    // Leading axes (what the kernels take: as many as `pick` has trues, fewer than the rank), or
    // any subset; never an empty list (tfjs reads it as all).
    let axes = r.leading ? [...Array(Math.max(1, r.pick.filter(Boolean).length % rank)).keys()] : [...Array(rank).keys()].filter((a) => r.pick[a]);
    if (axes.length === 0) axes = [rank - 1];
    return { x: r.x, axes: r.all ? null : axes, keepDims: r.keepDims, dtype: r.dtype, seed: r.seed };
  });

function input(c: ReduceCase): tf.Tensor {
  const v = randomValues(c.x.reduce((a, b) => a * b, 1), c.seed);
  return c.dtype === 'float32' ? tf.tensor(v, c.x) : tf.tensor(Int32Array.from(v, (u) => Math.round(u * 50)), c.x, 'int32');
}

const describe = (c: ReduceCase) => `x ${dims(c.x)} ${c.dtype} axes ${c.axes ? dims(c.axes) : 'all'} keepDims ${c.keepDims}`;

/** The inputs' largest magnitude: a sum that cancels carries rounding of this size. */
const scaleFloor = (c: ReduceCase) => (c.dtype === 'int32' ? 50 : 1);

export const sumMean: Family<ReduceCase> = {
  name: 'Sum and Mean (tf.sum, tf.mean)',
  kernels: ['Sum', 'Mean'],
  cases,
  describe,
  scaleFloor,
  run: (c) => {
    const x = input(c);
    const axes = c.axes ?? undefined;
    return [tf.cast(tf.sum(x, axes, c.keepDims), 'float32'), tf.mean(x, axes, c.keepDims)];
  },
};

export const sumMeanGradients: Family<ReduceCase> = {
  name: 'gradients of tf.sum and tf.mean',
  kernels: ['gradient of Sum', 'gradient of Mean'],
  cases: cases.map((c) => ({ ...c, dtype: 'float32' as const })),
  describe,
  scaleFloor,
  run: (c) => {
    const x = input(c);
    const axes = c.axes ?? undefined;
    const upstream = (t: tf.Tensor) => tf.mul(t, tf.tensor(randomValues(t.size, c.seed + 1), t.shape));
    return [tf.grad((a: tf.Tensor) => tf.sum(upstream(tf.sum(a, axes, c.keepDims))))(x), tf.grad((a: tf.Tensor) => tf.sum(upstream(tf.mean(a, axes, c.keepDims))))(x)];
  },
};
