import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { exportSite } from '../../scripts/site/exportSite';
import { cellSource, type Notebook } from '../../scripts/notebooks/nbformat';
import { BUNDLE_TRACE_TYPES } from '../../scripts/site/plotlyBundle';
import { cellView } from '../../scripts/site/cellTags';
import { HOSTILE, writeHostileNotebooks } from '../fixtures/hostileNotebooks';
import { launchPersistent } from '../helpers/chromium';
import { axeViolations, checkEach, open, serve } from '../helpers/site';
import { HANG_MS } from '../helpers/ceilings';
import { HTTP_PAGES, pagesOf, ZH_DOCS_AXE } from '../helpers/frontEndSets';
import { PLOTLY_MIME } from '../../src/tutorial/index';

// The site as a reader meets it, in Debian's Chromium: accessibility (axe-core, light and dark),
// a phone's width, search from file://, the theme toggle, print, and hostile notebooks. Runs on
// the site `npm run site` made from `npm run notebooks`, like browser.e2e.ts.
const ROOT = path.resolve(__dirname, '..', '..');
const SITE = path.resolve(process.env.SITE_DIR ?? path.join(ROOT, 'build', 'site'));
const EXECUTED = path.resolve(process.env.EXECUTED_DIR ?? path.join(ROOT, 'build', 'notebooks'));
const PHONE = { width: 390, height: 844 };

let tmp: string;
let context: BrowserContext;
let http: { url: string; close: () => Promise<void> };
const htmlIn = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.html')).sort() : []);
// Both editions: the English pages at the root, the Chinese ones under zh/.
const pages = [...htmlIn(SITE), ...htmlIn(path.join(SITE, 'zh')).map((f) => `zh/${f}`)];
const isChapter = (p: string): boolean => /^\d/.test(path.basename(p));
const fileBase = pathToFileURL(SITE + path.sep).href;

/** Scrolls every chart into view and waits until site.js has drawn (or given up on) each. */
async function drawCharts(page: Page): Promise<void> {
  // A chart in a collapsed (hide-output) cell is drawn when the reader opens it.
  await page.evaluate(() => document.querySelectorAll('details.cell-part').forEach((d) => ((d as HTMLDetailsElement).open = true)));
  const figures = page.locator('.plotly-figure');
  const n = await figures.count();
  for (let i = 0; i < n; i++) await figures.nth(i).scrollIntoViewIfNeeded();
  if (n > 0) await page.waitForFunction(() => Array.from(document.querySelectorAll('.plotly-figure')).every((f) => ['drawn', 'failed'].includes(f.getAttribute('data-state') ?? '')), null, { timeout: HANG_MS, polling: 250 });
  await page.evaluate(() => window.scrollTo(0, 0));
}

before(async () => {
  assert.ok(pages.includes('index.html'), `no site in ${path.relative(ROOT, SITE)}; run \`npm run notebooks && npm run site\` first`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'site-e2e-'));
  context = await launchPersistent(path.join(tmp, 'profile'), { viewport: PHONE });
  http = await serve(SITE);
});
after(async () => {
  await context?.close();
  await http?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The Plotly outputs of the executed notebook behind a page: the charts it must draw (none on the index and search pages). */
function plotlyOutputs(name: string): number {
  const file = path.join(EXECUTED, name.replace(/\.html$/, '.ipynb'));
  if (!fs.existsSync(file)) return 0;
  const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
  return nb.cells.flatMap((c) => c.outputs ?? []).filter((o) => 'data' in o && PLOTLY_MIME in o.data).length;
}

/** Opens a page, draws its charts, and checks what depends on how it was served: no error, and one drawn chart per Plotly output. */
async function openDrawn(url: string, name: string): Promise<Page> {
  const { page, problems } = await open(context, url);
  await drawCharts(page);
  assert.deepEqual(problems, [], `${url}: errors`);
  const failed = await page.locator('.plotly-figure[data-state="failed"]').count();
  assert.equal(failed, 0, `${url}: every chart drawn by plotly.js`);
  const drawn = await page.evaluate(() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter((plot) => plot.querySelector('svg.main-svg')).length);
  const expected = plotlyOutputs(name);
  assert.equal(drawn, expected, `${url} draws ${drawn} Plotly charts for ${expected} Plotly outputs`);
  return page;
}

/** At `width` px: nothing scrolls sideways and the header's items sit on one line. */
async function checkNarrow(page: Page, name: string, width: number): Promise<void> {
  await page.setViewportSize({ width, height: 800 });
  const m = await page.evaluate(() => {
    const header = document.querySelector('.site-header')!;
    const items = Array.from(header.children).filter((c) => (c as HTMLElement).offsetParent !== null && !c.classList.contains('skip-link'));
    const tops = items.map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2));
    return { scrollWidth: document.documentElement.scrollWidth, lines: new Set(tops.map((t) => Math.round(t / 8))).size };
  });
  assert.equal(m.scrollWidth, width, `${name} at ${width} px`);
  assert.equal(m.lines, 1, `${name} at ${width} px: the header's items sit on one line`);
}

