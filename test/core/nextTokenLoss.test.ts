import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { nextTokenLoss } from '../../src/core/nextTokenLoss';
import { assertNoLeak, assertThrowsMentioning, fcParameters } from '../helpers';

/** The loss by a plain loop over rows and positions: the reference the tensors are checked against. */
function loopLoss(logits: number[][][], tokens: number[][], mask: number[][]): { loss: number; count: number } {
  let loss = 0;
  let count = 0;
  tokens.forEach((row, b) => {
    for (let t = 0; t + 1 < row.length; t++) {
      if (mask[b][t + 1] === 0) continue;
      const z = logits[b][t];
      const max = Math.max(...z);
      const logSum = max + Math.log(z.reduce((s, v) => s + Math.exp(v - max), 0));
      loss += logSum - z[row[t + 1]];
      count++;
    }
  });
  return { loss, count };
}

const read = (r: { loss: tf.Tensor; count: tf.Tensor }) => ({ loss: r.loss.dataSync()[0], count: r.count.dataSync()[0] });

describe('nextTokenLoss: masked, shifted, sparse cross-entropy as { loss, count }', () => {
  it('counts targets after the shift: rows of 3 and 1 real tokens have 2 + 0 targets, not 4 (transformers #46204)', () => {
    // Uniform logits over 4 tokens: every target costs ln 4.
    const logits = tf.zeros([2, 3, 4]);
    const tokens = tf.tensor2d([[1, 2, 3], [1, 0, 0]], [2, 3], 'int32');
    const mask = tf.tensor2d([[1, 1, 1], [1, 0, 0]]);
    const { loss, count } = read(nextTokenLoss(logits, tokens, mask));
    assert.equal(count, 2);
    assert.ok(Math.abs(loss - 2 * Math.log(4)) < 1e-5);
    tf.dispose([logits, tokens, mask]);
  });

  it('equals tfjs’s one-hot softmaxCrossEntropy, mean over the real targets', () => {
    const logits = tf.randomNormal([3, 5, 7], 0, 2, 'float32', 1);
    const tokens = tf.tensor2d([[1, 2, 3, 4, 5], [6, 0, 1, 0, 0], [2, 2, 2, 0, 0]], [3, 5], 'int32');
    const mask = tf.tensor2d([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 0, 0]]);
    const { loss, count } = read(nextTokenLoss(logits, tokens, mask));
    const oneHot = tf.oneHot(tf.reshape(tf.slice(tokens, [0, 1], [3, 4]), [-1]), 7);
    const weights = tf.reshape(tf.slice(mask, [0, 1], [3, 4]), [-1]);
    const dense = tf.losses.softmaxCrossEntropy(oneHot, tf.reshape(tf.slice(logits, [0, 0, 0], [3, 4, 7]), [12, 7]), weights);
    assert.equal(count, 8);
    assert.ok(Math.abs(loss / count - dense.dataSync()[0]) < 1e-5);
    tf.dispose([logits, tokens, mask, oneHot, weights, dense]);
  });

  it('property: loss and count equal a plain loop, for random shapes, tokens and right padding', () => {
    const run = fc.record({ batch: fc.integer({ min: 1, max: 4 }), time: fc.integer({ min: 2, max: 7 }), vocabulary: fc.integer({ min: 2, max: 6 }), seed: fc.nat(1000) })
      .chain((s) => fc.record({
        shape: fc.constant(s),
        lengths: fc.array(fc.integer({ min: 1, max: s.time }), { minLength: s.batch, maxLength: s.batch }),
        tokens: fc.array(fc.array(fc.integer({ min: 0, max: s.vocabulary - 1 }), { minLength: s.time, maxLength: s.time }), { minLength: s.batch, maxLength: s.batch }),
      }));
    fc.assert(fc.property(run, ({ shape, lengths, tokens }) => {
      const mask = lengths.map((n) => Array.from({ length: shape.time }, (_, t) => (t < n ? 1 : 0)));
      const logits = tf.randomNormal([shape.batch, shape.time, shape.vocabulary], 0, 3, 'float32', shape.seed);
      const ids = tf.tensor2d(tokens, [shape.batch, shape.time], 'int32');
      const m = tf.tensor2d(mask);
      const actual = read(nextTokenLoss(logits, ids, m));
      const expected = loopLoss(logits.arraySync() as number[][][], tokens, mask);
      tf.dispose([logits, ids, m]);
      assert.equal(actual.count, expected.count);
      assert.ok(Math.abs(actual.loss - expected.loss) <= 1e-5 * Math.max(1, expected.loss), `${actual.loss} vs ${expected.loss}`);
    }), fcParameters(60));
  });

  it('gives the accumulator token-exact windows: two ragged micro-batches equal one batch', () => {
    const embedding = tf.variable(tf.randomNormal([5, 5], 0, 1, 'float32', 3));
    const tokens = tf.tensor2d([[1, 2, 3, 4], [1, 3, 0, 0], [1, 0, 0, 0], [1, 4, 4, 2]], [4, 4], 'int32');
    const mask = tf.cast(tf.greater(tokens, 0), 'float32');
    const lossOf = (rows: number[]) => {
      const ids = tf.gather(tokens, rows) as tf.Tensor2D;
      return nextTokenLoss(tf.reshape(tf.matMul(tf.oneHot(tf.reshape(ids, [-1]), 5), embedding), [rows.length, 4, 5]), ids, tf.gather(mask, rows));
    };
    const before = embedding.dataSync().slice();
    const sgd = tf.train.sgd(1);
    sgd.minimize(() => { const { loss, count } = lossOf([0, 1, 2, 3]); return tf.div(loss, count) as tf.Scalar; }, false, [embedding]);
    const reference = embedding.dataSync().slice();
    embedding.assign(tf.tensor2d(before, [5, 5]));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [embedding] });
    acc.step(() => lossOf([0, 1]));
    const { applied } = acc.step(() => lossOf([2, 3]));
    assert.ok(applied);
    const gap = Math.max(...embedding.dataSync().map((v, i) => Math.abs(v - reference[i])));
    assert.ok(gap < 1e-6, `gap ${gap}`);
    acc.dispose();
    sgd.dispose();
    tf.dispose([embedding, tokens, mask]);
  });

  it('leaks nothing', () => {
    const logits = tf.zeros([2, 3, 4]);
    const tokens = tf.zeros([2, 3], 'int32');
    assertNoLeak(() => tf.dispose(Object.values(nextTokenLoss(logits, tokens))), 3);
    tf.dispose([logits, tokens]);
  });

  it('names what it accepts', () => {
    const logits = tf.zeros([2, 3, 4]);
    const tokens = tf.zeros([2, 3], 'int32');
    assertThrowsMentioning(() => nextTokenLoss(tf.zeros([2, 3]), tokens), 'nextTokenLoss', 'logits', '[batch, time, vocabulary]');
    assertThrowsMentioning(() => nextTokenLoss(logits, tf.zeros([2, 3])), 'tokens', 'int32 tensor [2, 3]');
    assertThrowsMentioning(() => nextTokenLoss(logits, tokens, tf.ones([2, 4])), 'mask', '[2, 3]');
    assertThrowsMentioning(() => nextTokenLoss(tf.zeros([2, 1, 4]), tf.zeros([2, 1], 'int32')), 'at least 2 positions');
    tf.dispose([logits, tokens]);
  });
});
