import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import vm from 'node:vm';
import { trusted } from '../../../scripts/site/html';
import type { ChapterPage } from '../../../scripts/site/model';
import { buildSearchIndex, searchIndexScript, tokenizerFor } from '../../../scripts/site/search';

const page = (file: string, search: ChapterPage['search']): ChapterPage => ({
  lang: 'en', notebook: file.replace('.html', '.ipynb'), file, title: file, subtitle: trusted(''), description: '', headings: [], body: trusted(''), plotlyOutputs: 0, hasMath: false, runner: null, search,
});

describe('buildSearchIndex', () => {
  it('keeps prose, code and outputs with their page and section, and a tokenizer per page language', () => {
    const index = buildSearchIndex([
      page('a.html', [{ kind: 'prose', section: 'intro', sectionTitle: 'Intro', text: 'Accumulate gradients' }]),
      page('b.html', [{ kind: 'code', section: 'cell-2', sectionTitle: 'Setup', text: 'const x = 1;' }, { kind: 'output', section: 'cell-2', sectionTitle: 'Setup', text: '</script>1' }]),
    ]);
    assert.deepEqual(index.pages.map((p) => [p.href, p.lang, p.tokenizer]), [['a.html', 'en', 'words'], ['b.html', 'en', 'words']]);
    assert.deepEqual(index.entries, [[0, 'intro', 'Intro', 'prose', 'Accumulate gradients'], [1, 'cell-2', 'Setup', 'code', 'const x = 1;'], [1, 'cell-2', 'Setup', 'output', '</script>1']]);
    assert.equal(tokenizerFor('en'), 'words');
    assert.equal(tokenizerFor('zh-CN'), 'bigram');
    const zh = buildSearchIndex([{ ...page('zh.html', []), lang: 'zh-CN' }]);
    assert.equal(zh.pages[0].tokenizer, 'bigram');
  });

  it('ships as a script that defines the index, with no text able to end a script element', () => {
    const index = buildSearchIndex([page('a.html', [{ kind: 'output', section: 's', sectionTitle: 'S', text: '</script><script>alert(1)</script>' }])]);
    const script = searchIndexScript(index);
    assert.doesNotMatch(script, /<\/script/i);
    const sandbox: { window: Record<string, unknown> } = { window: {} };
    vm.runInNewContext(script, sandbox);
    assert.deepEqual(JSON.parse(JSON.stringify(sandbox.window.TFJS_ACCUMULATE_SEARCH)), index); // across realms
  });
});

// The browser's tokenizers and matching rule (assets/tokenizers.js), loaded as the tests' module.
const T = require('../../../scripts/site/tokenizers.js') as {
  tokenizers: Record<'words' | 'bigram', (s: string) => string[]>;
  match: (name: string, query: string, text: string) => { found: number; first: number } | null;
};

describe('tokenizers.js', () => {
  it('cuts CJK runs into overlapping pairs and the rest into words', () => {
    assert.deepEqual(T.tokenizers.bigram('梯度累积'), ['梯度', '度累', '累积']);
    assert.deepEqual(T.tokenizers.bigram('用 GradientAccumulator 累积梯度'), ['用', 'gradientaccumulator', '累积', '积梯', '梯度']);
    assert.deepEqual(T.tokenizers.bigram('批'), ['批']);
    // A character outside the BMP (CJK extension B) stays whole.
    assert.deepEqual(T.tokenizers.bigram('𠀀字'), ['𠀀字']);
    assert.deepEqual(T.tokenizers.words('Accumulate, gradients!'), ['accumulate', 'gradients']);
  });

  it('finds a two-character word inside a longer run, which whitespace words miss (the negative case)', () => {
    const text = '每个微批次的梯度都加到累积器里';
    // As tokens: whitespace words make the whole sentence one token, bigrams hold the word.
    assert.ok(!T.tokenizers.words(text).includes('梯度'));
    assert.ok(T.tokenizers.bigram(text).includes('梯度'));
    // As queries: a query written as one run whose words sit apart in the text.
    assert.equal(T.match('words', '微批次梯度', text), null);
    assert.deepEqual(T.match('bigram', '微批次梯度', text), { found: 3, first: text.indexOf('微批') });
  });

  it('still requires the words of a query, and most of its pairs', () => {
    const text = '每个微批次的梯度都加到累积器里';
    assert.equal(T.match('bigram', '梯度 optimizer', text), null); // a word that is not there
    assert.equal(T.match('bigram', '学习率', text), null); // no pair there
    assert.equal(T.match('bigram', '梯度下降法', text), null); // 1 pair of 4 found, 3 needed
    assert.equal(T.match('bigram', '批次大小', text), null); // 1 of 3 found, 2 needed
    assert.equal(T.match('bigram', '', text), null);
    assert.ok(T.match('bigram', '累积器', text));
  });
});

describe('the search index links', () => {
  it('encode a page name as every other link of the site does, so a javascript: name stays a relative path', () => {
    const index = buildSearchIndex([page('javascript:window.__pwned=5;<!--.html', [])]);
    assert.equal(index.pages[0].href, 'javascript%3Awindow.__pwned%3D5%3B%3C!--.html');
    assert.equal(new URL(index.pages[0].href, 'https://example.org/site/').protocol, 'https:');
  });
});
