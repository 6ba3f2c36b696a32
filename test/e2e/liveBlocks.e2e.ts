import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { exportSite } from '../../scripts/site/exportSite';
import { HANG_MS } from '../helpers/ceilings';
import { launchBrowser, newPage } from '../helpers/chromium';

// The "run it in your browser" blocks of chapters 3 and 4 (scripts/site/live/) in both editions,
// in headless Chromium on WebGL (SwiftShader), from file:// and over loopback: tfjs loads only
// when the reader presses the button, then the example runs and shows its numbers and a chart,
// in the page's language. The site is exported here from the committed notebooks (unexecuted:
// the blocks do not need outputs).
// `npm run test:browser-lib` runs it.
const ROOT = path.resolve(__dirname, '..', '..');
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };
const CHAPTERS = { accumulation: '03-accumulation.html', 'training-loop': '04-training-loop.html' } as const;
/** Each edition's folder in the site, and a word its chart must show (the display table's zh). */
const EDITIONS = [
  { dir: '', chartWord: { accumulation: 'accumulated 4 x 16', 'training-loop': 'micro-batch loss' } },
  { dir: 'zh/', chartWord: { accumulation: '累积 4 x 16', 'training-loop': '微批次损失' } },
] as const;

let tmp: string;
let site: string;
let server: http.Server;
let browser: Browser;
const origins: Record<string, string> = {};

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-accumulate-live-'));
  const inDir = path.join(tmp, 'notebooks');
  fs.mkdirSync(path.join(inDir, 'zh'), { recursive: true });
  for (const f of ['03-accumulation.ipynb', '04-training-loop.ipynb']) {
    fs.copyFileSync(path.join(ROOT, 'notebooks', f), path.join(inDir, f));
    fs.copyFileSync(path.join(ROOT, 'notebooks', 'zh', f), path.join(inDir, 'zh', f));
  }
  site = path.join(tmp, 'site');
  exportSite({ inDir, outDir: site });
  server = http.createServer((req, res) => {
    const file = path.join(site, path.normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    if (!file.startsWith(site) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origins['over loopback'] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  origins['from file://'] = pathToFileURL(site).href + '/';
  browser = await launchBrowser({ webgl: true });
});

after(async () => {
  await browser?.close();
  server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the "run it in your browser" blocks, in Chromium on WebGL', () => {
  it('are on chapters 3 and 4 of each edition only', () => {
    for (const { dir } of EDITIONS) {
      const pages = fs.readdirSync(path.join(site, dir)).filter((f) => f.endsWith('.html'));
      const withBlock = pages.filter((f) => fs.readFileSync(path.join(site, dir, f), 'utf8').includes('class="live-block"'));
      assert.deepEqual(withBlock.sort(), Object.values(CHAPTERS).sort(), dir || 'English');
    }
  });

  for (const where of ['from file://', 'over loopback']) {
    for (const { dir, chartWord } of EDITIONS) {
      for (const [kind, chapter] of Object.entries(CHAPTERS) as [keyof typeof CHAPTERS, string][]) {
        const page = dir + chapter;
        it(`${page} ${where}: loads tfjs only on request, then runs and draws`, { timeout: 3 * HANG_MS }, async () => {
          const tab = await newPage(browser);
          const errors: string[] = [];
          tab.on('pageerror', (e) => errors.push(e.message));
          try {
            await tab.goto(origins[where] + page);
            await tab.waitForLoadState('load');
            const loadedBefore = await tab.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /run\.js$/.test(n)));
            assert.deepEqual(loadedBefore, [], 'run.js (tfjs) is not loaded before the button is pressed');
            assert.equal(await tab.evaluate(() => 'tfjsAccumulateLive' in window), false);

            await tab.click(`section.live-block[data-live="${kind}"] button.live-run`);
            await tab.waitForSelector(`section.live-block[data-state="done"], section.live-block[data-state="failed"]`, { timeout: HANG_MS });
            const block = tab.locator('section.live-block');
            const state = await block.getAttribute('data-state');
            assert.equal(state, 'done', (await block.locator('.live-output').textContent()) ?? '');
            const backend = await block.getAttribute('data-backend');
            const result = JSON.parse((await block.getAttribute('data-result')) ?? '{}') as Record<string, number>;
            console.log(`${page} ${where}: ${backend}, ${JSON.stringify(result)}`);
            assert.equal(backend, 'webgl');
            assert.equal(result.tensorsLeft, 0, 'the run disposes what it made');
            if (kind === 'accumulation') {
              assert.ok(result.maxRelativeDifference <= 1e-5, `4 x 16 = 64: ${result.maxRelativeDifference}`);
              assert.equal(result.updateStep, 1);
            } else {
              assert.equal(result.updates, 5);
              assert.ok(result.lastWindowLoss < result.firstWindowLoss, 'the loss falls');
            }
            assert.equal(await block.locator('.live-chart svg polyline').count(), 2, 'a chart with two lines');
            assert.ok(((await block.locator('.live-chart').textContent()) ?? '').includes(chartWord[kind]), `the chart speaks the page's language: ${chartWord[kind]}`);
            assert.ok((await block.locator('.live-numbers dd').count()) >= 3, 'the numbers are shown');
            assert.deepEqual(errors, []);
          } finally {
            await tab.close();
          }
        });
      }
    }
  }
});
