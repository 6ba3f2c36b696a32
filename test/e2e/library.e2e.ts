import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import * as esbuild from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import type { AccumulationChecks, GroupNormValues, MemoryReading, Suite } from './pages/library';
import { HANG_MS } from '../helpers/ceilings';
import { launchBrowser, newPage } from '../helpers/chromium';

// The library in real headless Chromium (Debian's /usr/bin/chromium): test/e2e/pages/library.ts
// bundled with esbuild from the built package (dist/esm, through package.json `exports`, as a
// user's bundler sees it), served over loopback, run on WebGL (SwiftShader), wasm, and WebGPU
// when the browser offers an adapter. Needs `npm run build`. `npm run test:browser-lib` runs it;
// docs/browser.md quotes its memory line.
const ROOT = path.resolve(__dirname, '..', '..');
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm' };
/** Tolerances: float32 on every backend; the notebooks use the same for the 4 x 16 check. */
const TOLERANCE = { weights: 1e-5, flush: 1e-4, groupNorm: 1e-4 };

let tmp: string;
let server: http.Server;
let base: string;
let browser: Browser;

type Window = { suite: Suite };

async function openPage(): Promise<Page> {
  const page = await newPage(browser);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}/index.html`);
  await page.waitForFunction(() => (window as unknown as Window).suite !== undefined, null, { timeout: HANG_MS });
  assert.deepEqual(errors, [], 'the page loads without errors');
  return page;
}

const maxDifference = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));
const scale = (b: number[]) => Math.max(...b.map(Math.abs));

before(async () => {
  assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'esm', 'index.js')), 'dist/esm is missing: run `npm run build` first');
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-accumulate-browser-'));
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'pages', 'library.ts')],
    outfile: path.join(tmp, 'library.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    logLevel: 'error',
  });
  const wasmDist = path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist');
  for (const f of fs.readdirSync(wasmDist).filter((f) => f.endsWith('.wasm'))) fs.copyFileSync(path.join(wasmDist, f), path.join(tmp, f));
  fs.writeFileSync(path.join(tmp, 'index.html'), '<!doctype html><meta charset="utf-8"><title>tfjs-accumulate</title><script src="library.js"></script>\n');
  server = http.createServer((req, res) => {
    const file = path.join(tmp, path.normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (!file.startsWith(tmp) || !fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser({ webgpu: true });
});

after(async () => {
  await browser?.close();
  server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Skips the test, saying why, when `backend` is WebGPU and the browser has no adapter tfjs can use. */
async function skipWithoutAdapter(backend: string, page: Page, t: TestContext): Promise<boolean> {
  if (backend !== 'webgpu') return false;
  const adapter = await page.evaluate(() => (window as unknown as Window).suite.webgpuAdapter());
  console.log(`WebGPU: ${adapter.available ? 'adapter available' : `not tested: ${adapter.reason}`}`);
  if (!adapter.available) t.skip(`WebGPU not usable in this Chromium: ${adapter.reason}`);
  return !adapter.available;
}

/** The checks every backend gets: the accumulator's arithmetic, GroupNorm parity, no leaks. */
function backendSuite(backend: string): void {
  it(`trains exactly on ${backend}: 4 x 16 = 64, uneven micro-batches per sample, flush; no tensor leaks`, async (t) => {
    const page = await openPage();
    try {
      if (await skipWithoutAdapter(backend, page, t)) return;
      await page.evaluate((b) => (window as unknown as Window).suite.use(b), backend);
      const first = await page.evaluate(() => (window as unknown as Window).suite.accumulationChecks());
      const afterFirst = await page.evaluate(() => (window as unknown as Window).suite.numTensors());
      const second: AccumulationChecks = await page.evaluate(() => (window as unknown as Window).suite.accumulationChecks());
      const afterSecond = await page.evaluate(() => (window as unknown as Window).suite.numTensors());
      console.log(
        `${backend}: 4x16 vs 64 ${second.fourBySixteen.toExponential(2)}, [16,16,16,7] vs 55 ${second.uneven.toExponential(2)}, ` +
          `flush/one step of 32 ${second.flushRatio.toFixed(6)}; tensors ${afterFirst} -> ${afterSecond}`,
      );
      assert.equal(second.backend, backend);
      for (const run of [first, second]) {
        assert.ok(run.fourBySixteen <= TOLERANCE.weights, `4 x 16 = 64: ${run.fourBySixteen}`);
        assert.ok(run.uneven <= TOLERANCE.weights, `uneven, per-sample: ${run.uneven}`);
        assert.ok(Math.abs(run.flushRatio - 1) <= TOLERANCE.flush, `flush: ${run.flushRatio}`);
        assert.deepEqual(run.flush, { applied: true, microBatches: 2, weight: 32 });
      }
      assert.equal(afterSecond, afterFirst, 'a second run leaves as many tensors as the first');
    } finally {
      await page.close();
    }
  });

  it(`computes GroupNormalization forward and backward on ${backend} as on cpu`, async (t) => {
    const page = await openPage();
    try {
      if (await skipWithoutAdapter(backend, page, t)) return;
      const values = async (b: string): Promise<GroupNormValues> => {
        await page.evaluate((name) => (window as unknown as Window).suite.use(name), b);
        return page.evaluate(() => (window as unknown as Window).suite.groupNormValues());
      };
      const reference = await values('cpu');
      const tested = await values(backend);
      const before = await page.evaluate(() => (window as unknown as Window).suite.numTensors());
      await values(backend);
      const afterAgain = await page.evaluate(() => (window as unknown as Window).suite.numTensors());
      assert.equal(tested.backend, backend);
      const gaps = Object.fromEntries(
        (['y', 'dx', 'dGamma', 'dBeta'] as const).map((k) => [k, maxDifference(tested[k], reference[k]) / scale(reference[k])]),
      );
      console.log(`${backend} GroupNormalization vs cpu, max relative difference: ${Object.entries(gaps).map(([k, v]) => `${k} ${v.toExponential(2)}`).join(', ')}`);
      for (const [k, gap] of Object.entries(gaps)) assert.ok(gap <= TOLERANCE.groupNorm, `${k}: ${gap}`);
      assert.equal(afterAgain, before, 'no tensor leaks');
    } finally {
      await page.close();
    }
  });
}

describe('the library in Chromium', () => {
  describe('on WebGL (SwiftShader)', () => {
    it('gets a WebGL 2 context from SwiftShader', async () => {
      const page = await openPage();
      const renderer = await page.evaluate(() => (window as unknown as Window).suite.webglRenderer());
      await page.close();
      console.log(`WebGL renderer: ${renderer}`);
      assert.match(renderer ?? '', /SwiftShader/i);
    });
    backendSuite('webgl');

    it('holds a 4 x 16 window of the digit CNN in less GPU memory than one step of 64', async () => {
      // A fresh page (and WebGL context) per reading, so that each starts with an empty texture pool.
      const read = async (kind: 'window' | 'step'): Promise<MemoryReading> => {
        const page = await openPage();
        try {
          await page.evaluate(() => (window as unknown as Window).suite.use('webgl'));
          return await page.evaluate((k) => (window as unknown as Window).suite.memory(k), kind);
        } finally {
          await page.close();
        }
      };
      const windowReading = await read('window');
      const step = await read('step');
      assert.ok(windowReading.gpuBytesAllocated !== null && step.gpuBytesAllocated !== null, 'WebGL reports numBytesInGPUAllocated');
      const MiB = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
      const line =
        `WebGL (SwiftShader), digit CNN with GroupNorm: GPU texture bytes allocated, window 4x16 ${MiB(windowReading.gpuBytesAllocated)}, ` +
        `step 1x64 ${MiB(step.gpuBytesAllocated)}, ratio ${(windowReading.gpuBytesAllocated / step.gpuBytesAllocated).toFixed(2)}; ` +
        `tf.profile peak bytes, window ${MiB(windowReading.peakBytes)}, step ${MiB(step.peakBytes)}, ratio ${(windowReading.peakBytes / step.peakBytes).toFixed(2)}`;
      console.log(line);
      const out = path.join(ROOT, 'build', 'browser');
      fs.mkdirSync(out, { recursive: true });
      fs.writeFileSync(path.join(out, 'memory.json'), `${JSON.stringify({ window: windowReading, step, line }, null, 2)}\n`);
      assert.ok(windowReading.gpuBytesAllocated < step.gpuBytesAllocated, line);
      assert.ok(windowReading.peakBytes < step.peakBytes, line);
    });
  });

  describe('on wasm', () => backendSuite('wasm'));

  describe('on WebGPU, where Chromium offers an adapter that tfjs can use', () => backendSuite('webgpu'));
});
