import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family, Outputs } from './harness';

/**
 * `FusedBatchNorm` (`tf.batchNorm`) forward and its gradient (the project's fused backward
 * kernel): ranks 2-4, channel counts on and off the SIMD width of 4, zero-size batches,
 * statistics shaped `[C]`, `[1, …, 1, C]` or like x (which the kernels hand back to tfjs), with
 * and without offset and scale.
 */

interface BatchNormCase {
  x: number[];
  /** Shape of mean, variance, offset and scale. */
  params: number[];
  offset: boolean;
  scale: boolean;
  epsilon: number;
  seed: number;
}

const cases: fc.Arbitrary<BatchNormCase> = fc
  .record({
    lead: fc.array(dim(5, true), { minLength: 1, maxLength: 3 }),
    c: fc.oneof(dim(7), fc.constantFrom(4, 8, 12, 16)),
    params: fc.constantFrom<'c' | 'ones' | 'full'>('c', 'c', 'ones', 'full'),
    offset: fc.boolean(),
    scale: fc.boolean(),
    epsilon: fc.constantFrom(1e-3, 1e-5, 0.1),
    seed: fc.integer({ min: 1, max: 1e6 }),
  })
  .map((r) => {
    const x = [...r.lead, r.c];
    const params = r.params === 'c' ? [r.c] : r.params === 'ones' ? [...r.lead.map(() => 1), r.c] : x;
    return { x, params, offset: r.offset, scale: r.scale, epsilon: r.epsilon, seed: r.seed };
  });

function tensors(c: BatchNormCase): tf.Tensor[] {
  const t = (shape: number[], seed: number, positive = false) => {
    const v = randomValues(shape.reduce((a, b) => a * b, 1), seed);
    return tf.tensor(positive ? v.map((u) => Math.abs(u) + 0.05) : v, shape);
  };
  return [t(c.x, c.seed), t(c.params, c.seed + 1), t(c.params, c.seed + 2, true), t(c.params, c.seed + 3), t(c.params, c.seed + 4, true)];
}

const describe = (c: BatchNormCase) => `x ${dims(c.x)} mean/variance/offset/scale ${dims(c.params)} offset ${c.offset} scale ${c.scale} epsilon ${c.epsilon}`;

export const batchNorm: Family<BatchNormCase> = {
  name: 'FusedBatchNorm (tf.batchNorm)',
  kernels: ['FusedBatchNorm'],
  cases,
  describe,
  run: (c) => {
    const [x, mean, variance, offset, scale] = tensors(c);
    return tf.batchNorm(x, mean, variance, c.offset ? offset : undefined, c.scale ? scale : undefined, c.epsilon);
  },
  tolerance: 2e-5,
};

/**
 * The gradients of `y = (x − mean) · s · scale + offset`, `s = 1/sqrt(variance + ε)`, per channel
 * from their definitions (sums over every axis but the last, in float64). Plain loops because
 * tfjs 4.22's own gradient, the other possible oracle, throws on an empty x.
 */
function batchNormGradientReference(c: BatchNormCase): Outputs {
  const v = (shape: number[], seed: number, positive = false) => {
    const u = randomValues(shape.reduce((a, b) => a * b, 1), seed);
    return positive ? u.map((w) => Math.abs(w) + 0.05) : u;
  };
  const x = v(c.x, c.seed);
  const mean = v(c.params, c.seed + 1);
  const variance = v(c.params, c.seed + 2, true);
  const scale = v(c.params, c.seed + 4, true);
  const dy = v(c.x, c.seed + 5);
  const channels = c.x[c.x.length - 1];
  const sumDy = new Float64Array(channels);
  const sumDyXc = new Float64Array(channels);
  for (let i = 0; i < x.length; i++) {
    const k = i % channels;
    sumDy[k] += dy[i];
    sumDyXc[k] += dy[i] * (x[i] - mean[k]);
  }
  const s = Float64Array.from(variance, (w) => 1 / Math.sqrt(w + c.epsilon));
  const perChannel = (f: (k: number) => number) => ({ data: Float32Array.from({ length: channels }, (_, k) => f(k)), shape: c.params });
  return [
    { data: dy.map((d, i) => d * scale[i % channels] * s[i % channels]), shape: c.x },
    perChannel((k) => -scale[k] * s[k] * sumDy[k]),
    perChannel((k) => -0.5 * scale[k] * s[k] ** 3 * sumDyXc[k]),
    perChannel((k) => sumDy[k]),
    perChannel((k) => s[k] * sumDyXc[k]),
  ];
}

export const batchNormGradients: Family<BatchNormCase> = {
  name: 'gradient of tf.batchNorm (TfjsAccumulateBatchNormGrad)',
  kernels: ['gradient of FusedBatchNorm', 'TfjsAccumulateBatchNormGrad'],
  // Per-channel statistics: the kernel's case (others go to tfjs's own gradient, which throws).
  // With offset and scale: without either, tfjs 4.22 cannot backpropagate through the op at all
  // (its tape reads the missing input: "Cannot read properties of undefined"), whatever the kernel.
  cases: cases.filter((c) => c.params.slice(0, -1).every((d) => d === 1)).map((c) => ({ ...c, offset: true, scale: true })),
  describe,
  run: (c) => {
    const [x, mean, variance, offset, scale] = tensors(c);
    const loss = (...t: tf.Tensor[]) => {
      const y = tf.batchNorm(t[0], t[1], t[2], t[3], t[4], c.epsilon);
      return tf.sum(tf.mul(y, tf.tensor(randomValues(y.size, c.seed + 5), y.shape)));
    };
    return tf.grads(loss)([x, mean, variance, offset, scale]);
  },
  reference: batchNormGradientReference,
  tolerance: 1e-4,
};
