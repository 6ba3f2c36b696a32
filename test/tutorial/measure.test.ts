import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measureAccumulation, median, peakBytesAbove, stepFlops, timeCall, timeCalls } from '../../src/tutorial/measure';
import { cnn, mlp, simpleNet } from '../../src/tutorial/models';
import { assertThrowsMentioning, batch, denseModel, split } from '../helpers';

describe('measuring accumulation', () => {
  it('timeCall warms up, then times at least minReps calls', () => {
    let calls = 0;
    const t = timeCall(() => calls++, { seconds: 0, warmup: 2, warmupSeconds: 0, minReps: 5 });
    assert.equal(t.reps, 5);
    assert.equal(calls, 7);
    assert.equal(t.samples.length, 5);
    assert.ok(t.minMs <= t.ms && t.ms <= t.maxMs && t.wallMs >= 0 && t.cpuMs >= 0);
  });

  it('median of odd and even lists', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  it('timeCalls gives each function its turn in every round', () => {
    const order: string[] = [];
    const [a, b] = timeCalls([() => order.push('a'), () => order.push('b')], { seconds: 0, warmup: 1, warmupSeconds: 0, minReps: 3, rounds: 3 });
    // One warm-up each, then a, b, a, b, a, b: turns, not one block after the other.
    assert.deepEqual(order, ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b']);
    assert.equal(a.reps, 3);
    assert.equal(b.reps, 3);
  });

  it('a slow function shows as slow next to a fast one, on a clock only the functions move', () => {
    // A spin on the real clock failed under load; this clock moves only when a timed function runs.
    let clock = 0;
    const takes = (ms: number) => () => void (clock += ms);
    const [slow, fast] = timeCalls([takes(2), takes(0.2)], { seconds: 0.05, warmup: 1, warmupSeconds: 0, rounds: 2, now: () => clock });
    assert.equal(slow.ms, 2);
    assert.ok(Math.abs(fast.ms - 0.2) < 1e-9, `${fast.ms}`);
    // 0.025 s a round: 13 calls of 2 ms reach it, 125 calls of 0.2 ms (floating-point sums) about.
    assert.equal(slow.reps, 2 * 13);
    assert.ok(fast.reps >= 2 * 125 && fast.reps <= 2 * 126, `${fast.reps}`);
  });

  it('peakBytesAbove counts what a function allocates, even if it frees it', async () => {
    // 1,000 float32 values = 4,000 bytes, allocated and freed inside.
    const peak = await peakBytesAbove(() => tf.tidy(() => { tf.zeros([1000]).add(1); }));
    assert.ok(peak >= 4000, `${peak}`);
  });

  it('measures a window against one big step, and leaks nothing', async () => {
    const data = batch(32);
    const microBatches = split(data, [8, 8, 8, 8]);
    const model = denseModel();
    const before = tf.memory().numTensors;
    const m = await measureAccumulation({ model, loss: tf.losses.meanSquaredError, microBatches, batch: data, timing: { seconds: 0.01, warmup: 1, warmupSeconds: 0 } });
    assert.equal(tf.memory().numTensors, before);
    assert.ok(m.windowMs > 0 && m.stepMs > 0 && m.bookkeepingMs >= 0);
    assert.equal(m.timeRatio, m.windowMs / m.stepMs);
    assert.equal(m.windowMs, m.window.ms);
    // The parts by hand, timed in the same turns as the window: the accumulator overhead, read directly.
    assert.ok(m.partsMs > 0 && m.parts.reps >= 1 && m.parts.minMs <= m.partsMs, JSON.stringify(m.parts));
    assert.equal(m.partsRatio, m.windowMs / m.partsMs);
    assert.ok(m.window.minMs <= m.windowMs && m.windowMs <= m.window.maxMs);
    assert.equal(m.parameterBytes, 4 * (10 * 8 + 8 + 8 + 1));
    assert.ok(m.peakBytes.window > 0 && m.peakBytes.step > 0 && m.peakBytes.microStep > 0);
    assert.ok(m.memoryRatio <= 1.1 * m.memoryRatioTheory, `${m.memoryRatio} vs ${m.memoryRatioTheory}`);
    model.dispose();
  });

  it('rejects bad input', async () => {
    const data = batch(8);
    const model = denseModel();
    const microBatches = split(data, [4, 4]);
    const args = { model, loss: tf.losses.meanSquaredError, microBatches, batch: data };
    await assert.rejects(measureAccumulation({ ...args, model: {} as never }), /model must be a tf.LayersModel/);
    await assert.rejects(measureAccumulation({ ...args, microBatches: [] }), /microBatches must be a non-empty array/);
    await assert.rejects(measureAccumulation({ ...args, microBatches: split(data, [3, 5]) }), /micro-batches of one size/);
    await assert.rejects(measureAccumulation({ ...args, batch: split(data, [4, 4])[0] }), /batch must be a batch of 8 samples/);
    assertThrowsMentioning(() => timeCall(() => {}, { seconds: -1 }), 'seconds');
    assertThrowsMentioning(() => timeCalls([() => {}], { rounds: 0 }), 'rounds');
    model.dispose();
  });

  it('stepFlops counts the MLP by hand: 784x256 + 256x256 + 256x10 multiply-adds per sample', () => {
    const model = mlp({ normalization: 'none', seed: 0 });
    const f = stepFlops(model, 64);
    assert.equal(f.forwardMacsPerSample, 784 * 256 + 256 * 256 + 256 * 10);
    assert.equal(f.firstLayerMacsPerSample, 784 * 256);
    // Forward, weight gradients, input gradients of the two upper layers only.
    assert.equal(f.trainingFlops, 2 * 64 * (3 * 268_800 - 200_704));
    model.dispose();
  });

  it('stepFlops counts convolutions per output position', () => {
    const model = cnn({ normalization: 'batch', seed: 0 });
    const f = stepFlops(model, 16);
    const conv1 = 28 * 28 * 3 * 3 * 1 * 16;
    const conv2 = 14 * 14 * 3 * 3 * 16 * 32;
    const dense = 7 * 7 * 32 * 10;
    assert.equal(f.forwardMacsPerSample, conv1 + conv2 + dense, 'BatchNorm scales are not counted');
    assert.equal(f.trainingFlops, 2 * 16 * (3 * (conv1 + conv2 + dense) - conv1));
    model.dispose();
  });

  it('stepFlops of the one-layer SimpleNet has no input gradient at all', () => {
    const before = tf.memory().numTensors;
    const model = simpleNet({ seed: 0 });
    assert.equal(stepFlops(model, 1).trainingFlops, 2 * 2 * 10, 'forward and weight gradient only');
    model.dispose();
    assert.equal(tf.memory().numTensors, before);
  });
});
