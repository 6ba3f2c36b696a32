import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { busyThreads, cpuPerWall, taskCpuNs } from '../../../scripts/bench/benchThreads';

const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** Busy threads and CPU/wall while the main thread spins for `ms`, with `workers` spinning workers beside it. */
async function measure(workers: number, ms: number): Promise<{ busy: number | null; cpu: number | null }> {
  const started = Array.from({ length: workers }, () => new Worker(`const end = Date.now() + ${ms + 200}; while (Date.now() < end);`, { eval: true }));
  spin(50); // let the workers start
  const before = taskCpuNs();
  const start = performance.now();
  spin(ms);
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
