import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family } from './harness';

/**
 * The softmax cross-entropy loss and its gradient (the project's: the labels' only when asked
 * for), over batch axes of any size (0 included), class counts from 2, one-hot, soft and int32
 * labels, logits with ±Infinity, NaN and −0 mixed in, label smoothing, weights and every
 * reduction. test/backend/kernels/softmaxCrossEntropyGrad.test.ts runs the same cases against
 * tfjs's own gradient bit for bit.
 */

interface LossCase {
  batch: number[];
  classes: number;
  labels: 'one-hot' | 'soft' | 'int32';
  specials: boolean;
  /** Label smoothing; tfjs smooths labels of rank 2 only (it reads the class count from axis 1). */
  smoothing: number;
  weighted: boolean;
  reduction: tf.Reduction;
  wantLabels: boolean;
  seed: number;
}

function logitsOf(shape: number[], seed: number, specials: boolean): tf.Tensor {
  const pick = [Infinity, -Infinity, NaN, 80, -0];
  const v = randomValues(shape.reduce((a, b) => a * b, 1), seed).map((u, i) => (specials && i % 5 === 2 ? pick[Math.floor((u + 1) * 2.5) % pick.length] : 4 * u));
  return tf.tensor(v, shape);
}

export const softmaxCrossEntropyGradient: Family<LossCase> = {
  name: 'gradient of tf.losses.softmaxCrossEntropy',
  kernels: ['gradient of softmaxCrossEntropy__op'],
  cases: fc.record({
    batch: fc.array(dim(4, true), { maxLength: 2 }),
    // tf.oneHot needs a depth of 2 or more.
    classes: fc.integer({ min: 2, max: 12 }),
    labels: fc.constantFrom<LossCase['labels']>('one-hot', 'soft', 'int32'),
    specials: fc.boolean(),
    smoothing: fc.constantFrom(0, 0.1),
    weighted: fc.boolean(),
    reduction: fc.constantFrom(tf.Reduction.NONE, tf.Reduction.SUM_BY_NONZERO_WEIGHTS, tf.Reduction.MEAN, tf.Reduction.SUM),
    wantLabels: fc.boolean(),
    seed: fc.integer({ min: 1, max: 1e6 }),
  }),
  describe: (c) =>
    `logits ${dims([...c.batch, c.classes])} ${c.labels} labels${c.specials ? ' (with ±Infinity, NaN and −0)' : ''}, smoothing ${c.smoothing}${c.weighted ? ', weighted' : ''}, reduction ${tf.Reduction[c.reduction]}${c.wantLabels ? ', the labels gradient too' : ''}`,
  run: (c) => {
    const shape = [...c.batch, c.classes];
    const logits = logitsOf(shape, c.seed, c.specials);
    const raw = logitsOf(shape, c.seed + 1, false);
    const hot = () => tf.reshape(tf.oneHot(tf.argMax(raw, -1), c.classes), shape);
    const labels = c.labels === 'soft' ? tf.softmax(raw) : c.labels === 'int32' ? tf.cast(hot(), 'int32') : tf.cast(hot(), 'float32');
    const weights = c.weighted ? tf.abs(logitsOf(c.batch, c.seed + 2, false)) : undefined;
    const smoothing = shape.length === 2 ? c.smoothing : 0;
    // Upstream values other than 1 (per example where the reduction keeps the batch axes).
    const upstream = logitsOf(c.batch, c.seed + 3, false);
    const loss = (l: tf.Tensor, x: tf.Tensor) => tf.sum(tf.mul(tf.losses.softmaxCrossEntropy(l, x, weights, smoothing, c.reduction), upstream));
    // int32 labels are not differentiable: only the logits' gradient is asked for then.
    return c.wantLabels && c.labels !== 'int32' ? tf.grads(loss)([labels, logits]) : [tf.grad((x: tf.Tensor) => loss(labels, x))(logits)];
  },
};
