import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cellTags, cellView } from '../../../scripts/site/cellTags';
import { createMarkdown, renderNotebook } from '../../../scripts/site/render';
import type { Notebook } from '../../../scripts/notebooks/nbformat';

const tagged = (...tags: unknown[]) => ({ metadata: { tags } });

describe('cellView', () => {
  it('reads the tags as Jupyter Book and nbconvert define them', () => {
    assert.deepEqual(cellView({ metadata: {} }), { present: true, input: 'shown', outputs: 'shown' });
    assert.deepEqual(cellView(tagged('remove-cell')), { present: false, input: 'shown', outputs: 'shown' });
    assert.deepEqual(cellView(tagged('remove-input')), { present: true, input: 'removed', outputs: 'shown' });
    assert.deepEqual(cellView(tagged('remove-output')), { present: true, input: 'shown', outputs: 'removed' });
    assert.deepEqual(cellView(tagged('hide-input')), { present: true, input: 'hidden', outputs: 'shown' });
    assert.deepEqual(cellView(tagged('hide-output')), { present: true, input: 'shown', outputs: 'hidden' });
    assert.deepEqual(cellView(tagged('hide-cell')), { present: true, input: 'hidden', outputs: 'hidden' });
    assert.deepEqual(cellView(tagged('hide-input', 'remove-input')), { present: true, input: 'removed', outputs: 'shown' }, 'removal wins');
  });

  it('ignores unknown tags, non-string entries and tags that are not a list (negative cases)', () => {
    const plain = { present: true, input: 'shown', outputs: 'shown' };
    assert.deepEqual(cellView(tagged('remove_input', 'Remove-Input', 'thebe-init')), plain);
    assert.deepEqual(cellView(tagged(1, null, { tag: 'remove-cell' })), plain);
    assert.deepEqual(cellView({ metadata: { tags: 'remove-cell' } }), plain);
    assert.deepEqual([...cellTags({ metadata: { tags: ['a', 2, 'b'] } })], ['a', 'b']);
  });
});

/** A notebook with one code cell per tag, each with its own source and output words. */
function taggedNotebook(): Notebook {
  const cell = (tag: string | null, n: number) => ({
    cell_type: 'code',
    metadata: tag ? { tags: [tag] } : {},
    source: `const code${n} = 'sourceword${n}';`,
    execution_count: n,
    outputs: [{ output_type: 'stream', name: 'stdout', text: `outputword${n}\n` }],
  });
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: [
      { cell_type: 'markdown', metadata: {}, source: '# Tags\nOne cell per tag.' },
      cell(null, 2),
      cell('remove-cell', 3),
      cell('remove-input', 4),
      cell('remove-output', 5),
      cell('hide-input', 6),
      { cell_type: 'markdown', metadata: { tags: ['remove-cell'] }, source: '## Removed heading\nproseword7' },
      { ...cell('remove-input', 8), outputs: [] },
    ],
  } as unknown as Notebook;
}

describe('renderNotebook with cell tags', () => {
  const page = renderNotebook('/x/09-tags.ipynb', taggedNotebook(), createMarkdown(), []);
  const body = page.body.value;
  const searched = (word: string): string[] => page.search.filter((e) => e.text.includes(word)).map((e) => e.kind);

  it('shows an untagged cell whole (the baseline the other cases differ from)', () => {
    assert.match(body, /<section class="cell code-cell" id="cell-2"><div class="source">.*sourceword2.*<div class="outputs">.*outputword2/s);
    assert.deepEqual(searched('sourceword2'), ['code']);
    assert.deepEqual(searched('outputword2'), ['output']);
  });

  it('remove-cell: neither code nor output on the page or in the search index, markdown too', () => {
    for (const w of ['sourceword3', 'outputword3', 'proseword7', 'Removed heading']) {
      assert.ok(!body.includes(w), w);
      assert.deepEqual(searched(w), [], w);
    }
    assert.ok(!body.includes('id="cell-3"'));
    assert.ok(!page.headings.some((h) => h.text === 'Removed heading'), 'nor in "On this page"');
  });

  it('remove-input: the output without the code, and the code not indexed', () => {
    const cell = /<section class="cell code-cell no-input" id="cell-4">(.*?)<\/section>/s.exec(body)?.[1] ?? '';
    assert.match(cell, /outputword4/);
    assert.doesNotMatch(cell, /sourceword4|class="source"/);
    assert.deepEqual(searched('sourceword4'), []);
    assert.deepEqual(searched('outputword4'), ['output']);
  });

  it('remove-output: the code without the output', () => {
    const cell = /<section class="cell code-cell" id="cell-5">(.*?)<\/section>/s.exec(body)?.[1] ?? '';
    assert.match(cell, /sourceword5/);
    assert.doesNotMatch(cell, /outputword5|class="outputs"/);
    assert.deepEqual(searched('outputword5'), []);
  });

  it('hide-input: the code collapsed behind a disclosure, still searchable, the output shown', () => {
    assert.match(body, /id="cell-6"><details class="cell-part"><summary>Show code<\/summary><div class="source">.*sourceword6.*<\/details><div class="outputs">.*outputword6/s);
    assert.deepEqual(searched('sourceword6'), ['code']);
  });

  it('leaves out a cell with its input removed and no output at all', () => {
    assert.ok(!body.includes('id="cell-8"'));
  });

  it('shows no cell timing, only the execution count', () => {
    assert.match(body, /<span class="meta">\[2\]<\/span>/);
  });
});
