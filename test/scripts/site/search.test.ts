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
    assert.deepEqual(index.pages.map((p) => [p.file, p.lang, p.tokenizer]), [['a.html', 'en', 'words'], ['b.html', 'en', 'words']]);
    assert.deepEqual(index.entries, [[0, 'intro', 'Intro', 'prose', 'Accumulate gradients'], [1, 'cell-2', 'Setup', 'code', 'const x = 1;'], [1, 'cell-2', 'Setup', 'output', '</script>1']]);
    assert.equal(tokenizerFor('en'), 'words');
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