/** No cell badge covers its code, and every scroll box is labelled and focusable. */
async function checkBadges(page: Page, name: string): Promise<void> {
  const overlaps = await page.evaluate(() =>
    Array.from(document.querySelectorAll('.code-cell .source')).filter((cell) => {
      const meta = cell.querySelector('.meta')!.getBoundingClientRect();
      const code = cell.querySelector('pre')!.getBoundingClientRect();
      return meta.bottom > code.top + 1;
    }).length,
  );
  assert.equal(overlaps, 0, `${name}: a badge covers code`);
  const unlabeled = await page.locator('.scroll-box:not([aria-label]), .scroll-box:not([tabindex="0"])').count();
  assert.equal(unlabeled, 0, `${name}: scroll boxes are labelled and focusable`);
}

describe('every page at 390×844, with its charts drawn', () => {
  // axe-core and the layout read the page's markup and styles, the same bytes over file:// and
  // http://, so they run once, over file://; run over both, they cost 240 s each on a busy 2-core
  // machine (the longest test of npm test) and caught nothing the other had not. What the
  // protocol changes, how scripts, data and charts load, is checked over both.
  // One visit a page for everything that reads its markup and layout: the narrower and wider
  // phones and the badges were visits of their own, 74 more page loads for the same bytes.
  it('has no axe-core violation in light and dark, no sideways scroll, one chart per Plotly output inside the viewport, no badge over code, labelled scroll boxes, and fits 320 and 430 px with the header on one line (file://)', async () => {
    await checkEach(pages, async (name) => {
      const page = await openDrawn(new URL(name, fileBase).href, name);
      if (isChapter(name)) await checkBadges(page, name);
      const layout = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        width: window.innerWidth,
        plots: Array.from(document.querySelectorAll('.plotly-figure .nsewdrag')).map((r) => {
          const b = r.getBoundingClientRect();
          return { left: b.left, right: b.right, width: b.width };
        }),
        // Chart titles, which site.js breaks into lines (Chinese ones between characters).
        titles: Array.from(document.querySelectorAll('.plotly-figure .gtitle')).map((t) => [t.getBoundingClientRect().left, t.getBoundingClientRect().right]),
      }));
      assert.equal(layout.scrollWidth, layout.width, `${name}: scrollWidth ${layout.scrollWidth} at a ${layout.width} px viewport`);
      for (const [l, r] of layout.titles) assert.ok(l >= 0 && r <= layout.width, `${name}: a chart title spans ${Math.round(l)}–${Math.round(r)}, outside 0–${layout.width}`);
      for (const p of layout.plots) assert.ok(p.left >= 0 && p.right <= layout.width && p.width > 100, `${name}: plot area ${p.left}–${p.right} inside 0–${layout.width}`);
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
        assert.deepEqual(await axeViolations(page), [], `${name} (${scheme}): axe-core violations`);
      }
      for (const width of [320, 430]) await checkNarrow(page, name, width);
      await page.close();
    });
  });

  it('loads one page of each kind over http:// too, without errors, and draws one chart per Plotly output', async () => {
    await checkEach(pagesOf(HTTP_PAGES, SITE, 'http://', () => pages), async (name) => {
      const page = await openDrawn(new URL(name, http.url).href, name);
      await page.close();
    });
  });

  it('has no axe-core violation at 1280 px either, where the chapter sidebar shows (index, chapters 3 and 6, both editions)', async () => {
    const wide = pages.filter((p) => /(^|\/)(index|03-accumulation|06-batchnorm)\.html$/.test(p));
    assert.ok(wide.length >= 3, wide.join(', '));
    for (const name of wide) {
      const { page, problems } = await open(context, new URL(name, fileBase).href);
      await page.setViewportSize({ width: 1280, height: 800 });
      assert.ok(await page.locator('.chapter-nav').isVisible(), `${name}: the sidebar shows at 1280 px`);
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        assert.deepEqual(await axeViolations(page), [], `${name} (${scheme}, 1280 px): axe-core violations`);
      }
      assert.deepEqual(problems, [], name);
      await page.close();
    }
  });

  it('shows the reference pages (docs/ and zh/docs/) without sideways scroll or errors, and without an axe-core violation in light and dark', async () => {
    // Rendered from docs/*.md (scripts/site/docsPages.ts): their code blocks, tables with an empty
    // corner cell and long lines are not like the chapters'; over file:// only, as their frame is the chapters'.
    // axe-core reads every English page and one Chinese one (ZH_DOCS_AXE says why).
    const zhDocs = htmlIn(path.join(SITE, 'zh', 'docs')).map((f) => `zh/docs/${f}`);
    const docs = [...htmlIn(path.join(SITE, 'docs')).map((f) => `docs/${f}`), ...zhDocs];
    assert.ok(docs.length >= 2 && zhDocs.length >= 1, `no reference pages in ${path.relative(ROOT, SITE)}/docs or zh/docs`);
    const axeZh = new Set(pagesOf(ZH_DOCS_AXE, SITE, 'axe-core', () => zhDocs));
    await checkEach(docs, async (name) => {
      const { page, problems } = await open(context, new URL(name, fileBase).href);
      const { scrollWidth, width } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth }));
      assert.equal(scrollWidth, width, `${name}: scrollWidth ${scrollWidth} at a ${width} px viewport`);
      const schemes = name.startsWith('zh/') && !axeZh.has(name) ? [] : (['light', 'dark'] as const);
      for (const scheme of schemes) {
        await page.emulateMedia({ colorScheme: scheme });
        assert.deepEqual(await axeViolations(page), [], `${name} (${scheme}): axe-core violations`);
      }
      assert.deepEqual(problems, [], `${name}: errors`);
      await page.close();
    });
  });

});

