import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'node:os';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkNativeThreads, loadNativeBlas, nativeAddon, NativeAddon, notABuiltAddon, setNativeThreads, sgemm } from '../../../src/backend/kernels/nativeBlas';
import { nativeAvailable, randomValues } from '../../helpers/kernelParity';

const skip = nativeAvailable() ? false : 'the native addon is not built here (npm run native:build says why)';

/** The product the addon must compute, in float64 on plain loops. */
function reference(transA: boolean, transB: boolean, m: number, n: number, k: number, a: Float32Array, b: Float32Array): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let q = 0; q < k; q++) s += a[transA ? q * m + i : i * k + q] * b[transB ? j * k + q : q * n + j];
      c[i * n + j] = s;
    }
  }
  return c;
}

test('an addon that is missing, broken or not ours is a reason, never an exception', () => {
  try {
    const missing = loadNativeBlas({ reload: true, env: { TFJS_ACCUMULATE_NATIVE_ADDON: '/nonexistent/addon.node' } });
    assert.equal(missing.available, false);
    assert.match((missing as { reason: string }).reason, /got "\/nonexistent\/addon.node", which does not exist/);
    const broken = loadNativeBlas({ reload: true, load: () => { throw new Error('libopenblas.so.0: cannot open shared object file\nmore'); } });
    assert.deepEqual(broken, { available: false, reason: 'did not load: libopenblas.so.0: cannot open shared object file' });
    const foreign = loadNativeBlas({ reload: true, load: () => ({ sgemm() {} }) });
    assert.equal(foreign.available, false);
    assert.match((foreign as { reason: string }).reason, /is not the tfjs-accumulate BLAS addon/);
    // An addon built before im2col moved into it: a reason to rebuild, not a crash in the first convolution.
    const older = loadNativeBlas({ reload: true, load: () => ({ sgemm() {}, info() {}, setThreads() {} }) });
    assert.equal(older.available, false);
    assert.match((older as { reason: string }).reason, /was built from an older version \(it has no im2col, col2im, channelSums, channelBinary; rebuild it with `npx --no-install tfjs-accumulate-build-native`\)/);
  } finally {
    loadNativeBlas({ reload: true });
  }
});

test('the addon reports its BLAS, version, core type and threads, and starts at one thread', { skip }, () => {
  const status = loadNativeBlas({ reload: true });
  assert.ok(status.available);
  const info = status.addon.info();
  assert.equal(typeof info.blas, 'string');
  if (info.blas === 'OpenBLAS') {
    assert.match(info.config as string, /^OpenBLAS \d+\.\d+\.\d+/);
    assert.equal(typeof info.corename, 'string');
    assert.equal(info.threads, 1, 'one thread by default');
  }
});

test('setNativeThreads: 1 to the core count, or "all"; anything else is a named error', { skip }, () => {
  const cores = os.cpus().length;
  try {
    for (const bad of [0, cores + 1, 1.5, -1, '2' as never]) {
      assert.throws(() => setNativeThreads(bad), new RegExp(`setNativeThreads: threads must be an integer from 1 to ${cores} \\(this machine's cores\\), or "all"`));
    }
    const status = loadNativeBlas();
    assert.ok(status.available);
    if (status.addon.info().blas !== 'OpenBLAS') return;
    assert.equal(setNativeThreads('all'), cores);
    assert.equal(setNativeThreads(1), 1);
  } finally {
    setNativeThreads(1);
  }
});

