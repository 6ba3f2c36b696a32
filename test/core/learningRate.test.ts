import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { learningRateOf, setLearningRate, stepDecay, warmupCosine } from '../../src/core/learningRate';
import { assertThrowsMentioning } from '../helpers';

describe('learning-rate schedules', () => {
  it('warmupCosine: linear warm-up, half cosine, then the floor (hand-checked values)', () => {
    const schedule = warmupCosine({ peak: 1, warmupSteps: 4, totalSteps: 8, floor: 0.2 });
    // Warm-up: 1/4, 2/4, 3/4, 4/4; then 0.2 + 0.8·(1 + cos(π·k/4))/2 for k = 0..3; then 0.2.
    const expected = [0.25, 0.5, 0.75, 1, 1, 0.2 + 0.4 * (1 + Math.SQRT1_2), 0.6, 0.2 + 0.4 * (1 - Math.SQRT1_2), 0.2, 0.2];
    expected.forEach((e, step) => assert.ok(Math.abs(schedule(step) - e) < 1e-12, `step ${step}: ${schedule(step)} vs ${e}`));
  });

  it('stepDecay: initial · factor^floor(step / every)', () => {
    const schedule = stepDecay({ initial: 0.1, factor: 0.5, every: 3 });
    assert.deepEqual([0, 2, 3, 5, 6].map(schedule), [0.1, 0.1, 0.05, 0.05, 0.025]);
  });

  it('refuse bad arguments by name', () => {
    assertThrowsMentioning(() => warmupCosine({ peak: 1, totalSteps: 4, warmupSteps: 4 }), 'totalSteps', 'above warmupSteps');
    assertThrowsMentioning(() => warmupCosine({ peak: 0, totalSteps: 4 }), 'peak');
    assertThrowsMentioning(() => warmupCosine({ peak: 1, totalSteps: 4, warmup: 2 } as never), 'unknown key "warmup"');
    assertThrowsMentioning(() => stepDecay({ initial: 1, every: 0 }), 'every', 'positive integer');
    assertThrowsMentioning(() => stepDecay({ initial: 1, every: 2, factor: 2 }), 'factor', '(0, 1]');
  });

  it('set the rate of SGD, momentum (precomputed tensors) and Adam, leaking nothing', () => {
    for (const optimizer of [tf.train.sgd(1), tf.train.momentum(1, 0.9), tf.train.adam(1)]) {
      const tensors = tf.memory().numTensors;
      setLearningRate('test', optimizer, 0.25);
      assert.equal(learningRateOf(optimizer), 0.25);
      assert.equal(tf.memory().numTensors, tensors);
      // The rate is the one applied: one SGD-like step of gradient 1 from 0 moves by the rate.
      if (optimizer.getClassName() === 'SGD') {
        const w = tf.variable(tf.scalar(0));
        tf.tidy(() => optimizer.applyGradients({ [w.name]: tf.scalar(1) } as never));
        assert.equal(w.dataSync()[0], -0.25);
        w.dispose();
      }
      assertThrowsMentioning(() => setLearningRate('test', optimizer, Number.NaN), 'finite number');
      optimizer.dispose();
    }
  });
});
