import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { describe, it } from 'node:test';
import { measureUpdatePeak } from '../../../src/tutorial/lm/memory';
import { CharTokenizer } from '../../../src/tutorial/lm/tokenizer';

describe('measureUpdatePeak: the peak memory of one update of a fresh TinyGpt', () => {
  const tokenizer = new CharTokenizer();
  const sentences = Array.from({ length: 16 }, (_, i) => 'the whale '.repeat(1 + (i % 3)));
  const base = { tokenizer, sentences, contextLength: 32, layers: 1 };

  it('grows with the micro-batch, not with the number of micro-batches, and leaves nothing behind', async () => {
    const before = tf.memory().numTensors;
    const one = await measureUpdatePeak({ ...base, microBatchSize: 2 });
    const window = await measureUpdatePeak({ ...base, microBatchSize: 2, accumulationSteps: 4 });
    const big = await measureUpdatePeak({ ...base, microBatchSize: 8 });
    assert.equal(tf.memory().numTensors, before);
    assert.equal(window.logicalBatchSize, 8);
    assert.ok(big.peakBytes > 2 * one.peakBytes, `${one.peakBytes} → ${big.peakBytes}`);
    assert.ok(Math.abs(window.peakBytes / one.peakBytes - 1) < 0.1, `${one.peakBytes} vs ${window.peakBytes}`);
    assert.equal(one.parameterBytes % 4, 0);
  });

  it('recomputation lowers the peak of a deep model', async () => {
    const kept = await measureUpdatePeak({ ...base, microBatchSize: 4, layers: 3 });
    const recomputed = await measureUpdatePeak({ ...base, microBatchSize: 4, layers: 3, recompute: true });
    assert.ok(recomputed.peakBytes < kept.peakBytes);
  });

  it('names what it accepts', async () => {
    await assert.rejects(measureUpdatePeak({ ...base, microBatchSize: 0 }), /measureUpdatePeak: microBatchSize must be a positive integer/);
    await assert.rejects(measureUpdatePeak({ ...base, microBatchSize: 1, steps: 2 } as never), /measureUpdatePeak/);
  });
});
