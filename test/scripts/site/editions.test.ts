import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import vm from 'node:vm';
import { exportSite } from '../../../scripts/site/exportSite';
import type { SearchIndex } from '../../../scripts/site/search';

// The two editions, from notebooks written here: English in DIR, Chinese in DIR/zh (one chapter
// with a twin, one English chapter without). test/e2e/siteZh.e2e.ts opens a site made from the
// really executed notebooks.
const md = (source: string) => ({ cell_type: 'markdown', metadata: {}, source });
const code = (source: string, text: string) => ({ cell_type: 'code', metadata: {}, source, outputs: [{ output_type: 'stream', name: 'stdout', text }], execution_count: 1 });
const nb = (cells: unknown[]) => ({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells });

let tmp: string;
const read = (rel: string): string => fs.readFileSync(path.join(tmp, 'site', rel), 'utf8');

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'site-editions-'));
  const inDir = path.join(tmp, 'executed');
  fs.mkdirSync(path.join(inDir, 'zh'), { recursive: true });
  const write = (rel: string, v: unknown): void => fs.writeFileSync(path.join(inDir, rel), JSON.stringify(v));
  write('01-one.ipynb', nb([md('# 1. One\n\nThe first chapter.\n\n## Setup\n\nText.'), code('console.log(1);', '1\n')]));
  write('02-two.ipynb', nb([md('# 2. Two\n\nOnly in English.'), code('console.log(2);', '2\n')]));
  write('zh/01-one.ipynb', nb([md('# 1. 第一章\n\n第一章讲梯度累积。\n\n## 准备 <script>alert(1)</script>\n\n每个微批次的梯度都加到累积器里。'), code('console.log(1); // 打印', '一\n')]));
  exportSite({ inDir, outDir: path.join(tmp, 'site') });
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the Chinese edition', () => {
  it('writes zh/ pages with lang="zh-CN", its own index and search page, and the zh notebooks for download', () => {
    for (const rel of ['zh/01-one.html', 'zh/index.html', 'zh/search.html']) assert.match(read(rel), /^<!doctype html>\n<html lang="zh-CN">/, rel);
    assert.match(read('01-one.html'), /<html lang="en">/);
    assert.ok(fs.existsSync(path.join(tmp, 'site', 'notebooks', 'zh', '01-one.ipynb')));
    assert.match(read('zh/01-one.html'), /href="\.\.\/notebooks\/zh\/01-one\.ipynb" download/);
    assert.match(read('zh/01-one.html'), /href="\.\.\/assets\/site\.css"/);
    assert.ok(!fs.existsSync(path.join(tmp, 'site', 'zh', '02-two.html')));
  });

  it('resolves every local link and asset of a zh page from its folder', () => {
    for (const rel of ['zh/01-one.html', 'zh/index.html', 'zh/search.html']) {
      for (const [, ref] of read(rel).matchAll(/(?:src|href)="([^"#]+)"/g)) {
        if (/^(data|https?):/.test(ref)) continue;
        assert.ok(fs.existsSync(path.join(tmp, 'site', 'zh', decodeURIComponent(ref))), `${rel}: ${ref} is missing`);
      }
    }
  });

  it('links each page to its twin, or to the other index when it has none, visibly and with hreflang', () => {
    const visible = (rel: string) => /<a class="lang-link" href="([^"]*)" hreflang="([^"]*)" lang="\2">/.exec(read(rel))?.slice(1);
    assert.deepEqual(visible('01-one.html'), ['zh/01-one.html', 'zh-CN']);
    assert.deepEqual(visible('zh/01-one.html'), ['../01-one.html', 'en']);
    assert.deepEqual(visible('02-two.html'), ['zh/index.html', 'zh-CN']);
    assert.deepEqual(visible('zh/index.html'), ['../index.html', 'en']);
    assert.deepEqual(visible('search.html'), ['zh/search.html', 'zh-CN']);
    // Without --site-url, the head's link is added by a script, resolved against the page's URL.
    assert.match(read('zh/01-one.html'), /<script>\(function\(\)\{var l=document\.createElement\('link'\);l\.rel='alternate';l\.hreflang="en";l\.href=new URL\("\.\.\/01-one\.html",location\.href\)/);
  });

  it('with --site-url, writes fully-qualified hreflang links in the head', () => {
    const out = path.join(tmp, 'site-url');
    exportSite({ inDir: path.join(tmp, 'executed'), outDir: out, siteUrl: 'https://example.org/tut/' });
    const zh = fs.readFileSync(path.join(out, 'zh', '01-one.html'), 'utf8');
    assert.match(zh, /<link rel="alternate" hreflang="en" href="https:\/\/example\.org\/tut\/01-one\.html">/);
    assert.match(fs.readFileSync(path.join(out, '01-one.html'), 'utf8'), /<link rel="alternate" hreflang="zh-CN" href="https:\/\/example\.org\/tut\/zh\/01-one\.html">/);
    assert.doesNotMatch(zh, /var l=document/);
  });

  it('puts the chrome in Chinese on Chinese pages, and escapes their text as everywhere', () => {
    const page = read('zh/01-one.html');
    for (const s of ['跳到正文', '本页内容', '搜索教程', '深色', '目录', '下载运行后的 notebook', '"copy":"复制"', '第 2 个单元的代码']) assert.ok(page.includes(s), s);
    for (const s of ['Skip to content', 'On this page', '>Dark<', '"copy":"Copy"']) assert.ok(!page.includes(s), s);
    assert.ok(read('01-one.html').includes('Skip to content'));
    assert.ok(!page.includes('<script>alert(1)'), 'markup in a zh heading stays text');
  });

  it('lists both editions on both indexes', () => {
    assert.match(read('index.html'), /<section lang="zh-CN" aria-labelledby="other-edition">[\s\S]*<a href="zh\/01-one\.html">1\. 第一章<\/a>/);
    assert.match(read('zh/index.html'), /<section lang="en" aria-labelledby="other-edition">[\s\S]*<a href="\.\.\/01-one\.html">1\. One<\/a>[\s\S]*<a href="\.\.\/02-two\.html">/);
  });

  it('ships one search index per edition, the Chinese one with the bigram tokenizer', () => {
    const load = (rel: string): SearchIndex => {
      const sandbox: { window: Record<string, unknown> } = { window: {} };
      vm.runInNewContext(fs.readFileSync(path.join(tmp, 'site', 'assets', rel), 'utf8'), sandbox);
      return JSON.parse(JSON.stringify(sandbox.window.TFJS_ACCUMULATE_SEARCH)) as SearchIndex; // across realms
    };
    const zh = load('search-index.zh-CN.js');
    assert.deepEqual(zh.pages.map((p) => [p.href, p.lang, p.tokenizer]), [['01-one.html', 'zh-CN', 'bigram']]);
    assert.ok(zh.entries.some((e) => e[4].includes('微批次的梯度')));
    assert.deepEqual(load('search-index.js').pages.map((p) => p.tokenizer), ['words', 'words']);
    assert.match(read('zh/search.html'), /src="\.\.\/assets\/search-index\.zh-CN\.js"[\s\S]*src="\.\.\/assets\/tokenizers\.js"[\s\S]*src="\.\.\/assets\/search\.js"/);
  });
});
