import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParallelMeasurement, ParallelWindowTiming } from '../../../src/parallel/index';
import { formatWorkerCost } from '../../../scripts/bench/benchParallel';
import { HANG_MS } from '../../helpers/ceilings';

/** A measurement of 8 micro-batches: one thread 80 ms of CPU (4 of it in other threads), 2 workers 96 ms. */
function measurement(): ParallelMeasurement {
  const two = {
    workers: 2,
    sync: 'window',
    cost: { microStepMs: 72, copiesMs: 4, messagesMs: 4, mainThreadMs: 8, otherThreadsMs: 8, totalMs: 96 },
    warmup: { windows: 24, cpuMs: 2400 },
  } as unknown as ParallelWindowTiming;
  return {
    accumulationSteps: 8,
    singleThreadCost: { microStepMs: 76, copiesMs: 0, messagesMs: 0, mainThreadMs: 0, otherThreadsMs: 4, totalMs: 80 },
    singleThreadWarmup: { windows: 12, cpuMs: 1000 },
    parallel: [two],
  } as unknown as ParallelMeasurement;
}

test("formatWorkerCost: each part's CPU ms per micro-batch and share, beside one thread's, the total, and the warm-ups", () => {
  const lines = formatWorkerCost(measurement()).split('\n');
  assert.equal(lines[0], '| part, CPU ms per micro-batch (share) | one thread | 2 workers, once per window |');
  assert.ok(lines.includes('| the micro-step itself (forward, backward, adding into the sums) | 9.50 (95%) | 9.00 (75%) |'), lines.join('\n'));
  assert.ok(lines.includes('| copies in the workers (weight reads, packing the sums) | — | 0.50 (4%) |'));
  assert.ok(lines.includes("| the rest of the workers' threads (messages, event loop) | — | 0.50 (4%) |"));
  assert.ok(lines.includes('| the main thread besides (sending micro-batches, the reduce, the update, sending weights) | — | 1.00 (8%) |'));
  assert.ok(lines.includes("| other threads (V8's compilers and GC helpers, libuv) | 0.50 (5%) | 1.00 (8%) |"));
  assert.ok(lines.includes('| total (every thread) | 10.00 | 12.00 |'));
  assert.ok(lines.includes('| x one thread | 1 | 1.20 |'));
  assert.ok(lines.includes('Warm-up before the timed windows (process CPU, paid once per start): one thread 12 windows, 1000 ms; 2 workers, once per window 24 windows, 2400 ms.'));
  // Off Linux there is no per-thread clock: no table rather than a table of zeros.
  assert.equal(formatWorkerCost({ ...measurement(), singleThreadCost: null }), '');
});

test('benchParallel --quick prints the worker-cost rows, well-formed, and says whether it got two cores', { timeout: HANG_MS }, () => {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-parallel-')), 'parallel.json');
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', '..', 'scripts', 'bench', 'benchParallel.ts'), '--quick', '--no-torch'], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_PARALLEL_OUT: out },
    timeout: HANG_MS,
  });
  assert.equal(run.status, 0, run.stderr);
  const ms = '[0-9.]+ \\(\\d+%\\)';
  if (process.platform === 'linux') {
    assert.match(run.stdout, /^\| part, CPU ms per micro-batch \(share\) \| one thread \| 1 worker, once per window \| 1 worker, every round \| 2 workers, once per window \| 2 workers, every round \|$/m);
    assert.match(run.stdout, new RegExp(`^\\| the micro-step itself \\(forward, backward, adding into the sums\\) \\| ${ms} \\| ${ms} \\| ${ms} \\| ${ms} \\| ${ms} \\|$`, 'm'));
    assert.match(run.stdout, new RegExp(`^\\| copies in the workers \\(weight reads, packing the sums\\) \\| — \\| ${ms} \\| ${ms} \\| ${ms} \\| ${ms} \\|$`, 'm'));
    assert.match(run.stdout, /^\| x one thread \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$/m);
    assert.match(run.stdout, /^Warm-up before the timed windows \(process CPU, paid once per start\): one thread 1 windows, \d+ ms; 1 worker, once per window 1 windows, \d+ ms; .*2 workers, every round 2 windows, \d+ ms\.$/m);
  }
  assert.match(run.stdout, /Target: 2 workers ≥ 1\.7x one thread, .*; (met|not met|not judged) in this run\./);
  const json = JSON.parse(readFileSync(out, 'utf8'));
  for (const p of json.measurement.parallel) assert.ok(process.platform !== 'linux' || p.cost.totalMs > 0, JSON.stringify(p.cost));
});

test('benchParallel with an option it does not take exits 2 before timing anything, and keeps no record', { timeout: HANG_MS }, () => {
  const record = join(__dirname, '..', '..', '..', 'src', 'tutorial', 'recorded', 'parallelWindow.ts');
  const before = readFileSync(record, 'utf8');
  const out = join(mkdtempSync(join(tmpdir(), 'bench-parallel-')), 'parallel.json');
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', '..', 'scripts', 'bench', 'benchParallel.ts'), '--recrod'], { encoding: 'utf8', env: { ...process.env, BENCH_PARALLEL_OUT: out }, timeout: HANG_MS });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /BenchArgsError: "--recrod" not accepted by benchParallel\.ts; accepted: --quick, --record, --no-torch/);
  assert.equal(run.stdout, '');
  assert.equal(readFileSync(record, 'utf8'), before);
  assert.equal(existsSync(out), false);
});
