/**
 * Where a 2-worker window's CPU time goes, thread by thread (Linux), after a chosen warm-up:
 *
 *     node --experimental-wasm-relaxed-simd --import tsx scripts/bench/parallelThreads.ts [warm-up windows] [timed windows]
 *
 * Reads every thread's on-CPU nanoseconds from /proc/self/task/<tid>/schedstat before and after
 * the timed windows of the bench's CNN window (8 micro-batches of 16) on 2 workers, and prints
 * milliseconds per window for the main thread, the two worker threads (the ones with the most
 * time) and the rest of the process (V8's platform threads: JIT compilation, GC helpers). Run it
 * with V8 flags (e.g. --no-concurrent-recompilation) to see which background work moves where.
 */
import * as tf from '@tensorflow/tfjs';
import { readdirSync, readFileSync } from 'node:fs';
import { selectBackend } from '../../src/backend/index';
import { ParallelAccumulator } from '../../src/parallel/index';
import { cnn } from '../../src/tutorial/index';

const CONFIG = {
  warmupWindows: Number(process.argv[2] ?? 3),
  windows: Number(process.argv[3] ?? 6),
  accumulationSteps: 8,
  microBatchSize: 16,
  workers: 2,
};

/** On-CPU nanoseconds of every thread of this process, by thread id. */
function threadTimes(): Map<string, number> {
  const times = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      times.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return times;
}

async function main(): Promise<void> {
  await selectBackend('wasm', { onNotice: () => {} });
  const model = cnn({ normalization: 'batch' });
  const { accumulationSteps: steps, microBatchSize: size } = CONFIG;
  const batches = Array.from({ length: steps }, (_, k) =>
    tf.tidy(() => ({
      xs: tf.randomNormal([size, 28, 28, 1], 0, 1, 'float32', k).dataSync() as Float32Array,
      ys: tf.oneHot(tf.randomUniform([size], 0, 10, 'int32', 1000 + k), 10).toFloat().dataSync() as Float32Array,
    })),
  );
  const acc = await ParallelAccumulator.create({ model, optimizer: tf.train.sgd(0.01), accumulationSteps: steps, loss: 'softmaxCrossEntropy', workers: CONFIG.workers, backend: 'wasm' });
  const window = async () => {
    for (const b of batches) await acc.step({ xs: { values: b.xs.slice(), shape: [size, 28, 28, 1] }, ys: { values: b.ys.slice(), shape: [size, 10] } });
  };
  for (let i = 0; i < CONFIG.warmupWindows; i++) await window();
  const before = threadTimes();
  for (let i = 0; i < CONFIG.windows; i++) await window();
  const after = threadTimes();
  await acc.dispose();
  const perWindow = [...after].map(([tid, ns]) => ({ tid, ms: (ns - (before.get(tid) ?? 0)) / 1e6 / CONFIG.windows }));
  const main = perWindow.find((t) => t.tid === String(process.pid))?.ms ?? 0;
  const others = perWindow.filter((t) => t.tid !== String(process.pid)).sort((a, b) => b.ms - a.ms);
  const workers = others.slice(0, CONFIG.workers);
  const rest = others.slice(CONFIG.workers).reduce((s, t) => s + t.ms, 0);
  console.log(`warm-up ${CONFIG.warmupWindows} windows, ${CONFIG.windows} timed; CPU ms per window:`);
  console.log(`main thread ${main.toFixed(1)}; workers ${workers.map((w) => w.ms.toFixed(1)).join(' and ')}; the rest of the process ${rest.toFixed(1)}; total ${(main + rest + workers.reduce((s, w) => s + w.ms, 0)).toFixed(1)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
