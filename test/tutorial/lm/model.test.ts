import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../../src/core/gradientAccumulator';
import { nextTokenLoss } from '../../../src/core/nextTokenLoss';
import { isBiasOrNormalization } from '../../../src/core/accumulatorArgs';
import { TinyGpt } from '../../../src/tutorial/lm/model';
import { weightsOf } from '../../../src/tutorial/weights';
import { assertNoLeak, assertThrowsMentioning } from '../../helpers';

const small = { vocabularySize: 7, contextLength: 8, width: 8, heads: 2, layers: 2 };

describe('TinyGpt', () => {
  it('gives logits [batch, time, vocabulary] and counts its weights', () => {
    const model = new TinyGpt(small);
    const logits = model.logits(tf.tensor2d([[1, 2, 3], [1, 4, 0]], [2, 3], 'int32'));
    assert.deepEqual(logits.shape, [2, 3, 7]);
    // embeddings 7·8 + 8·8; per block 2·(8+8) norms + 8·24+24 + 8·8+8 + 8·32+32 + 32·8+8; final norm 16; head 8·7+7
    const block = 32 + 216 + 72 + 288 + 264;
    assert.equal(model.parameterCount, 56 + 64 + 2 * block + 16 + 63);
    assert.equal(model.namedWeights().length, 2 + 2 * 12 + 4);
    logits.dispose();
    model.dispose();
  });

  it('starts from its seed: the same seed, the same weights; another seed, others', () => {
    const [a, b, c] = [0, 0, 1].map((seed) => new TinyGpt({ ...small, seed }));
    assert.deepEqual(weightsOf(a.trainableWeights), weightsOf(b.trainableWeights));
    assert.notDeepEqual(weightsOf(a.trainableWeights), weightsOf(c.trainableWeights));
    [a, b, c].forEach((m) => m.dispose());
  });

  it('is causal: a later token changes no earlier logit', () => {
    const model = new TinyGpt(small);
    const first = model.logits(tf.tensor2d([[1, 2, 3, 4]], [1, 4], 'int32'));
    const second = model.logits(tf.tensor2d([[1, 2, 3, 6]], [1, 4], 'int32'));
    const gap = tf.max(tf.abs(tf.sub(tf.slice(first, [0, 0, 0], [1, 3, 7]), tf.slice(second, [0, 0, 0], [1, 3, 7])))).dataSync()[0];
    assert.equal(gap, 0);
    tf.dispose([first, second]);
    model.dispose();
  });

  it('decays embeddings and kernels under AdamW’s usual rule, not biases or normalization', () => {
    const model = new TinyGpt(small);
    const decayed = model.namedWeights().filter((w) => !isBiasOrNormalization(w.variable)).map((w) => w.name);
    assert.deepEqual(decayed, model.namedWeights().map((w) => w.name).filter((n) => /embedding|(qkv|projection|hidden|output|head)\.weight$/.test(n)));
    model.dispose();
  });

  it('trains with the accumulator without leaking, and dispose frees every weight', () => {
    const before = tf.memory().numTensors;
    const model = new TinyGpt(small);
    const tokens = tf.tensor2d([[1, 2, 3, 0], [1, 5, 0, 0]], [2, 4], 'int32');
    const mask = tf.tidy(() => tf.cast(tf.greater(tokens, 0), 'float32')) as tf.Tensor2D;
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.01), accumulationSteps: 2, weightDecay: { rate: 0.1 }, clipNorm: 1 });
    const step = () => acc.step(() => nextTokenLoss(model.logits(tokens), tokens, mask));
    step(); // the first window creates the accumulators and Adam's slots
    assertNoLeak(step, 4);
    acc.dispose();
    tf.dispose([tokens, mask]);
    model.dispose();
    assert.equal(tf.memory().numTensors, before);
  });

  it('names what it accepts', () => {
    assertThrowsMentioning(() => new TinyGpt({ ...small, heads: 3 }), 'TinyGpt', 'heads', 'divisor of width (8)');
    assertThrowsMentioning(() => new TinyGpt({ ...small, layer: 2 } as never), 'TinyGpt', 'layer');
    const model = new TinyGpt(small);
    assertThrowsMentioning(() => model.logits(tf.zeros([1, 9], 'int32') as tf.Tensor2D), 'tokens', 'time <= 8');
    assertThrowsMentioning(() => model.block(2, tf.zeros([1, 2, 8]) as tf.Tensor3D), 'TinyGpt.block', '[0, 2)');
    model.dispose();
  });
});
