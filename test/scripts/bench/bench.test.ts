import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { nativeAvailable } from '../../helpers/kernelParity';
import { HANG_MS } from '../../helpers/ceilings';
import { allowedCores } from '../../../scripts/bench/corePin';

// A smoke run of the benchmark on the smallest model, without the PyTorch peer (test/scripts/
// benchPeer.test.ts covers it): checks the JSON and the tables it writes, not timings.
test('bench --quick writes rows with spread, threads, load and a roofline', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'bench.json');
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', '..', 'scripts', 'bench', 'bench.ts'), '--quick', '--models=simpleNet', '--backends=wasm-stock', '--no-torch'], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_OUT: out },
    timeout: HANG_MS,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /\| SimpleNet 10-1, step of 64 \| — \| \? \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| \d+ \/ [0-9.]+ \|/);
  assert.match(run.stdout, /Peaks: wasm SIMD f32x4 mul \+ add loop [0-9.]+ GFLOP\/s/);
  const result = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(result.quick, true);
  assert.deepEqual(result.torch, { unavailable: 'disabled by --no-torch' });
  // One-thread blocks ran on the lowest core this process may use, and no peer is claimed.
  const lowest = allowedCores(process.pid)[0];
  assert.equal(result.pinning.core, lowest);
  assert.match(run.stdout, new RegExp(`^Pinning: ours' main thread ran its one-thread blocks on core ${lowest}; no PyTorch peer ran\\. Core speeds`, 'm'));
  assert.equal(result.loadAverage.start.length, 3);
  assert.equal(result.loadAverage.end.length, 3);
  const native = nativeAvailable();
  const ids = ['simpleNet-64', 'simpleNet-window-4x16'];
  assert.deepEqual(result.rows.map((r: { id: string }) => r.id), [...ids, ...(native ? ids.map((id) => `${id}-native`) : [])]);
  for (const r of result.rows) {
    const s = r.ours1;
    assert.ok(s.minMs <= s.ms && s.ms <= s.maxMs && s.calls >= 2, JSON.stringify(s));
    assert.ok(s.faultsPerCall >= 0, JSON.stringify(s));
    assert.equal(s.threads, 1);
    // tfjs's wasm backend runs on the main thread (V8's garbage collector may show beside it).
    if (s.busyThreads !== null) assert.ok(s.busyThreads >= 1 && s.cpuPerWall > 0, JSON.stringify(s));
    assert.equal(r.torch1, null);
    if (r.id.endsWith('-native')) {
      assert.equal(r.oursAll.threads, cpus().length, 'the native path at every core');
      assert.match(r.oursAll.label, new RegExp(`^native \\(CBLAS\\), ${cpus().length} threads`));
    } else {
      assert.equal(r.oursAll, null, 'wasm has no multi-core path');
    }
    if (r.id === 'simpleNet-window-4x16-native') {
      // Every core three ways: the workers at one BLAS thread timed, "both" timed or refused by the library, never above the cores.
      const [workers, ...both] = r.others;
      assert.equal(workers.label, `ParallelAccumulator, ${cpus().length} worker${cpus().length === 1 ? '' : 's'} x 1 BLAS thread`);
      assert.ok(workers.minMs <= workers.ms && workers.calls >= 2, JSON.stringify(workers));
      for (const b of both) {
        if (b.threads > cpus().length) assert.match(b.refused, /^ParallelAccumulator: nativeThreads must be an integer from 1 to \d+ \(\d+ workers each running the BLAS/);
        else assert.ok(b.ms > 0 && b.refused === undefined, JSON.stringify(b));
      }
    } else {
      assert.equal(r.others, undefined, 'worker options only on native windows');
    }
    assert.equal(r.loadAverage.length, 2);
  }
  if (native) {
    assert.ok(result.roofline.nativeGemm.one > 0, 'the addon\'s GEMM peak');
    assert.match(run.stdout, /Native path: the addon's cblas_sgemm 512x512 [0-9.]+ GFLOP\/s at 1 thread/);
    assert.match(run.stdout, /\| SimpleNet 10-1, step of 64, native \| [0-9.]+ \| — \| —% \| [0-9.]+ \| [0-9]+% of OpenBLAS \|/);
    assert.match(result.environments['native (CBLAS)'], /^backend: wasm \+ tfjs-accumulate native kernels/);
    assert.match(run.stdout, /Every core: which wins/);
    assert.match(run.stdout, /\| SimpleNet 10-1, window of 4 x 16, native \| ParallelAccumulator, \d+ workers? x 1 BLAS thread \| \d+ \| [0-9.—]+ \| [0-9.—]+ \| [0-9.]+ \(/);
    assert.match(run.stdout, /SimpleNet 10-1, window of 4 x 16, native: .+ wins \([0-9.]+ ms, [0-9.]+ x one thread\)\./);
  }
  assert.equal(result.rows[0].flops, 2 * 64 * 2 * 10, 'SimpleNet: forward and weight gradient of a 10 -> 1 layer');
  assert.ok(result.roofline.wasmSimd.gflops > 0);
  assert.deepEqual(result.backends.map((s: { backend: string }) => s.backend), ['wasm (stock)']);
  assert.equal(result.accumulation.length, native ? 2 : 1, 'accumulation cost on each head-to-head path');
  const a = result.accumulation[0];
  assert.equal(a.model, 'simpleNet');
  for (const key of ['windowMs', 'stepMs', 'timeRatio', 'memoryRatio', 'memoryRatioTheory', 'parameterBytes']) assert.ok(a[key] > 0, `${key} = ${a[key]}`);
  assert.ok(a.bookkeepingShare >= 0 && a.bookkeepingShare < 1);
  assert.equal(a.parameterBytes, (10 + 1) * 4, 'SimpleNet has 10 weights and a bias');
  assert.match(result.environments['wasm + kernels'], /^backend: wasm \+ tfjs-accumulate kernels/);
  // The accumulator's overhead read directly: the window against its parts by hand, on every path.
  assert.ok(a.partsMs > 0 && a.partsSpread[0] <= a.partsMs && a.partsMs <= a.partsSpread[1], JSON.stringify(a));
  assert.equal(a.partsRatio, a.windowMs / a.partsMs);
  assert.equal(a.torchParts, null, 'no PyTorch ratio without the peer');
  assert.match(run.stdout, /Accumulator overhead: a GradientAccumulator window of 4 x 16 against its parts by hand/);
  const overhead = /^\| simpleNet \| wasm \+ kernels \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| [0-9.]+ \| ≤ 1\.05 (met|missed) \| — \|$/m;
  assert.match(run.stdout, overhead);
  if (native) assert.match(run.stdout, /^\| simpleNet \| native \(CBLAS\) \| [0-9.]+ \(/m);
});

test('bench --every-core-only runs the native window rows alone and says whether the machine gave it its cores', { skip: !nativeAvailable() && 'the native addon is not built' }, () => {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'bench.json');
  const script = join(__dirname, '..', '..', '..', 'scripts', 'bench', 'bench.ts');
  const run = spawnSync(process.execPath, ['--import', 'tsx', script, '--every-core-only', '--quick', '--models=simpleNet', '--no-torch'], { encoding: 'utf8', env: { ...process.env, BENCH_OUT: out }, timeout: HANG_MS });
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(result.everyCoreOnly, true);
  assert.deepEqual(result.rows.map((r: { id: string }) => r.id), ['simpleNet-window-4x16-native'], 'no steps, no wasm rows');
  assert.deepEqual([result.accumulation, result.backends, result.roofline.wasmSimd], [[], [], null], 'nothing but the every-core rows');
  assert.match(run.stdout, /Every core: which wins/);
  assert.match(run.stdout, /^Every core: the options got (up to|at most) [0-9.]+ cores of CPU time per second of the \d+ they asked for(; the machine gave this run its cores\.|: the machine did not give this run \d+ cores, so no every-core target is judged\.)$/m);
  assert.doesNotMatch(run.stdout, /Roofline|Accumulation:/);
  // A bad option stops the run before anything is timed, naming what is accepted.
  const bad = spawnSync(process.execPath, ['--import', 'tsx', script, '--every-core-only', '--paths=wasm'], { encoding: 'utf8', env: { ...process.env, BENCH_OUT: out }, timeout: HANG_MS });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /BenchArgsError: --every-core-only runs the native path only; accepted with it: --paths=native, or no --paths/);
});
