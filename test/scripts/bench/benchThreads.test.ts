import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { busiestThreadNs, busyThreads, cpuPerWall, taskCpuNs } from '../../../scripts/bench/benchThreads';

const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/**
 * Spins until the busiest thread since `before` has had `ms` of CPU time. Not `ms` of wall time:
 * on a loaded machine (idle run B, load 13-18) 300 ms of wall gave the spinner so little CPU that
 * V8's own threads (compiler, GC) came to over a quarter of it and counted as busy: 3 threads.
 */
function spinCpu(before: Map<string, number> | null, ms: number): void {
  while ((busiestThreadNs(before, taskCpuNs()) ?? Infinity) < ms * 1e6) spin(5);
}

/** Busy threads and CPU/wall while the main thread spins for `ms` of CPU time, with `workers` spinning workers beside it (until terminated). */
async function measure(workers: number, ms: number): Promise<{ busy: number | null; cpu: number | null }> {
  const started = Array.from({ length: workers }, () => new Worker('for (;;);', { eval: true }));
  await Promise.all(started.map((w) => new Promise((resolve) => w.once('online', resolve))));
  const before = taskCpuNs();
  const start = performance.now();
  spinCpu(before, ms);
  const after = taskCpuNs();
  const wallNs = (performance.now() - start) * 1e6;
  await Promise.all(started.map((w) => w.terminate()));
  return { busy: busyThreads(before, after), cpu: cpuPerWall(before, after, wallNs) };
}

const skip = taskCpuNs() === null ? 'no /proc' : false;

test('one spinning thread counts as one busy thread', { skip }, async () => {
  const { busy, cpu } = await measure(0, 300);
  assert.equal(busy, 1);
  // Above 0 (a busy machine may give the spinner a small share of the wall time), and no more than
  // one core's worth: one thread cannot run on two cores at once.
  assert.ok(cpu !== null && cpu > 0 && cpu < 1.5, `${cpu}`);
});

test('a spinning worker beside it counts as a second busy thread', { skip }, async () => {
  const two = await measure(1, 300);
  assert.equal(two.busy, 2);
});
