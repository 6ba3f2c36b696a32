import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { externalGradients } from '../../src/core/externalGradients';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { assertThrowsMentioning, assertUntouched, untouched } from '../helpers';

describe('addGradients checks every gradient against its variable (issue 23, item 14)', () => {
  it('a [3] or [6] gradient for a [2, 3] variable is refused by name and changes nothing; the next call works', async () => {
    const w = tf.variable(tf.ones([2, 3]));
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.1), accumulationSteps: 2, varList: [w] });
    const good = tf.ones([2, 3]);
    acc.addGradients({ [w.name]: good }, 4);
    const before = await untouched(acc, [w]);
    for (const shape of [[3], [6], [3, 2], [2, 3, 1]]) {
      const bad = tf.ones(shape);
      assertThrowsMentioning(() => acc.addGradients({ [w.name]: bad }, 4), `grads["${w.name}"]`, 'shape [2, 3]', `shape [${shape.join(', ')}]`);
      bad.dispose();
      await assertUntouched(acc, [w], before, `a [${shape}] gradient`);
    }
    const int = tf.ones([2, 3], 'int32');
    assertThrowsMentioning(() => acc.addGradients({ [w.name]: int }, 4), 'float32', 'int32');
    assertThrowsMentioning(() => acc.addGradients({ [w.name]: [1, 2, 3] as never }, 4), 'a live tf.Tensor', 'an array');
    int.dispose();
    await assertUntouched(acc, [w], before, 'a wrong dtype or a non-tensor');
    assert.equal(acc.addGradients({ [w.name]: good }, 4).applied, true, 'not wedged: the next good call completes the window');
    good.dispose();
    acc.dispose();
    w.dispose();
  });

  it('externalGradients maps names to variables and gives null where a gradient is missing', () => {
    const a = tf.variable(tf.zeros([2]));
    const b = tf.variable(tf.zeros([1]));
    const g = tf.ones([2]);
    const { handed, gradients } = externalGradients('X', { [a.name]: g }, [a, b]);
    assert.deepEqual(handed, [a, b]);
    assert.deepEqual(gradients, [g, null]);
    assertThrowsMentioning(() => externalGradients('X', { nowhere: g }, null), 'X: grads (key 0)', 'registered variables', '"nowhere"');
    tf.dispose([a, b, g]);
  });
});