test('checkNativeThreads: workers x BLAS threads within the cores, one BLAS thread always; beyond is a named error', () => {
  const check = (threads: unknown, workers: number, cores: number) => checkNativeThreads('f', 'nativeThreads', threads, { workers, cores, optional: true });
  assert.equal(check(4, 1, 4), 4);
  assert.equal(check('all', 1, 4), 4, '"all" is every core for one worker');
  assert.equal(check(2, 2, 4), 2, '2 workers x 2 threads fill 4 cores');
  assert.equal(check(1, 2, 2), 1);
  assert.equal(check(1, 3, 2), 1, 'one BLAS thread is the worker itself: allowed beside any number of workers');
  assert.throws(() => check(2, 2, 2), /^Error: f: nativeThreads must be an integer from 1 to 1 \(2 workers each running the BLAS at that count: at most 2 cores \/ 2 workers, never more threads than cores\), or left out; got 2\.$/);
  assert.throws(() => check(3, 2, 4), /from 1 to 2 \(2 workers/);
  assert.throws(() => check('all', 2, 4), /from 1 to 2 \(2 workers/, '"all" with several workers would be cores x workers');
  assert.throws(() => check(5, 1, 4), /^Error: f: nativeThreads must be an integer from 1 to 4 \(this machine's cores\), "all", or left out; got 5\.$/);
  for (const bad of [0, 1.5, '2', null]) assert.throws(() => check(bad, 1, 4), /must be an integer from 1 to 4/);
  assert.throws(() => checkNativeThreads('g', 'threads', 0, { cores: 4 }), /^Error: g: threads must be an integer from 1 to 4 \(this machine's cores\), or "all"; got 0\.$/, 'without optional the message offers no "left out"');
});

test('sgemm matches a float64 reference for every transpose, shape and batch layout', { skip }, () => {
  const addon = (loadNativeBlas() as { addon: NativeAddon }).addon;
  fc.assert(
    fc.property(
      fc.boolean(), fc.boolean(), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }),
      fc.integer({ min: 1, max: 3 }), fc.boolean(), fc.boolean(), fc.integer({ min: 0, max: 1000 }),
      (transA, transB, m, n, k, batch, shareA, shareB, seed) => {
        const a = randomValues((shareA ? 1 : batch) * m * k, seed);
        const b = randomValues((shareB ? 1 : batch) * k * n, seed + 1);
        const c = new Float32Array(batch * m * n);
        sgemm(addon, { transA, transB, m, n, k, batch, strideA: shareA ? 0 : m * k, strideB: shareB ? 0 : k * n }, a, b, c);
        for (let i = 0; i < batch; i++) {
          const ai = a.subarray(shareA ? 0 : i * m * k, (shareA ? 0 : i * m * k) + m * k);
          const bi = b.subarray(shareB ? 0 : i * k * n, (shareB ? 0 : i * k * n) + k * n);
          const want = reference(transA, transB, m, n, k, ai, bi);
          for (let j = 0; j < m * n; j++) assert.ok(Math.abs(c[i * m * n + j] - want[j]) <= 1e-5 * k, `batch ${i} element ${j}`);
        }
      },
    ),
    { numRuns: 200 },
  );
});

test('sgemm with beta 1 adds the product to what the output holds (the fused bias)', { skip }, () => {
  const addon = (loadNativeBlas() as { addon: NativeAddon }).addon;
  const c = new Float32Array([10, 20, 30, 40]);
  sgemm(addon, { transA: false, transB: false, m: 2, n: 2, k: 1, beta: 1 }, new Float32Array([1, 2]), new Float32Array([3, 4]), c);
  assert.deepEqual([...c], [13, 24, 36, 48]);
});

test('sgemm checks every array against its matrices before CBLAS touches memory', { skip }, () => {
  const addon = (loadNativeBlas() as { addon: NativeAddon }).addon;
  const a = new Float32Array(6);
  const b = new Float32Array(6);
  const c = new Float32Array(4);
  const call = (over: Partial<Record<'a' | 'b' | 'c', Float32Array>>, batch = 1, strideC = 4) =>
    addon.sgemm(false, false, 2, 2, 3, over.a ?? a, 3, 6, over.b ?? b, 2, 6, over.c ?? c, 2, strideC, batch, 0);
  call({});
  assert.throws(() => call({ a: new Float32Array(5) }), /native sgemm: a is too short/);
  assert.throws(() => call({ b: new Float32Array(5) }), /native sgemm: b is too short/);
  assert.throws(() => call({ c: new Float32Array(3) }), /native sgemm: c is too short/);
  assert.throws(() => call({}, 2), /native sgemm: a is too short/);
  assert.throws(() => call({ c: new Float64Array(4) as never }), /native sgemm: c must be a Float32Array/);
  assert.throws(() => addon.sgemm(false, false, -1, 2, 3, a, 3, 6, b, 2, 6, c, 2, 4, 1, 0), /m must be a non-negative integer/);
  assert.throws(() => (addon.sgemm as (...args: unknown[]) => void)(false, false, 2), /expected 16 arguments/);
});

test('the backend entry still bundles for browsers: the loader hides its Node built-ins from bundlers', async () => {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [require('node:path').join(__dirname, '..', '..', '..', 'src', 'backend', 'index.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    logLevel: 'silent',
    external: ['@tensorflow/*'],
  });
  assert.deepEqual(result.errors, []);
});

test('TFJS_ACCUMULATE_NATIVE_ADDON must name a built .node addon; anything else is refused by name, never loaded (issue 34)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-accumulate-addon-'));
  const marker = path.join(dir, 'ran');
  const script = path.join(dir, 'addon.js');
  // A script that would leave a marker if require ran it.
  fs.writeFileSync(script, `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nmodule.exports = { sgemm() {}, info() {}, setThreads() {} };`);
  const text = path.join(dir, 'text.node');
  fs.writeFileSync(text, 'module.exports = {};\n');
  const folder = path.join(dir, 'folder.node');
  fs.mkdirSync(folder);
  const refusals: [string, RegExp][] = [
    ['/etc/hostname', /which is not a \.node file/],
    [script, /which is not a \.node file/],
    [path.join(dir, 'missing.node'), /which does not exist/],
    [text, /which is not a shared library/],
    [folder, /which is not a file/],
  ];
  try {
    for (const [file, why] of refusals) {
      const status = loadNativeBlas({ reload: true, env: { TFJS_ACCUMULATE_NATIVE_ADDON: file } });
      assert.equal(status.available, false, file);
      const reason = (status as { reason: string }).reason;
      assert.match(reason, /^is refused: TFJS_ACCUMULATE_NATIVE_ADDON must be the path of a built addon \(a \.node file, as `npx --no-install tfjs-accumulate-build-native` makes\); got "/, file);
      assert.match(reason, why, file);
      // The kernels that need it say so, with the reason.
      assert.throws(() => nativeAddon('installFastKernels("native")'), (e: Error) => e.message.startsWith('installFastKernels("native"): the native kernels are not available: is refused: TFJS_ACCUMULATE_NATIVE_ADDON'));
    }
    assert.equal(fs.existsSync(marker), false, 'the .js file was never run');
  } finally {
    loadNativeBlas({ reload: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('notABuiltAddon accepts the addon npm run native:build made', { skip }, () => {
  const status = loadNativeBlas({ reload: true });
  assert.ok(status.available);
  assert.equal(notABuiltAddon(status.path), null);
  const viaEnv = loadNativeBlas({ reload: true, env: { TFJS_ACCUMULATE_NATIVE_ADDON: status.path } });
  assert.equal(viaEnv.available, true);
  loadNativeBlas({ reload: true });
});
