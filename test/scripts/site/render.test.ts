import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMarkdown, renderNotebook, runnerSummary, slugify } from '../../../scripts/site/render';
import type { Notebook } from '../../../scripts/notebooks/nbformat';
import { UI } from '../../../scripts/site/strings';

describe('createMarkdown', () => {
  const md = createMarkdown();

  it('puts tables and display math in labelled, focusable scroll boxes, numbered per page', () => {
    const out = md.render('| a | b |\n|---|---|\n| 1 | 2 |\n\n$$\nx^2\n$$\n', {});
    assert.match(out, /<div class="scroll-box" role="region" tabindex="0" aria-label="Table 1"><table>/);
    assert.match(out, /<div class="scroll-box" role="region" tabindex="0" aria-label="Equation 2">/);
  });

  it('puts fenced code in a labelled scroll box too, and makes an empty header cell an ordinary cell (axe: empty-table-header)', () => {
    const out = md.render('```sh\nnpm install\n```\n\n| | a |\n|---|---|\n| x | 1 |\n', { ui: UI['zh-CN'] });
    assert.match(out, /<div class="scroll-box" role="region" tabindex="0" aria-label="代码块 1"><pre><code class="language-sh">npm install\n<\/code><\/pre><\/div>/);
    assert.match(out, /<thead>\n<tr>\n<td><\/td><th>a<\/th>/);
    assert.doesNotMatch(out, /<th><\/th>/);
    assert.match(md.render('Text.\n\n    indented code\n', {}), /<div class="scroll-box" role="region" tabindex="0" aria-label="Code block 1"><pre><code>indented code\n<\/code><\/pre><\/div>/);
  });

  it('gives each heading a unique id and a visible permalink named after it', () => {
    const out = md.render('## Setup\n\n## Setup\n', {});
    assert.match(out, /<h2 id="setup">Setup <a class="anchor" href="#setup" aria-label="Link to this section: Setup">#<\/a><\/h2>/);
    assert.match(out, /<h2 id="setup-2">/);
  });

  it('keeps raw HTML in markdown as text', () => {
    assert.match(md.render('<script>x</script>', {}), /&lt;script&gt;x&lt;\/script&gt;/);
  });
});

describe('slugify', () => {
  it('keeps letters and digits of any script and joins the rest with dashes', () => {
    assert.equal(slugify('3. Where the **loss** goes'), '3-where-the-loss-goes');
    assert.equal(slugify('批量 归一化'), '批量-归一化');
    assert.equal(slugify('<>'), 'section');
  });
});

describe('runnerSummary', () => {
  it('reads the runner metadata, treating fields of the wrong type as absent', () => {
    const meta = { 'tfjs-accumulate': { runner: { status: 'failed', executedCells: 3, codeCells: '<b>', totalMs: 1500, executedAt: '<i>', error: { cell: '2"><x>', kind: 'timeout' } } } };
    assert.deepEqual(runnerSummary(meta), { status: 'failed', executedCells: 3, codeCells: null, totalMs: 1500, executedAt: null, error: { cell: null, kind: 'timeout' } });
    assert.equal(runnerSummary({}), null);
    assert.equal(runnerSummary({ 'tfjs-accumulate': { runner: { status: 'ok', executedAt: '2026-11-30T23:00:00.000Z' } } })?.executedAt, '2026-11-30T23:00:00.000Z');
  });
});

describe('renderNotebook', () => {
  it('indexes prose under its heading, and code and outputs under their cell', () => {
    const nb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [
        { cell_type: 'markdown', metadata: {}, source: '# Title\nThe subtitle.\n\n## First\nProse of the **first** section.\n```\n# not a heading\n```' },
        { cell_type: 'code', metadata: {}, source: 'console.log(1)', execution_count: 1, outputs: [{ output_type: 'stream', name: 'stdout', text: 'one\n' }] },
      ],
    } as unknown as Notebook;
    const page = renderNotebook('/x/03-x.ipynb', nb, createMarkdown(), []);
    assert.deepEqual(
      page.search.map((e) => [e.kind, e.section, e.sectionTitle, e.text]),
      [
        ['prose', 'title', 'Title', 'Title The subtitle.'],
        ['prose', 'first', 'First', 'First Prose of the first section. not a heading'],
        ['code', 'cell-2', 'First', 'console.log(1)'],
        ['output', 'cell-2', 'First', 'one\n'],
      ],
    );
    assert.equal(page.description, 'The subtitle.');
    assert.equal(page.lang, 'en');
  });

  it('wraps printed sentences, and keeps text drawn as a grid on its lines (negative case)', () => {
    const stream = (text: string) => ({ cell_type: 'code', metadata: {}, source: 'x', execution_count: 1, outputs: [{ output_type: 'stream', name: 'stdout', text }] });
    const nb = { nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [stream('A long conclusion, printed as one line.\n'), stream('┌───┬───┐\n│ a │ b │\n'), stream('a\tb\n')] } as unknown as Notebook;
    const body = renderNotebook('/x/06-x.ipynb', nb, createMarkdown(), []).body.value;
    assert.deepEqual([...body.matchAll(/<pre class="output stream stdout (\w+)">/g)].map((m) => m[1]), ['wrap', 'grid', 'grid']);
  });
});
