import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { causalMask, causalSelfAttention } from '../../../src/tutorial/lm/attention';
import { assertNoLeak, assertThrowsMentioning } from '../../helpers';

/** Attention of one head by loops: the reference. */
function loopAttention(q: number[][], k: number[][], v: number[][]): number[][] {
  return q.map((qi, i) => {
    const scores = k.slice(0, i + 1).map((kj) => kj.reduce((s, x, d) => s + x * qi[d], 0) / Math.sqrt(qi.length));
    const max = Math.max(...scores);
    const w = scores.map((s) => Math.exp(s - max));
    const total = w.reduce((a, b) => a + b, 0);
    return v[0].map((_, d) => w.reduce((s, wj, j) => s + (wj / total) * v[j][d], 0));
  });
}

describe('causalSelfAttention', () => {
  it('the mask lets a position see itself and the past only', () => {
    assert.deepEqual(causalMask(3).arraySync(), [[0, -1e9, -1e9], [0, 0, -1e9], [0, 0, 0]]);
  });

  it('equals a loop, head by head, and never looks ahead', () => {
    const [batch, time, heads, depth] = [2, 5, 2, 3];
    const qkv = tf.randomNormal([batch, time, 3 * heads * depth], 0, 1, 'float32', 4);
    const out = causalSelfAttention(qkv, heads).arraySync() as number[][][];
    const values = qkv.arraySync() as number[][][];
    for (let b = 0; b < batch; b++) {
      for (let h = 0; h < heads; h++) {
        const part = (p: number) => values[b].map((row) => row.slice(p * heads * depth + h * depth, p * heads * depth + (h + 1) * depth));
        const expected = loopAttention(part(0), part(1), part(2));
        expected.forEach((row, t) => row.forEach((x, d) => assert.ok(Math.abs(out[b][t][h * depth + d] - x) < 1e-5)));
      }
    }
    // Changing the last position changes no earlier output.
    const changed = tf.concat([tf.slice(qkv, [0, 0, 0], [batch, time - 1, -1]), tf.ones([batch, 1, 3 * heads * depth])], 1);
    const gap = tf.max(tf.abs(tf.sub(tf.slice(causalSelfAttention(changed, heads), [0, 0, 0], [batch, time - 1, -1]), tf.slice(tf.tensor(out), [0, 0, 0], [batch, time - 1, -1])))).dataSync()[0];
    assert.equal(gap, 0);
    tf.dispose([qkv, changed]);
  });

  it('leaks nothing and names what it accepts', () => {
    const qkv = tf.ones([1, 3, 12]);
    assertNoLeak(() => causalSelfAttention(qkv, 2).dispose(), 2);
    assertThrowsMentioning(() => causalSelfAttention(qkv, 3), 'causalSelfAttention', 'heads', 'divisor of the width (4)');
    assertThrowsMentioning(() => causalSelfAttention(tf.ones([1, 3, 4]), 1), 'qkv', '3 · width');
    qkv.dispose();
  });
});
