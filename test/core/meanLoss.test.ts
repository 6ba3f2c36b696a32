import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meanLossOf } from '../../src/core/lossGradient';

/**
 * The micro-step's mean loss is divided on the host (meanLossOf, lossGradient.ts), after the one
 * host read: it must be bit for bit the float32 ops it replaced, `tf.div(objective, by)` and, for
 * a `{ loss, count }` loss, `tf.div(objective, tf.mul(count, by))`, including 0, −0, subnormals,
 * huge values, a count of 0 and non-finite objectives.
 */

const f32 = fc.float({ noDefaultInfinity: false, noNaN: false });
const byArb = fc.oneof(fc.constantFrom(1, 0.25, 2 ** -6, 16 * 2 ** -6, 10 * 2 ** -6, 3), fc.float({ min: Math.fround(1e-30), max: Math.fround(1e30), noNaN: true }));
const countArb = fc.oneof(fc.constantFrom(0, 1, 7, 4096), fc.float({ min: 0, max: Math.fround(1e7), noNaN: true }));

function device(objective: number, by: number, count: number | null): number {
  return tf.tidy(() => {
    const divisor = count === null ? tf.scalar(by) : tf.mul(tf.scalar(count), by);
    return tf.div(tf.scalar(objective), divisor).dataSync()[0];
  });
}

describe('meanLossOf', () => {
  it('is bit for bit the float32 division it replaced, with and without a count', async () => {
    await tf.setBackend('cpu');
    fc.assert(
      fc.property(f32, byArb, countArb, fc.boolean(), (objective, by, count, perCount) => {
        const host = meanLossOf(objective, { by, perCount }, count);
        const expected = Math.fround(by) === 1 && !perCount ? objective : device(objective, by, perCount ? count : null);
        assert.ok(Object.is(host, expected) || (Number.isNaN(host) && Number.isNaN(expected)), `${objective} / (${perCount ? `${count} × ` : ''}${by}): host ${host}, device ${expected}`);
      }),
      { numRuns: 2000, seed: 35 },
    );
  });
});
