import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docPageHtml, listDocs, referenceList, renderDoc } from '../../../scripts/site/docsPages';
import { exportSite } from '../../../scripts/site/exportSite';
import { createMarkdown } from '../../../scripts/site/render';
import type { SiteMap } from '../../../scripts/site/repoLinks';

// A repository written here: package.json, two docs pages that link each other, the chapters
// and a source file, and one chapter per edition that links the docs as the real ones do.
let tmp: string;
let repo: string;
const GUARANTEES = '# Guarantees\n\nWhat holds.\n\n## Limits\n\nSee [testing](testing.md#how) and [`x.ts`](../test/x.ts). $a^2$\n\n<script>alert(1)</script>\n';
const TESTING = '# Testing\n\n## How\n\nBack to [the limits](guarantees.md#limits) and [chapter one](../notebooks/01-one.ipynb).\n';

function writeRepo(dir: string, repository?: string): void {
  fs.mkdirSync(path.join(dir, 'docs'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'test'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fixture-lib', peerDependencies: { '@tensorflow/tfjs': '^4.0.0' }, ...(repository ? { repository } : {}) }));
  fs.writeFileSync(path.join(dir, 'docs', 'guarantees.md'), GUARANTEES);
  fs.writeFileSync(path.join(dir, 'docs', 'testing.md'), TESTING);
  fs.writeFileSync(path.join(dir, 'docs', 'notes.txt'), 'not a page');
  fs.writeFileSync(path.join(dir, 'test', 'x.ts'), 'export {};\n');
}

function writeNotebooks(dir: string): void {
  fs.mkdirSync(path.join(dir, 'zh'), { recursive: true });
  const nb = (source: string) => JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: 'markdown', metadata: {}, source }] });
  fs.writeFileSync(path.join(dir, '01-one.ipynb'), nb('# One\n\nThe first.\n\nThe [limits](../docs/guarantees.md#limits).'));
  fs.writeFileSync(path.join(dir, 'zh', '01-one.ipynb'), nb('# 第一章\n\n第一章。\n\n[限制](../../docs/guarantees.md#limits)。'));
}

const emptyMap: SiteMap = { notebooks: new Map([['notebooks/01-one.ipynb', '01-one.html']]), docs: new Set(['guarantees.md', 'testing.md']), stat: (p) => (p === 'test/x.ts' ? 'file' : null), repository: null };

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docsPages-test-'));
  repo = path.join(tmp, 'repo');
  writeRepo(repo);
  writeNotebooks(path.join(tmp, 'executed'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('renderDoc and docPageHtml', () => {
  it('lists the markdown files only, and renders one with ids, math, links rewritten and raw HTML as text', () => {
    assert.deepEqual(listDocs(path.join(repo, 'docs')), ['guarantees.md', 'testing.md']);
    const errors: string[] = [];
    const doc = renderDoc(path.join(repo, 'docs'), 'guarantees.md', createMarkdown(), emptyMap, '', 'en', errors);
    assert.deepEqual(errors, []);
    assert.equal(doc.title, 'Guarantees');
    assert.equal(doc.file, 'guarantees.html');
    assert.ok(doc.hasMath);
    assert.match(doc.body.value, /<h2 id="limits">Limits <a class="anchor" href="#limits"/);
    assert.match(doc.body.value, /<a href="testing.html#how">testing<\/a> and <code>x.ts<\/code>/);
    assert.match(doc.body.value, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });

  it("frames a Chinese edition's copy in Chinese chrome, says the text is English, and reaches the site's root from two folders down", () => {
    const doc = renderDoc(path.join(repo, 'docs'), 'testing.md', createMarkdown(), emptyMap, 'zh/', 'zh-CN', []);
    const page = docPageHtml({ lang: 'zh-CN', dir: 'zh/', chapters: [{ file: '01-one.html', title: '第一章' }], other: { lang: 'en', dir: '' }, repository: null }, doc);
    assert.match(page, /^<!doctype html>\n<html lang="zh-CN">/);
    assert.match(page, /<p class="doc-note">这份参考文档目前只有英文版。<\/p>\n<section class="markdown-cell doc" lang="en"><h1 id="testing">/);
    assert.match(page, /href="\.\.\/\.\.\/assets\/site\.css"/);
    assert.match(page, /<a class="home" href="\.\.\/index.html">/);
    assert.match(page, /action="\.\.\/search.html"/);
    assert.match(page, /<li><a href="\.\.\/01-one.html">第一章<\/a><\/li>/);
    assert.match(page, /<a class="lang-link" href="\.\.\/\.\.\/docs\/testing.html" hreflang="en"/);
    assert.match(page, /源文件: <code>docs\/testing.md<\/code>/);
  });

  it('lists the pages on the index under "Reference"', () => {
    const doc = renderDoc(path.join(repo, 'docs'), 'testing.md', createMarkdown(), emptyMap, '', 'en', []);
    assert.match(referenceList({ lang: 'en' }, [doc]).value, /<h2 id="reference">Reference<\/h2>[\s\S]*<li><a href="docs\/testing.html">Testing<\/a><\/li>/);
    assert.equal(referenceList({ lang: 'en' }, []).value, '');
  });
});

describe('exportSite with docs/', () => {
  const read = (site: string, rel: string): string => fs.readFileSync(path.join(tmp, site, rel), 'utf8');

  it("writes each edition's docs pages, the chapters' links reach them, and the index says how to get the code", () => {
    const report = exportSite({ inDir: path.join(tmp, 'executed'), outDir: path.join(tmp, 'site'), repoRoot: repo });
    assert.deepEqual(report.docs.map((f) => path.relative(path.join(tmp, 'site'), f).split(path.sep).join('/')), ['docs/guarantees.html', 'docs/testing.html', 'zh/docs/guarantees.html', 'zh/docs/testing.html']);
    assert.match(read('site', '01-one.html'), /<a href="docs\/guarantees.html#limits">limits<\/a>/);
    assert.match(read('site', 'zh/01-one.html'), /<a href="docs\/guarantees.html#limits">限制<\/a>/);
    assert.match(read('site', 'docs/testing.html'), /<a href="\.\.\/01-one.html">chapter one<\/a>/);
    assert.match(read('site', 'index.html'), /<code>npm install fixture-lib @tensorflow\/tfjs<\/code>/);
    assert.match(read('site', 'zh/index.html'), /<h2 id="get-the-code">获取代码<\/h2>/);
    assert.match(read('site', 'zh/index.html'), /<li><a href="docs\/guarantees.html">Guarantees<\/a><\/li>/);
    assert.match(read('site', 'docs/guarantees.html'), /<code>x.ts<\/code>/);
  });

  it('links source files and the notebooks into the repository when package.json names one', () => {
    const withRepo = path.join(tmp, 'repo-github');
    writeRepo(withRepo, 'github:o/r');
    exportSite({ inDir: path.join(tmp, 'executed'), outDir: path.join(tmp, 'site-github'), repoRoot: withRepo });
    assert.match(read('site-github', 'docs/guarantees.html'), /<a href="https:\/\/github.com\/o\/r\/blob\/HEAD\/test\/x.ts"><code>x.ts<\/code><\/a>/);
    assert.match(read('site-github', 'index.html'), /repository <a href="https:\/\/github.com\/o\/r">/);
    assert.match(read('site-github', 'zh/01-one.html'), /href="https:\/\/github.com\/o\/r\/blob\/HEAD\/notebooks\/zh\/01-one.ipynb"/);
  });
});
