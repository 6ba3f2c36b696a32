import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { exportSite } from '../../scripts/site/exportSite';
import { runNotebook } from '../../scripts/notebooks/runner';
import type { Notebook } from '../../scripts/notebooks/nbformat';
import { PLOTLY_MIME } from '../../src/tutorial/index';
import { launchPersistent } from '../helpers/chromium';
import { open } from '../helpers/site';
import { HANG_MS } from '../helpers/ceilings';

// The exported site's frame in real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core): a page per executed notebook, a fixture notebook's site (scripts shown as
// text, sanitized HTML, KaTeX, the index's links) and the figure HTML showFigure sends to Jupyter.
// Every page of the site, over file:// and http://, is loaded in site.e2e.ts. `npm run
// test:browser` runs it after `npm run site`.
const ROOT = path.resolve(__dirname, '..', '..');
const SITE = path.resolve(process.env.SITE_DIR ?? path.join(ROOT, 'build', 'site'));
const EXECUTED = path.resolve(process.env.EXECUTED_DIR ?? path.join(ROOT, 'build', 'notebooks'));
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');

let tmp: string;
let context: BrowserContext;

interface Visit {
  problems: string[];
  charts: number;
  page: Page;
}

/**
 * Opens a URL, waits for `expectedCharts` Plotly charts (a chart counts once, however many
 * `svg.main-svg` layers Plotly gives it), and collects every console error, page error and
 * failed request.
 */
async function visit(url: string, expectedCharts: number): Promise<Visit> {
  const { page, problems } = await open(context, url);
  // The site draws a chart when it scrolls into view; bring each one there.
  const figures = page.locator('.plotly-figure');
  for (let i = 0; i < (await figures.count()); i++) await figures.nth(i).scrollIntoViewIfNeeded();
  const count = (): Promise<number> =>
    page.evaluate(() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter((plot) => plot.querySelector('svg.main-svg')).length);
  if (expectedCharts > 0) {
    await page.waitForFunction((n) => document.querySelectorAll('.js-plotly-plot svg.main-svg').length > 0 && document.querySelectorAll('.js-plotly-plot').length >= n, expectedCharts, { timeout: HANG_MS, polling: 250 }).catch(() => {});
  }
  // Let late errors (a font, a deferred draw) surface before judging the page.
  await page.waitForTimeout(200);
  return { problems, charts: await count(), page };
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'browser-e2e-'));
  context = await launchPersistent(path.join(tmp, 'profile'));
});
after(async () => {
  await context?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the exported site in Chromium', () => {
  const pages = fs.existsSync(SITE) ? fs.readdirSync(SITE).filter((f) => f.endsWith('.html')).sort() : [];

  it('exists, with an index and a page per executed notebook', () => {
    assert.ok(pages.includes('index.html'), `no site in ${path.relative(ROOT, SITE)}; run \`npm run notebooks && npm run site\` first`);
    const executed = fs.readdirSync(EXECUTED).filter((f) => f.endsWith('.ipynb')).map((f) => f.replace(/\.ipynb$/, '.html'));
    assert.deepEqual(pages.filter((p) => p !== 'index.html' && p !== 'search.html'), executed.sort());
  });

  // Every page is loaded over file:// and http://, its errors collected and its charts counted
  // against its notebook's Plotly outputs, by site.e2e.ts, with axe-core and the layout checks on
  // the same load: loading them here again caught nothing new.
});

describe('a site made from the passing fixture notebook', () => {
  let page: Page;
  let problems: string[];

  before(async () => {
    const report = await runNotebook(path.join(FIXTURES, 'passing.ipynb'), { outDir: path.join(tmp, 'executed'), log: () => {} });
    assert.equal(report.status, 'ok', report.error?.text);
    exportSite({ inDir: path.join(tmp, 'executed'), outDir: path.join(tmp, 'site') });
    const v = await visit(pathToFileURL(path.join(tmp, 'site', 'passing.html')).href, 1);
    page = v.page;
    problems = v.problems;
  });

  it('loads without errors and draws its chart', async () => {
    assert.deepEqual(problems, []);
    assert.equal(await page.locator('.js-plotly-plot').count(), 1);
  });

  it('shows <script> from markdown and from a text output as text and never runs it', async () => {
    const ran = await page.evaluate(() => ({ markdown: '__markdownScriptRan' in window, text: '__textScriptRan' in window }));
    assert.deepEqual(ran, { markdown: false, text: false });
    const text = await page.locator('main').innerText();
    assert.ok(text.includes('<script>window.__markdownScriptRan = true;</script>'), 'markdown shows the tag');
    assert.ok(text.includes('<script>window.__textScriptRan = true;</script> is printed, not run'), 'the output shows the tag');
  });

  it('keeps HTML outputs as HTML (sanitized: the id goes) and renders math with KaTeX', async () => {
    assert.equal(await page.locator('.output.html b').filter({ hasText: 'HTML output is kept' }).innerText(), 'HTML output is kept');
    assert.equal(await page.locator('#kept-html').count(), 0, 'an output sets no id of the page');
    assert.ok((await page.locator('.katex').count()) >= 2);
  });

  it('lets the index link to the page', async () => {
    const v = await visit(pathToFileURL(path.join(tmp, 'site', 'index.html')).href, 0);
    assert.deepEqual(v.problems, []);
    await v.page.click('ul.toc a[href="passing.html"]'); // the contents (the sidebar and the menu link it too)
    assert.match(await v.page.locator('h1').innerText(), /^A passing notebook #$/, 'the title, then its permalink');
    await v.page.close();
  });
});

describe('the text/html that showFigure sends to Jupyter', () => {
  let html: string;
  before(() => {
    const nb = JSON.parse(fs.readFileSync(path.join(tmp, 'executed', 'passing.ipynb'), 'utf8')) as Notebook;
    const bundle = nb.cells.flatMap((c) => c.outputs ?? []).find((o) => 'data' in o && PLOTLY_MIME in o.data) as { data: Record<string, string> };
    html = bundle.data['text/html'];
  });

  it('draws a static chart where plotly.js is not available (no network, untrusted output)', async () => {
    const file = path.join(tmp, 'static.html');
    fs.writeFileSync(file, `<!doctype html><meta charset="utf-8"><body>${html}</body>`);
    const v = await visit(pathToFileURL(file).href, 0);
    assert.deepEqual(v.problems, []);
    // The static SVG as an image (what a sanitizer keeps), decoded and drawn: its two lines.
    const image = v.page.locator('img.tfjs-accumulate-static-figure');
    assert.equal(await image.count(), 1);
    assert.deepEqual(await image.evaluate((img: HTMLImageElement) => [img.complete, img.naturalWidth, img.naturalHeight]), [true, 480, 420]);
    const svg = Buffer.from(/src="data:image\/svg\+xml;base64,([^"]+)"/.exec(html)![1], 'base64').toString('utf8');
    assert.equal(svg.match(/<polyline /g)?.length, 2);
    assert.equal(v.charts, 0);
    await v.page.close();
  });

  it('becomes the interactive chart where the page has plotly.js', async () => {
    const file = path.join(tmp, 'interactive.html');
    const plotly = pathToFileURL(require.resolve('plotly.js-basic-dist-min')).href;
    fs.writeFileSync(file, `<!doctype html><meta charset="utf-8"><script src="${plotly}"></script><body>${html}</body>`);
    const v = await visit(pathToFileURL(file).href, 1);
    assert.deepEqual(v.problems, []);
    assert.equal(v.charts, 1);
    assert.equal(await v.page.locator('.tfjs-accumulate-static-figure').count(), 0);
    await v.page.close();
  });
});
