import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportSite } from '../../../scripts/site/exportSite';
import { linkedPages, missingChapterLinks } from '../../helpers/chapterLinks';

// Navigation on an exported site of three chapters per edition (enough for a chapter that is
// nobody's neighbour: 01 and 03 are not linked by the pager).
const nb = (title: string, section: string) => ({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: {},
  cells: [{ cell_type: 'markdown', metadata: {}, source: `# ${title}\n\nThe subtitle.\n\n## ${section}\n\nText.` }],
});

let tmp: string;
const read = (rel: string): string => fs.readFileSync(path.join(tmp, 'site', rel), 'utf8');
const EN = ['01-a.html', '02-b.html', '03-c.html'];
const ZH = EN.map((f) => `zh/${f}`);

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'site-nav-'));
  const inDir = path.join(tmp, 'executed');
  fs.mkdirSync(path.join(inDir, 'zh'), { recursive: true });
  ['A', 'B', 'C'].forEach((t, i) => {
    fs.writeFileSync(path.join(inDir, `0${i + 1}-${t.toLowerCase()}.ipynb`), JSON.stringify(nb(`${i + 1}. Chapter ${t}`, `Section ${t}`)));
    fs.writeFileSync(path.join(inDir, 'zh', `0${i + 1}-${t.toLowerCase()}.ipynb`), JSON.stringify(nb(`第 ${i + 1} 章 ${t}`, `小节 ${t}`)));
  });
  exportSite({ inDir, outDir: path.join(tmp, 'site') });
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('linkedPages', () => {
  it('resolves links from the page\'s folder and drops fragments, other sites and the page\'s own anchors', () => {
    const html = '<a href="02-b.html#x">b</a><a href="../index.html">i</a><a href="https://example.org/03-c.html">e</a><a href="#top">t</a><a class="x" href="03%20c.html">c</a>';
    assert.deepEqual([...linkedPages('zh/01-a.html', html)].sort(), ['index.html', 'zh/02-b.html', 'zh/03 c.html']);
  });
});

describe('every chapter page links every other chapter', () => {
  it('holds in both editions', () => {
    assert.deepEqual(missingChapterLinks(EN, read), new Map());
    assert.deepEqual(missingChapterLinks(ZH, read), new Map());
  });

  it('fails for pages with only the previous/next links (negative case)', () => {
    const pagerOnly = (rel: string): string => read(rel).replace(/<nav class="chapter-nav"[\s\S]*?<\/nav>/, '').replace(/<details class="chapter-menu">[\s\S]*?<\/details>/, '');
    assert.deepEqual(missingChapterLinks(EN, pagerOnly), new Map([['01-a.html', ['03-c.html']], ['03-c.html', ['01-a.html']]]));
    assert.deepEqual(missingChapterLinks(ZH, pagerOnly), new Map([['zh/01-a.html', ['zh/03-c.html']], ['zh/03-c.html', ['zh/01-a.html']]]));
  });

  it('marks the current chapter in the sidebar and in the menu, and the contents on the index', () => {
    const page = read('02-b.html');
    assert.equal(page.match(/<a href="02-b.html" aria-current="page">2\. Chapter B<\/a>/g)?.length, 2, 'sidebar and menu');
    assert.match(read('index.html'), /<nav class="chapter-nav" aria-label="Chapters"><p class="chapter-nav-home"><a href="index.html" aria-current="page">Contents<\/a>/);
    assert.match(read('search.html'), /<nav class="chapter-nav"/);
  });
});

describe('the chrome of the navigation', () => {
  it('puts "On this page" right after the title as a disclosure, and the sections under the current chapter in the sidebar', () => {
    const page = read('01-a.html');
    assert.match(page, /<\/h1>\n?<nav class="on-this-page" aria-label="On this page"><details><summary>On this page<\/summary><ol><li><a href="#section-a">Section A<\/a><\/li><\/ol><\/details><\/nav>/);
    const sidebar = /<nav class="chapter-nav"[\s\S]*?<\/nav>/.exec(page)![0];
    assert.match(sidebar, /<a href="01-a.html" aria-current="page">1\. Chapter A<\/a><ol class="sections" aria-label="On this page"><li><a href="#section-a">Section A<\/a><\/li><\/ol><\/li><li><a href="02-b.html">2\. Chapter B<\/a><\/li>/);
    assert.doesNotMatch(sidebar, /Section B/, "other chapters' sections stay on their pages");
    assert.match(page, /<div class="page with-nav">\n<nav class="chapter-nav"[\s\S]*<main/);
  });

  it('speaks Chinese on Chinese pages: menu, sidebar, "On this page", pager', () => {
    const page = read('zh/03-c.html');
    assert.match(page, /<span class="menu-word">章节<\/span>/);
    assert.match(page, /<p class="menu-search"><a href="search.html">搜索<\/a><\/p><\/nav><\/details>/, 'the menu links search, for screens without the header box');
    assert.match(page, /<nav class="chapter-nav" aria-label="章节"><p class="chapter-nav-home"><a href="index.html">目录<\/a>/);
    assert.match(page, /<summary>本页内容<\/summary>/);
    assert.match(page, /<nav class="pager" aria-label="上一章和下一章"><a rel="prev" href="02-b.html">← 第 2 章 B<\/a>/);
    for (const s of ['Chapters', 'Contents', 'On this page', 'Previous and next', 'Show code', 'a chapter of']) assert.ok(!page.includes(s), s);
  });
});
