import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { englishInOutputs, executedNotebooks } from '../../../scripts/translation/outputLanguage';
import { barChart, figureBundle, lineChart, tableBundle } from '../../../src/tutorial/index';

const EXECUTED_ZH = join(__dirname, '..', '..', '..', 'build', 'notebooks', 'zh');

/** An executed notebook whose one code cell shows these bundles. */
const notebookOf = (...bundles: { data: Record<string, unknown> }[]) => ({
  cells: [
    { cell_type: 'markdown' },
    { cell_type: 'code', outputs: bundles.map((b) => ({ output_type: 'display_data', data: b.data })) },
  ],
});

describe('englishInOutputs', () => {
  it('finds English titles, axes, legends, categories, headers and captions (negative case)', () => {
    const fig = lineChart({ title: 'Test error by micro-batch size', xTitle: 'microBatchSize', yTitle: '测试错误率（%）', series: [{ name: 'batch', x: [1, 2], y: [3, 4] }] });
    const table = tableBundle([{ rule: 'per-sample', '差距': 1 }], { caption: 'The table as text', locale: 'en' });
    assert.deepEqual(englishInOutputs(notebookOf(figureBundle(fig, { locale: 'en' }), table)), [
      { cell: 2, where: 'title', text: 'Test error by micro-batch size' },
      { cell: 2, where: 'xaxis title', text: 'microBatchSize' },
      { cell: 2, where: 'legend', text: 'batch' },
      { cell: 2, where: 'table header', text: 'rule' },
      { cell: 2, where: 'caption', text: 'The table as text' },
    ]);
  });

  it('passes the same outputs once the display layer has translated them', () => {
    const fig = lineChart({ title: '测试错误率', xTitle: 'microBatchSize', yTitle: '测试错误率（%）', series: [{ name: 'batch', x: [1, 2], y: [3, 4] }] });
    const table = tableBundle([{ rule: 'per-sample', '差距': 1 }], { locale: 'zh' });
    assert.deepEqual(englishInOutputs(notebookOf(figureBundle(fig, { locale: 'zh' }), table)), []);
    // Names the zh table keeps on purpose (an entry mapping CNN to itself) are not English to fix.
    const kept = barChart({ title: '内存', xTitle: '模型', yTitle: 'GFLOP/s', series: [{ name: '实测', x: ['CNN', 'MLP'], y: [1, 2] }] });
    assert.deepEqual(englishInOutputs(notebookOf(figureBundle(kept, { locale: 'en' }))), []);
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
    it(`${basename(file)}: no English in a title, an axis, a legend, a category or a table header`, () => {
      const found = englishInOutputs(JSON.parse(readFileSync(file, 'utf8')));
      assert.deepEqual(found, [], found.map((e) => `cell ${e.cell}, ${e.where}: ${JSON.stringify(e.text)}`).join('\n'));
    });
  }
});
