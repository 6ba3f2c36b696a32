import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { executedNotebooks } from '../../../scripts/translation/outputLanguage';
import { spacingInOutputs } from '../../../scripts/translation/outputSpacing';
import { joinSentences, markdownBundle, spacesAfterChinesePunctuation, tableBundle } from '../../../src/tutorial/index';
import { ZH_TEXTS } from '../../../src/tutorial/plot/locales/zh';

const ROOT = join(__dirname, '..', '..', '..');
const EXECUTED_ZH = join(ROOT, 'build', 'notebooks', 'zh');

/** An executed notebook whose one code cell printed `stream` and showed these bundles. */
const notebookOf = (stream: string, ...bundles: { data: Record<string, unknown> }[]) => ({
  cells: [
    { cell_type: 'markdown' },
    {
      cell_type: 'code',
      outputs: [{ output_type: 'stream', text: [stream] }, ...bundles.map((b) => ({ output_type: 'display_data', data: b.data }))],
    },
  ],
});

describe('spacingInOutputs', () => {
  it('finds a space after 。 or ， in printed text, markdown and table cells (negative case)', () => {
    // Chapter 7's paragraph as it was built before joinSentences: an English join of Chinese sentences.
    const paragraph = ['跳过第一层省下了 1.2 MFLOP。', '在 wasm 上达到了峰值的 40%。'].join(' ');
    const table = tableBundle([{ '说明': '更新一次， 不是四次' }], { locale: 'zh' });
    const found = spacingInOutputs(notebookOf('✓ 范数相同。 下一步\n', markdownBundle(paragraph), table));
    assert.deepEqual(
      found.map((p) => [p.cell, p.where]),
      [
        [2, 'stream'],
        // The paragraph's markdown and its text/plain twin, then the table as text and as HTML.
        [2, 'text/markdown'],
        [2, 'text/plain'],
        [2, 'text/plain'],
        [2, 'text/html'],
      ],
    );
    assert.ok(found[1].excerpt.includes('MFLOP。 在'), found[1].excerpt);
  });

  it('passes the same outputs written the Chinese way', () => {
    const paragraph = joinSentences(['跳过第一层省下了 1.2 MFLOP。', '在 wasm 上达到了峰值的 40%。']);
    const table = tableBundle([{ '说明': '更新一次，不是四次', '值': 2 }], { locale: 'zh' });
    assert.deepEqual(spacingInOutputs(notebookOf('✓ 范数相同。\n[1/3] 批归一化，微批次大小 4：测试错误率 12.3%\n', markdownBundle(paragraph), table)), []);
  });
});

describe('the Chinese texts the outputs are made of', () => {
  it('translations.json (messages, sentence parts) has no space after Chinese punctuation', () => {
    const table = JSON.parse(readFileSync(join(ROOT, 'notebooks', 'zh', 'translations.json'), 'utf8')) as Record<string, string>;
    const found = Object.values(table).flatMap(spacesAfterChinesePunctuation);
    assert.deepEqual(found, []);
  });

  it('the display table (src/tutorial/plot/locales/zh.ts) has none', () => {
    assert.deepEqual(Object.values(ZH_TEXTS).flatMap(spacesAfterChinesePunctuation), []);
  });

  it('the Chinese prose of notebooks/zh has none', () => {
    const folder = join(ROOT, 'notebooks', 'zh');
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.ipynb'))) {
      const nb = JSON.parse(readFileSync(join(folder, file), 'utf8')) as { cells: { cell_type: string; source: string[] }[] };
      const found = nb.cells.filter((c) => c.cell_type === 'markdown').flatMap((c) => spacesAfterChinesePunctuation(c.source.join('')));
      assert.deepEqual(found, [], file);
    }
  });
});

describe('the executed Chinese notebooks (build/notebooks/zh, from npm run notebooks)', () => {
  // test:unit runs before the notebooks do, so there this may be skipped; test:site runs it after
  // them with REQUIRE_EXECUTED_NOTEBOOKS=1, where a missing run fails.
  const files = executedNotebooks(EXECUTED_ZH);
  it('have been executed', { skip: files.length === 0 && process.env.REQUIRE_EXECUTED_NOTEBOOKS !== '1' && 'no executed zh notebooks: run `npm run notebooks -- notebooks/zh` first' }, () => {
    assert.ok(files.length > 0);
  });
  for (const file of files) {
    it(`${basename(file)}: no ASCII space after Chinese punctuation in what the run printed`, () => {
      const found = spacingInOutputs(JSON.parse(readFileSync(file, 'utf8')));
      assert.deepEqual(found, [], found.map((p) => `cell ${p.cell}, ${p.where}: ${JSON.stringify(p.excerpt)}`).join('\n'));
    });
  }
});
