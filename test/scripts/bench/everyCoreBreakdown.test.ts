import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { loadNativeBlas } from '../../../src/backend/index';
import type { RoundReport } from '../../../src/parallel/results';
import { simpleNet } from '../../../src/tutorial/index';
import type { StepBreakdown } from '../../../scripts/bench/benchNative';
import { everyCoreBreakdownTable, meanBreakdown, profileWorkers, roundMedians, type EveryCoreBreakdown } from '../../../scripts/bench/everyCoreBreakdown';

const worker = (computeMs: number, cpuMs: number) => ({ computeMs, unpackMs: 0, packMs: 0, idleMs: 0, gcMs: 0, messages: 3, microBatches: 2, cpuMs, runQueueMs: computeMs - cpuMs });
const round = (compute: number[], reduceMs: number): RoundReport => ({
  losses: [],
  meanLoss: 0,
  timing: { computeMs: compute, waitMs: 0, packMs: 0, unpackMs: 0, reduceMs, updateMs: 1, broadcastMs: 0.5 },
  bytes: { microBatches: 0, gradients: 0, weights: 0 },
  workers: compute.map((c) => worker(c, c - 1)),
});

test('roundMedians: the busiest worker of each window, medians over windows; null without windows', () => {
  const m = roundMedians([round([10, 12], 2), round([9, 8], 4), round([11, 14], 3)]);
  assert.deepEqual(m, { windows: 3, computeMs: 12, workerCpuMs: 11, runQueueMs: 1, reduceMs: 3, updateMs: 1, broadcastMs: 0.5 });
  assert.equal(roundMedians([]), null);
});

// A micro-batch of `wallMs` with its kernels timed (1 ms less without the timers): `blasMs` in the BLAS, 1 ms in other products, 2 in elementwise kernels.
const part = (wallMs: number, blasMs: number): StepBreakdown => ({ wallMs, rowMs: wallMs - 1, blasMs, copiesMs: 1, elementwiseMs: 2, dispatchMs: wallMs - blasMs - 3, topKernels: [] });

test('everyCoreBreakdownTable: the window by the round report, and the micro-batch alone and side by side; nothing without a missed target', () => {
  const b: EveryCoreBreakdown = {
    id: 'cnn-window-4x16-native',
    label: 'CNN window',
    option: 'ParallelAccumulator, 2 workers x 1 BLAS thread',
    windowMs: 20,
    torchMs: 10,
    target: 1.3,
    round: { windows: 5, computeMs: 16, workerCpuMs: 15, runQueueMs: 1, reduceMs: 1, updateMs: 0.5, broadcastMs: 0.5 },
    workers: { alone: part(6, 2), together: [part(9, 4), part(7, 2)] },
    perWorker: 2,
  };
  const lines = everyCoreBreakdownTable({ everyCoreBreakdowns: [b] });
  const text = lines.join('\n');
  assert.match(text, /takes 20\.00 ms per window against PyTorch's 10\.00 at every core\n\(2\.00 x; the target ≤ 1\.3 x needs 7\.00 ms less\)/);
  assert.ok(lines.includes('| 20.00 | 16.00 (80%) | 15.00, 1.00 | 1.00 (5%) | 0.50 (3%) | 0.50 (3%) | 2.00 (10%) |'), text);
  // Without and with the kernel timers, then the shares of the latter.
  assert.ok(lines.includes('| one worker alone | 5.00 | 6.00 | 2.00 (33%) | 1.00 (17%) | 2.00 (33%) | 1.00 (17%) |'), text);
  assert.ok(lines.includes('| 2 workers at once (mean) | 7.00 | 8.00 | 3.00 (38%) | 1.00 (13%) | 2.00 (25%) | 2.00 (25%) |'), text);
  assert.match(text, /a micro-batch takes 1\.33 x its time alone: BLAS 1\.50 x, other products 1\.00 x, elementwise 1\.00 x, dispatch 2\.00 x\./);
  assert.deepEqual(everyCoreBreakdownTable({ everyCoreBreakdowns: [] }), []);
  assert.deepEqual(everyCoreBreakdownTable({}), []);
  assert.deepEqual([meanBreakdown([part(9, 4), part(7, 2)]).rowMs, meanBreakdown([part(9, 4), part(7, 2)]).wallMs], [7, 8]);
});

test('profileWorkers runs the workers’ micro-batch in worker threads, alone and side by side, and its parts add up', { skip: !loadNativeBlas().available && 'the native addon is not built' }, async () => {
  const model = simpleNet({ seed: 1 });
  const xs = tf.randomNormal([16, 10], 0, 1, 'float32', 1);
  const ys = tf.randomNormal([16, 1], 0, 1, 'float32', 2);
  const before = tf.memory().numTensors;
  try {
    const packed = [{ xs: { values: Float32Array.from(xs.dataSync()), shape: [16, 10] }, ys: { values: Float32Array.from(ys.dataSync()), shape: [16, 1] } }];
    const p = await profileWorkers({ model, microBatches: packed, loss: 'meanSquaredError', workers: 2, calls: 3, warmup: 1 });
    assert.equal(p.together.length, 2);
    for (const b of [p.alone, ...p.together]) {
      assert.ok(b.wallMs > 0 && b.rowMs > 0 && b.blasMs > 0, JSON.stringify(b));
      // The parts are measured in the same calls, so they add up to their wall time.
      const sum = b.blasMs + b.copiesMs + b.elementwiseMs + b.dispatchMs;
      assert.ok(Math.abs(sum - b.wallMs) < 1e-6 * Math.max(1, b.wallMs), `parts ${sum} against ${b.wallMs}`);
      assert.ok(b.elementwiseMs > 0 && b.dispatchMs > 0, 'the other kernels and the engine take time too');
    }
    assert.equal(tf.memory().numTensors, before, 'the main thread keeps no tensor of the run');
  } finally {
    tf.dispose([xs, ys]);
    model.dispose();
  }
});

test('timeKernels times the kernels that ran, by name, and restores the registry', async () => {
  const { timeKernels } = await import('../../../scripts/bench/benchNative');
  const backend = tf.getBackend();
  const before = tf.getKernelsForBackend(backend).map((k) => k.kernelFunc);
  const timed = timeKernels();
  try {
    tf.tidy(() => tf.matMul(tf.ones([8, 8]), tf.ones([8, 8])).relu().sum().dataSync());
  } finally {
    timed.restore();
  }
  for (const name of ['BatchMatMul', 'Relu', 'Sum']) assert.ok((timed.perKernel.get(name) ?? -1) >= 0 && timed.perKernel.has(name), `${name}: ${[...timed.perKernel.keys()]}`);
  assert.ok(!timed.perKernel.has('Conv2D'), 'a kernel that did not run is not listed');
  assert.deepEqual(tf.getKernelsForBackend(backend).map((k) => k.kernelFunc), before, 'the original kernel functions are back');
});
