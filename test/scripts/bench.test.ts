import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A smoke run of the benchmark on the smallest model: checks the JSON it writes, not timings.
test('bench --quick writes step, window and environment records', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'bench.json');
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'scripts', 'bench.ts'), '--quick', '--models=simpleNet', '--backends=wasm,wasm-stock', '--no-torch'], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_OUT: out },
    timeout: 120_000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /\| simpleNet \| 64 \| wasm \+ kernels \| [0-9.]+ \|/);
  const result = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(result.quick, true);
  assert.deepEqual(result.torch, { available: false, reason: 'disabled by --no-torch' });
  assert.deepEqual(result.steps.map((s: { backend: string }) => s.backend), ['wasm + kernels', 'wasm (stock)']);
  for (const s of result.steps) {
    assert.ok(s.msPerStep > 0 && s.gflops > 0 && s.steps >= 1, JSON.stringify(s));
  }
  assert.equal(result.windows.length, 1, 'windows are measured on the fast backends only');
  const w = result.windows[0];
  assert.equal(w.model, 'simpleNet');
  for (const key of ['windowMs', 'stepMs', 'timeRatio', 'memoryRatio', 'memoryRatioTheory', 'parameterBytes']) assert.ok(w[key] > 0, `${key} = ${w[key]}`);
  assert.ok(w.bookkeepingShare >= 0 && w.bookkeepingShare < 1);
  assert.equal(w.parameterBytes, (10 + 1) * 4, 'SimpleNet has 10 weights and a bias');
  assert.match(result.environments['wasm + kernels'], /^backend: wasm \+ tfjs-accumulate kernels/);
});
