import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { cellSource, type Notebook } from '../../scripts/notebooks/nbformat';
import { launchPersistent } from '../helpers/chromium';
import { checkEach, open } from '../helpers/site';
import { missingChapterLinks } from '../helpers/chapterLinks';
import { HANG_MS } from '../helpers/ceilings';

// The site's two editions in Debian's Chromium, over file://: the language links (both ways, on
// every page), Chinese drawn with real CJK glyphs from a system font (no tofu, no web font), and
// search in the Chinese edition with bigram matching. Accessibility and phone widths of the
// Chinese pages are checked with every other page in site.e2e.ts.
const ROOT = path.resolve(__dirname, '..', '..');
const SITE = path.resolve(process.env.SITE_DIR ?? path.join(ROOT, 'build', 'site'));
const EXECUTED = path.resolve(process.env.EXECUTED_DIR ?? path.join(ROOT, 'build', 'notebooks'));
const SCREENSHOT = path.join(ROOT, 'build', 'site-zh.png');

const html = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.html')).sort() : []);
const en = html(SITE);
const zh = html(path.join(SITE, 'zh'));
const fileUrl = (rel: string): string => pathToFileURL(path.join(SITE, rel)).href;

let tmp: string;
let context: BrowserContext;

before(async () => {
  assert.ok(zh.includes('index.html'), `no Chinese edition in ${path.relative(ROOT, SITE)}/zh; run \`npm run notebooks && npm run site\` first`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'site-zh-e2e-'));
  context = await launchPersistent(path.join(tmp, 'profile'), { viewport: { width: 390, height: 844 } });
});
after(async () => {
  await context?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The page a language link from `rel` must land on: the twin, else the other edition's index. */
function twinOf(rel: string): string {
  const [dir, name] = rel.startsWith('zh/') ? ['', rel.slice(3)] : ['zh/', rel];
  const others = dir ? zh : en;
  return dir + (others.includes(name) ? name : 'index.html'); // search.html and index.html always have a twin
}

describe('language links', () => {
  it('every page links to its twin in the other language (hreflang in the head and in the header), and a click lands there', async () => {
    assert.ok(zh.length >= 3 && en.length >= 3);
    await checkEach([...en, ...zh], async (rel) => {
      const { page, problems } = await open(context, fileUrl(rel));
      const target = twinOf(rel);
      const lang = rel.startsWith('zh/') ? 'zh-CN' : 'en';
      const other = lang === 'en' ? 'zh-CN' : 'en';
      const m = await page.evaluate(() => ({
        lang: document.documentElement.lang,
        head: Array.from(document.head.querySelectorAll('link[rel="alternate"][hreflang]')).map((l) => [l.getAttribute('hreflang'), (l as HTMLLinkElement).href]),
        visible: Array.from(document.querySelectorAll('a.lang-link')).map((a) => [a.getAttribute('hreflang'), (a as HTMLAnchorElement).href, (a as HTMLElement).offsetParent !== null]),
      }));
      assert.equal(m.lang, lang, rel);
      assert.deepEqual(m.head, [[other, fileUrl(target)]], `${rel}: the head's alternate`);
      assert.deepEqual(m.visible, [[other, fileUrl(target), true]], `${rel}: the visible link`);
      await page.click('a.lang-link');
      await page.waitForURL(fileUrl(target));
      assert.equal(await page.evaluate(() => document.documentElement.lang), other, `${rel} → ${target}`);
      assert.deepEqual(problems, [], rel);
      await page.close();
    });
  });

  it('comes back: from a twin, the link leads to the page it came from', async () => {
    for (const rel of zh) {
      const target = twinOf(rel);
      if (twinOf(target) !== rel) continue; // an English chapter without a Chinese twin leads to the zh index
      const { page } = await open(context, fileUrl(target));
      await page.click('a.lang-link');
      await page.waitForURL(fileUrl(rel));
      await page.close();
    }
  });

  it('lists both editions on both indexes', async () => {
    for (const [rel, otherPages, prefix] of [['index.html', zh, 'zh/'], ['zh/index.html', en, '../']] as const) {
      const { page } = await open(context, fileUrl(rel));
      const links = await page.locator('section[aria-labelledby="other-edition"] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      const chapters = otherPages.filter((p) => /^\d/.test(p));
      assert.deepEqual(links, chapters.map((p) => prefix + p), rel);
      const own = await page.locator('ul.toc').first().locator(':scope > li > a').count();
      assert.equal(own, (rel === 'index.html' ? en : zh).filter((p) => /^\d/.test(p)).length);
      await page.close();
    }
  });
});

describe('chapter navigation, in both editions', () => {
  // Every chapter page links every other chapter (test/helpers/chapterLinks.ts; its negative case
  // is in test/scripts/site/nav.test.ts), and the reader can see those links: in the sidebar at
  // 1280 px, in the header's menu once opened at 390 px.
  const editions = [en.filter((p) => /^\d/.test(p)), zh.filter((p) => /^\d/.test(p)).map((p) => `zh/${p}`)];

  it('every chapter page links every other chapter', () => {
    for (const chapters of editions) assert.deepEqual(missingChapterLinks(chapters, (rel) => fs.readFileSync(path.join(SITE, rel), 'utf8')), new Map());
  });

  for (const [width, where] of [[1280, '.chapter-nav'], [390, '.chapter-menu-list']] as const) {
    it(`shows every chapter at ${width} px (${where}), the current one marked`, async () => {
      for (const chapters of editions) {
        await checkEach(chapters, async (rel) => {
          const { page, problems } = await open(context, fileUrl(rel));
          await page.setViewportSize({ width, height: 800 });
          if (width < 992) await page.click('.chapter-menu > summary');
          const shown = await page.locator(`${where} > ol > li > a`).evaluateAll((as) =>
            as.filter((a) => (a as HTMLElement).offsetParent !== null && a.getBoundingClientRect().width > 0).map((a) => [a.getAttribute('href'), a.getAttribute('aria-current')]),
          );
          assert.deepEqual(shown, chapters.map((c) => [path.basename(c), c === rel ? 'page' : null]), `${rel} at ${width} px`);
          if (width >= 992) {
            // On wide screens the current chapter's sections sit under it, as "On this page".
            const sections = await page.locator('.chapter-nav a[aria-current="page"] + ol.sections a').count();
            assert.equal(sections, await page.locator('main .on-this-page ol a').count(), `${rel}: its sections in the sidebar`);
          }
          // The other form of the list is not shown (nor announced) at this width.
          const other = width < 992 ? '.chapter-nav' : '.chapter-menu';
          assert.equal(await page.locator(other).evaluate((e) => getComputedStyle(e).display), 'none', `${rel}: ${other} hidden at ${width} px`);
          assert.deepEqual(problems, [], rel);
          await page.close();
        });
      }
    });
  }
});

/** Distinct CJK characters of the page's first prose paragraph. */
async function cjkSample(page: Page): Promise<{ chars: string[]; font: string }> {
  return page.evaluate(() => {
    const p = Array.from(document.querySelectorAll('main .markdown-cell p')).find((e) => /[\u4e00-\u9fff]{6}/.test(e.textContent ?? ''))!;
    const chars = Array.from(new Set(Array.from((p.textContent ?? '').matchAll(/[\u4e00-\u9fff]/g), (m) => m[0]))).slice(0, 8);
    const s = getComputedStyle(p);
    return { chars, font: `${s.fontSize} ${s.fontFamily}` };
  });
}

/** Each string drawn alone in `font` on a canvas, as pixels (alpha channel), in page. */
async function glyphPixels(page: Page, font: string, strings: string[]): Promise<string[]> {
  return page.evaluate(
    ({ font, strings }) =>
      strings.map((s) => {
        const c = document.createElement('canvas');
        c.width = 40;
        c.height = 40;
        const g = c.getContext('2d')!;
        g.font = font.replace(/^\S+/, '24px');
        g.fillText(s, 4, 30);
        const d = g.getImageData(0, 0, 40, 40).data;
        let bits = '';
        for (let i = 3; i < d.length; i += 4) bits += d[i] > 127 ? '1' : '0';
        return bits;
      }),
    { font, strings },
  );
}

describe('Chinese glyphs', () => {
  it('draws a zh chapter with a system CJK font (no web font), and distinct characters as distinct glyphs, not tofu', async () => {
    const { page, problems } = await open(context, fileUrl('zh/03-accumulation.html'));
    await page.screenshot({ path: SCREENSHOT });
    // What Chromium actually drew the first Chinese paragraph with.
    const cdp = await context.newCDPSession(page);
    const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
    await cdp.send('CSS.enable');
    const paragraphs = (await cdp.send('DOM.querySelectorAll', { nodeId: root.nodeId, selector: 'main .markdown-cell p' })).nodeIds;
    const fonts = (await cdp.send('CSS.getPlatformFontsForNode', { nodeId: paragraphs[1] ?? paragraphs[0] })).fonts;
    const cjk = fonts.filter((f) => /CJK|Han|Hei|Song|PingFang|YaHei/i.test(f.familyName));
    assert.ok(cjk.length > 0 && cjk.some((f) => f.glyphCount > 10), `CJK text drawn by a CJK font; got ${JSON.stringify(fonts)}`);
    assert.ok(fonts.every((f) => !f.isCustomFont), 'no web font');
    const faces = await page.evaluate(() => Array.from(document.fonts as unknown as Iterable<FontFace>, (f) => f.family));
    assert.deepEqual(faces.filter((f) => !/^"?KaTeX_/.test(f)), [], 'the only web fonts are KaTeX fonts, for math');
    // The glyphs themselves: distinct characters draw distinct, inked pixels, none the notdef box.
    const { chars, font } = await cjkSample(page);
    assert.ok(chars.length >= 6, chars.join(''));
    const tofu = '\u{10FFFD}'; // a private-use code point no installed font maps: the fallback box
    const drawn = await glyphPixels(page, font, [...chars, tofu]);
    const box = drawn.pop()!;
    for (const [i, bits] of drawn.entries()) {
      assert.ok(bits.includes('1'), `${chars[i]} is inked`);
      assert.notEqual(bits, box, `${chars[i]} is not the fallback box`);
    }
    assert.equal(new Set(drawn).size, drawn.length, `${chars.join('')}: each character its own glyph`);
    assert.deepEqual(problems, []);
    await cdp.detach();
    await page.close();
  });

  it('tells tofu apart: code points no font has all draw the same box (the negative case)', async () => {
    const { page } = await open(context, fileUrl('zh/index.html'));
    const font = await page.evaluate(() => `${getComputedStyle(document.body).fontSize} ${getComputedStyle(document.body).fontFamily}`);
    const boxes = await glyphPixels(page, font, ['\u{10FFFD}', '\u{10FFFC}', '\u{10FFFB}']);
    assert.equal(new Set(boxes).size, 1, 'unmapped code points share one fallback glyph, so the check above can fail');
    await page.close();
  });
});

describe('search in the Chinese edition (file://)', () => {
  const nb = JSON.parse(fs.readFileSync(path.join(EXECUTED, 'zh', '03-accumulation.ipynb'), 'utf8')) as Notebook;
  // Runs of Chinese text from prose (not headings, tables or math), as the reader sees them.
  const runs = nb.cells
    .filter((c) => c.cell_type === 'markdown')
    .flatMap((c) => cellSource(c).split('\n').filter((l) => !/^[#|$]/.test(l)))
    .flatMap((l) => l.replace(/\$[^$]*\$|`[^`]*`|\*\*|\[|\]\([^)]*\)/g, ' ').match(/[\u4e00-\u9fff]{8,}/g) ?? []);
  const phrase = runs[0]?.slice(1, 7);
  // Two words apart in one run: the query joins them, so no section holds the query as written.
  const apart = runs.find((r) => r.length >= 10);
  const joined = apart ? apart.slice(0, 3) + apart.slice(6, 9) : undefined;

  async function searchFor(q: string): Promise<{ page: Page; problems: string[]; hrefs: string[] }> {
    const { page, problems } = await open(context, fileUrl('zh/search.html'));
    await page.fill('#q', q);
    await page.press('#q', 'Enter');
    await page.waitForFunction(() => (document.getElementById('search-status')?.textContent ?? '') !== '', null, { timeout: HANG_MS });
    const hrefs = await page.locator('#search-results li > a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
    return { page, problems, hrefs };
  }

  it(`finds a phrase from prose (“${phrase}”), highlights it, and opens its section`, async () => {
    assert.ok(phrase && phrase.length === 6, 'a Chinese phrase in the prose of notebook 3');
    const { page, problems, hrefs } = await searchFor(phrase);
    assert.ok(hrefs.some((h) => h.startsWith('03-accumulation.html#')), `results: ${hrefs.join(', ')}`);
    const result = page.locator('#search-results li', { has: page.locator('a[href^="03-accumulation.html#"]') }).filter({ has: page.locator('mark', { hasText: phrase }) }).first();
    assert.match(await page.locator('#search-status').innerText(), /[\u4e00-\u9fff]/, 'the status in Chinese');
    await result.locator('a').click();
    await page.waitForURL((u) => u.pathname.endsWith('/zh/03-accumulation.html') && u.hash.length > 1);
    const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
    const found = await page.evaluate(
      ({ id, text }) => {
        const target = document.getElementById(id);
        if (!target) return 'no element';
        const range = document.createRange();
        range.setStartBefore(target);
        const level = Number(target.tagName.slice(1));
        const next = Array.from(document.querySelectorAll('h1, h2, h3, h4')).find((h) => target.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING && Number(h.tagName.slice(1)) <= level);
        if (next) range.setEndBefore(next);
        else range.setEndAfter(document.querySelector('main')!.lastChild!);
        return range.toString().replace(/\s+/g, '').includes(text) ? 'ok' : 'not in the section';
      },
      { id, text: phrase },
    );
    assert.equal(found, 'ok', `#${id}`);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it(`finds words apart in the text from a query written as one run (“${joined}”), which whole-word matching misses`, async () => {
    assert.ok(apart && joined, 'a run of 10 Chinese characters in notebook 3');
    const text = fs.readFileSync(path.join(SITE, 'assets', 'search-index.zh-CN.js'), 'utf8');
    assert.ok(!text.includes(joined), 'the query as written is nowhere in the index: a substring or whitespace-word search finds nothing');
    const { page, problems, hrefs } = await searchFor(joined);
    assert.ok(hrefs.some((h) => h.startsWith('03-accumulation.html#')), `results: ${hrefs.join(', ')}`);
    assert.deepEqual(problems, []);
    await page.close();
    // And a query of characters the edition never uses finds nothing.
    const none = await searchFor('鑫鑫鑫鑫');
    assert.deepEqual(none.hrefs, []);
    await none.page.close();
  });
});
