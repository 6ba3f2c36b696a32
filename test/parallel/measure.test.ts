import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { mlp } from '../../src/tutorial/models';
import { measureParallelWindow } from '../../src/parallel/measure';

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

describe('measureParallelWindow', () => {
  it('reports the bytes a window moves as the scaling model counts them, and frees everything', async () => {
    const model = () => mlp({ normalization: 'none', inputShape: [4, 4, 1], classes: 3 });
    const tensors = tf.memory().numTensors;
    const m = await measureParallelWindow({ model, accumulationSteps: 4, microBatchSize: 2, workers: [2], windows: 1, warmupWindows: 0 });
    assert.equal(tf.memory().numTensors, tensors);
    // 16 -> 256 -> 256 -> 3 with biases (no normalization).
    const parameters = 16 * 256 + 256 + 256 * 256 + 256 + 256 * 3 + 3;
    assert.equal(m.parameters, parameters);
    const [once, everyRound] = m.parallel;
    assert.deepEqual([once.sync, everyRound.sync], ['window', 'round']);
    const batchBytes = 4 * 2 * (16 + 3) * 4; // 4 micro-batches of 2 samples, 16 inputs and 3 labels, float32
    // Once per window: both workers send their sums once, and both read the new weights once.
    assert.deepEqual(once.bytes, { microBatches: batchBytes, gradients: 2 * parameters * 4, weights: 2 * parameters * 4, total: batchBytes + 4 * parameters * 4 });
    // Every round of 2: two reductions of both workers' sums, still one update.
    assert.equal(everyRound.bytes.gradients, 2 * 2 * parameters * 4);
    assert.equal(everyRound.bytes.weights, 2 * parameters * 4);
    for (const p of m.parallel) {
      assert.ok(p.windowMs > 0 && p.speedup > 0 && p.coresUsed > 0 && p.cpuMs > 0 && p.split.computeMs > 0);
      // The slowest worker's compute and the update are serial within the window. Packing is not:
      // a worker that finished first packs while the slowest computes (a CI run under load once
      // saw compute + transfer + update exceed the window that way).
      assert.ok(p.split.computeMs + p.split.updateMs <= p.windowMs + 1e-6, 'compute and update do not exceed the window');
      assert.ok(p.split.transferMs <= p.windowMs + 1e-6 && p.split.otherMs >= 0, 'transfer does not exceed the window');
      // The busiest worker of 2 computed half the window's micro-batches, inside the window's time.
      assert.equal(p.inWorker.microBatches, 2);
      assert.ok(p.inWorker.computeMs > 0 && p.inWorker.computeMs <= p.windowMs + 1e-6 && p.inWorker.gcMs >= 0 && p.inWorker.idleMs >= 0);
      assert.ok(Math.abs(p.inWorker.perMicroBatchMs * 2 - p.inWorker.computeMs) < 1e-9 && p.inWorker.computeInflation > 0);
      assert.ok(p.inWorker.messages >= 3, 'two micro-batches and a reduce at least');
      assert.ok(p.mainThread.cpuMs > 0 && p.mainThread.cpuMs <= p.cpuMs + 1e-6, 'the main thread is part of the process');
      assert.ok(p.warmup.windows === 0 && p.warmup.cpuMs < 5, `no warm-up asked for: ${JSON.stringify(p.warmup)}`);
      if (process.platform === 'linux') {
        // The window's CPU by thread: the parts add up to the total, the workers computed and the main thread worked.
        const c = p.cost!;
        const sum = c.microStepMs + c.copiesMs + c.messagesMs + c.mainThreadMs + c.otherThreadsMs;
        assert.ok(Math.abs(sum - c.totalMs) < 1e-6 || c.messagesMs === 0, JSON.stringify(c));
        assert.ok(c.microStepMs > 0 && c.mainThreadMs > 0 && c.copiesMs >= 0 && c.otherThreadsMs >= 0, JSON.stringify(c));
      }
    }
    if (process.platform === 'linux') {
      const c = m.singleThreadCost!;
      assert.ok(c.microStepMs > 0 && c.totalMs === c.microStepMs + c.otherThreadsMs && c.copiesMs === 0 && c.mainThreadMs === 0, JSON.stringify(c));
    }
  });

  it('rejects bad arguments by name', async () => {
    await assert.rejects(measureParallelWindow({ model: null as never }), /measureParallelWindow: model must be a function/);
    await assert.rejects(measureParallelWindow({ model: () => mlp({ normalization: 'none' }), workers: [0] }), /workers must be an array of positive integers/);
  });
});