describe('the Plotly bundle', () => {
  it('holds exactly the trace types the exporter allows', async () => {
    const chapter = pages.find((p) => fs.readFileSync(path.join(SITE, p), 'utf8').includes('class="plotly-data"'));
    assert.ok(chapter, 'a page with a chart');
    const { page } = await open(context, new URL(chapter, fileBase).href);
    await drawCharts(page);
    const traces = await page.evaluate(() => Object.keys((window as unknown as { Plotly: { PlotSchema: { get: () => { traces: object } } } }).Plotly.PlotSchema.get().traces).sort());
    assert.deepEqual(traces, [...BUNDLE_TRACE_TYPES].sort());
    await page.close();
  });
});

/** A phrase of `words` words from the middle of `text`, or undefined if it is shorter. */
function phraseFrom(text: string, words = 4): string | undefined {
  // Contiguous plain words only, so that no markup sits between them in the source.
  const w = text.split(/\s+/);
  for (let i = 1; i + words <= w.length; i++) {
    const run = w.slice(i, i + words);
    if (run.every((t, k) => /^[A-Za-z][A-Za-z'-]*$/.test(k === words - 1 ? t.replace(/[,.]$/, '') : t))) return run.join(' ').replace(/[,.]$/, '');
  }
  return undefined;
}

describe('search from file://', () => {
  // Phrases taken from the executed notebooks themselves: prose, code and a printed output.
  const nb = JSON.parse(fs.readFileSync(path.join(EXECUTED, '03-accumulation.ipynb'), 'utf8')) as Notebook;
  const prose = nb.cells.filter((c) => c.cell_type === 'markdown' && cellView(c).present).map((c) => cellSource(c).split('\n').filter((l) => !/^[#|$]/.test(l)).join(' ')).map((t) => phraseFrom(t)).find(Boolean)!;
  const code = nb.cells.filter((c) => c.cell_type === 'code' && cellView(c).present && cellView(c).input !== 'removed').flatMap((c) => cellSource(c).split('\n')).find((l) => /new GradientAccumulator\(/.test(l))!.trim().replace(/\(.*$/, '');
  const output = nb.cells
    .filter((c) => cellView(c).present && cellView(c).outputs !== 'removed')
    .flatMap((c) => c.outputs ?? [])
    .flatMap((o) => (o.output_type === 'stream' ? [Array.isArray(o.text) ? o.text.join('') : o.text] : []))
    .flatMap((t) => t.split('\n'))
    .map((l) => phraseFrom(l, 3))
    .find(Boolean)!;

  for (const [kind, phrase] of [['prose', prose], ['code', code], ['output', output]] as const) {
    it(`finds a phrase from ${kind} (“${phrase}”), highlights it and opens its section`, async () => {
      assert.ok(phrase, `a ${kind} phrase in notebook 3`);
      const { page, problems } = await open(context, new URL('search.html', fileBase).href);
      await page.fill('#q', phrase);
      await page.press('#q', 'Enter');
      const first = page.locator('#search-results li').first();
      await first.waitFor({ timeout: HANG_MS });
      const marked = await page.locator('#search-results li mark').allInnerTexts();
      assert.ok(marked.some((m) => m.toLowerCase() === phrase.toLowerCase()), `the phrase is highlighted; marks: ${marked.slice(0, 5).join(' | ')}`);
      // The result from notebook 3 (the same code may appear in other chapters too).
      const result = page.locator('#search-results li', { has: page.locator('a[href^="03-accumulation.html#"]') }).filter({ has: page.locator('mark', { hasText: phrase }) }).first();
      const href = (await result.locator('a').getAttribute('href'))!;
      assert.match(href, /^03-accumulation\.html#/);
      await result.locator('a').click();
      await page.waitForURL((u) => u.hash.length > 1);
      const hash = decodeURIComponent(new URL(page.url()).hash.slice(1));
      // The section: a cell, or the text from its heading to the next heading of its level.
      const found = await page.evaluate(
        ({ id, text }) => {
          const target = document.getElementById(id);
          if (!target) return 'no element';
          // (No helper functions in here: tsx would wrap them in a __name the page lacks.)
          const wanted = text.replace(/\s+/g, ' ').toLowerCase();
          if (target.classList.contains('code-cell')) return (target.textContent ?? '').replace(/\s+/g, ' ').toLowerCase().includes(wanted) ? 'ok' : 'not in the cell';
          const range = document.createRange();
          range.setStartBefore(target);
          const level = Number(target.tagName.slice(1));
          const next = Array.from(document.querySelectorAll('h1, h2, h3, h4')).find((h) => target.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING && Number(h.tagName.slice(1)) <= level);
          if (next) range.setEndBefore(next);
          else range.setEndAfter(document.querySelector('main')!.lastChild!);
          return range.toString().replace(/\s+/g, ' ').toLowerCase().includes(wanted) ? 'ok' : 'not in the section';
        },
        { id: hash, text: phrase },
      );
      assert.equal(found, 'ok', `${kind}: #${hash}`);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
});

describe('reader features', () => {
  it('remembers the theme toggle across pages, and otherwise follows prefers-color-scheme', async () => {
    const { page } = await open(context, new URL('index.html', fileBase).href);
    await page.emulateMedia({ colorScheme: 'dark' });
    // site.js updates the toggle on the media query's change event, which may come a moment later on a loaded machine.
    await page.waitForFunction(() => document.querySelector('.theme-toggle')?.getAttribute('aria-pressed') === 'true', null, { timeout: HANG_MS });
    await page.click('.theme-toggle');
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)');
    await page.goto(new URL('02-model.html', fileBase).href);
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)', 'light, as chosen, despite a dark system');
    await page.evaluate(() => localStorage.clear());
    await page.close();
  });

  it('prints every output whole and every chart as its static SVG', async () => {
    const chapter = pages.find((p) => fs.readFileSync(path.join(SITE, p), 'utf8').includes('class="plotly-data"'))!;
    const { page } = await open(context, new URL(chapter, fileBase).href);
    await drawCharts(page);
    await page.emulateMedia({ media: 'print' });
    const m = await page.evaluate(() => ({
      clipped: Array.from(document.querySelectorAll('.scroll-box')).filter((b) => b.scrollHeight > b.clientHeight + 1 || b.scrollWidth > b.clientWidth + 1).length,
      svgs: Array.from(document.querySelectorAll('.static-chart svg')).filter((s) => s.getBoundingClientRect().width > 0).length,
      plots: Array.from(document.querySelectorAll('.plotly-target')).filter((s) => s.getBoundingClientRect().height > 0).length,
      charts: document.querySelectorAll('.plotly-figure').length,
    }));
    assert.deepEqual(m, { clipped: 0, svgs: m.charts, plots: 0, charts: m.charts });
    await page.close();
  });

  it('gives every chapter a description, "On this page", permalinks, copy buttons and its notebook', async () => {
    for (const name of pages.filter(isChapter)) {
      const { page } = await open(context, new URL(name, fileBase).href);
      assert.ok(((await page.locator('meta[name="description"]').getAttribute('content')) ?? '').length > 20, `${name}: description`);
      assert.ok((await page.locator('nav.on-this-page a').count()) > 0, `${name}: On this page`);
      assert.ok((await page.locator('h2 a.anchor').count()) > 0, `${name}: permalinks`);
      assert.equal(await page.locator('.copy-button').count(), await page.locator('.code-cell .source').count(), `${name}: a copy button per code cell that shows its code`);
      const download = (await page.locator('a[download]').getAttribute('href'))!;
      assert.ok(fs.existsSync(path.join(SITE, path.dirname(name), decodeURIComponent(download))), `${name}: ${download}`);
      await page.close();
    }
  });
});

describe('a site from tagged cells', () => {
  it('collapses hide-input code, opens it for a link to its cell, and passes axe-core with every tag', async () => {
    const cell = (tags: string[], n: number) => ({ cell_type: 'code', metadata: { tags }, source: `console.log('code ${n}');`, execution_count: n, outputs: [{ output_type: 'stream', name: 'stdout', text: `output ${n}\n` }] });
    const nb = { nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: 'markdown', metadata: {}, source: '# Tagged\n\nA subtitle long enough for a description.\n\n## Cells' }, cell(['hide-input'], 2), cell(['remove-input'], 3), cell(['hide-output'], 4), cell(['remove-output'], 5)] };
    fs.mkdirSync(path.join(tmp, 'tagged'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'tagged', '01-tagged.ipynb'), JSON.stringify(nb));
    exportSite({ inDir: path.join(tmp, 'tagged'), outDir: path.join(tmp, 'tagged-site') });
    const url = pathToFileURL(path.join(tmp, 'tagged-site', '01-tagged.html')).href;
    const { page, problems } = await open(context, url);
    const opened = () => page.locator('details.cell-part').evaluateAll((ds) => ds.map((d) => (d as HTMLDetailsElement).open));
    assert.deepEqual(await opened(), [false, false], 'collapsed without a link to the cell (the negative case)');
    assert.equal(await page.locator('#cell-2 pre code').isVisible(), false);
    assert.equal(await page.locator('#cell-3 .output').isVisible(), true, 'remove-input keeps the output');
    assert.deepEqual(await axeViolations(page), [], 'axe-core on a page with every tag');
    await page.goto(`${url}#cell-2`);
    assert.deepEqual(await opened(), [true, false], 'a link to cell 2 opens its code');
    assert.equal(await page.locator('#cell-2 pre code').isVisible(), true);
    assert.deepEqual(problems, []);
    await page.close();
  });
});

describe('a site from hostile notebooks', () => {
  it('never runs their markup, creates their elements, loads a remote resource or lets an output cover the page (file://)', async () => {
    writeHostileNotebooks(path.join(tmp, 'hostile'));
    exportSite({ inDir: path.join(tmp, 'hostile'), outDir: path.join(tmp, 'hostile-site') });
    const site = path.join(tmp, 'hostile-site');
    const files = fs.readdirSync(site).filter((f) => f.endsWith('.html'));
    assert.ok(files.includes(`${HOSTILE.name}.html`) && files.includes(`${HOSTILE.scriptName}.html`) && files.includes('11-hostile-outputs.html'));
    const urls = [...files.map((f) => pathToFileURL(path.join(site, f)).href), `${pathToFileURL(path.join(site, 'search.html')).href}?q=pwned`];
    for (const url of urls) {
      const { page, problems } = await open(context, url);
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const remote: string[] = [];
      page.on('request', (r) => !/^(file|data):/.test(r.url()) && remote.push(r.url()));
      // Every request a page makes starts by its load event; an image-set or url() in a style with it.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const state = await page.evaluate(() => ({
        pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
        injected: document.querySelectorAll('img[src="x"], .output img, .output svg image').length,
        covering: Array.from(document.querySelectorAll('.output *')).filter((e) => ['fixed', 'sticky'].includes(getComputedStyle(e).position)).length,
        resources: performance.getEntriesByType('resource').map((e) => e.name).filter((n) => !/^(file|data):/.test(n)),
      }));
      assert.deepEqual(state, { pwned: null, injected: 0, covering: 0, resources: [] }, url);
      assert.deepEqual(remote, [], `${url}: requests off the site`);
      assert.deepEqual(dialogs, []);
      assert.deepEqual(problems, [], url);
      await page.close();
    }
    // Search links the javascript:-named page by its encoded name; following the link opens it.
    const { page: search } = await open(context, `${pathToFileURL(path.join(site, 'search.html')).href}?q=pwned`);
    const links = await search.evaluate(() => Array.from(document.querySelectorAll<HTMLAnchorElement>('#search-results a')).map((a) => ({ protocol: a.protocol, href: a.href })));
    assert.ok(links.length > 0, 'search finds the script-named page');
    assert.deepEqual(links.filter((l) => l.protocol !== 'file:'), [], 'every result is a link within the site');
    await Promise.all([search.waitForURL((u) => u.href.includes('javascript%3A')), search.locator('#search-results a', { hasText: 'Script-named' }).first().click()]);
    assert.equal(await search.evaluate(() => (window as unknown as { __pwned?: number }).__pwned ?? null), null);
    await search.close();
    // The negative case: the same markup, unescaped, does run in this browser.
    const probe = path.join(tmp, 'probe.html');
    fs.writeFileSync(probe, `<!doctype html><p>${HOSTILE.markup}</p>`);
    const { page } = await open(context, pathToFileURL(probe).href);
    await page.waitForFunction(() => (window as unknown as { __pwned?: number }).__pwned === 2, null, { timeout: HANG_MS });
    await page.close();
  });
});
