import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { showTable, tableBundle } from '../../../src/tutorial/plot/table';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tslabJupyter = require('tslab/dist/jupyter') as { lastWriteDisplayData: unknown };

const rows = [
  { layer: 'BatchNorm', error: 0.25, ok: true },
  { layer: 'GroupNorm', error: 0.125 },
];

describe('tableBundle', () => {
  it('sends a real HTML table, one column per key in order of appearance, numbers right-aligned', () => {
    const html = tableBundle(rows, { caption: 'Errors' }).data['text/html'];
    assert.equal(
      html,
      '<table class="tfjs-accumulate-table"><caption>Errors</caption>' +
        '<thead><tr><th scope="col">layer</th><th scope="col" style="text-align:right">error</th><th scope="col">ok</th></tr></thead>' +
        '<tbody><tr><td>BatchNorm</td><td style="text-align:right">0.250</td><td>true</td></tr>' +
        '<tr><td>GroupNorm</td><td style="text-align:right">0.125</td><td></td></tr></tbody></table>',
    );
  });

  it('sends aligned plain text with a header rule, with no box-drawing characters', () => {
    assert.equal(tableBundle(rows).data['text/plain'], ['layer      error  ok', '---------  -----  ----', 'BatchNorm  0.250  true', 'GroupNorm  0.125'].join('\n'));
  });

  it('escapes markup in keys and values, so a value cannot inject an element', () => {
    const html = tableBundle([{ '<b>k</b>': '<img src=x onerror=alert(1)>' }]).data['text/html'];
    assert.doesNotMatch(html, /<img|<b>/);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
  });

  it('prints numbers to three significant digits by default, or as asked, and puts units in the header', () => {
    const plain = (args: object) => tableBundle([{ gap: 0.0056086006713084585, ms: 12.3456, count: 784 }], args).data['text/plain'].split('\n')[2].trim().split(/ +/).join('  ');
    assert.equal(plain({}), '0.00561  12.3  784');
    assert.equal(plain({ digits: 5 }), '0.0056086  12.346  784');
    assert.equal(plain({ digits: null }), '0.0056086006713084585  12.3456  784', 'null: as JavaScript prints them');
    assert.match(tableBundle([{ window: 1.5 }], { units: { window: 'ms' } }).data['text/html'], /<th scope="col" style="text-align:right">window \(ms\)<\/th>.*<td style="text-align:right">1.50<\/td>/);
    assert.equal(tableBundle([{ note: '0.0056086006713084585' }]).data['text/plain'].split('\n')[2], '0.0056086006713084585', 'a string stays as the caller wrote it');
  });

  it('writes headers, the caption and known cells in Chinese in zh, keeping identifiers', () => {
    const bundle = tableBundle([{ component: 'backend', value: 'wasm', averaging: 'per-sample', '已检查': true }], { caption: 'logged', locale: 'zh' });
    assert.equal(
      bundle.data['text/html'],
      '<table class="tfjs-accumulate-table"><caption>记录的损失</caption><thead><tr><th scope="col">组件</th><th scope="col">值</th><th scope="col">平均方式</th><th scope="col">已检查</th></tr></thead>' +
        '<tbody><tr><td>后端</td><td>wasm</td><td>per-sample</td><td>是</td></tr></tbody></table>',
    );
  });

  it('pads plain text by terminal columns, two for a Chinese character, so columns line up', () => {
    const plain = tableBundle([{ '规则': '按样本平均', gap: 1.5 }, { '规则': 'per-sample', gap: 12.25 }], { locale: 'en' }).data['text/plain'].split('\n');
    assert.deepEqual(plain, ['规则         gap', '----------  ----', '按样本平均  1.50', 'per-sample  12.3']);
  });

  it('fails in zh on a header that looks English and has no translation, naming it (negative case)', () => {
    assert.throws(() => tableBundle([{ 'tokens per second': 1, throughput: 2, '吞吐量': 3 }], { locale: 'zh' }), {
      name: 'MissingTranslationError',
      message: /^tableBundle: no zh translation for "tokens per second", "throughput"\./,
    });
    assert.doesNotThrow(() => tableBundle([{ 'tokens per second': 1 }], { locale: 'en' }));
  });

  it('refuses bad options, naming them', () => {
    assert.throws(() => tableBundle(rows, { digits: 0 }), /tableBundle: digits must be an integer from 1 to 17, or null/);
    assert.throws(() => tableBundle(rows, { units: { nope: 'ms' } }), /tableBundle: units must be keyed by the table's columns \("layer", "error", "ok"\); got "nope"/);
    assert.throws(() => tableBundle(rows, { locale: 'fr' as never }), /tableBundle: locale must be one of "en", "zh"/);
    assert.throws(() => tableBundle(rows, { captions: 'x' } as never), /tableBundle: args has an unknown key "captions"/);
  });

  it('refuses what is not a non-empty array of row objects, naming the parameter', () => {
    for (const bad of [[], [1], 'rows', null, [[1, 2]]]) {
      assert.throws(() => tableBundle(bad as never), /^Error: tableBundle: rows must be a non-empty array of objects \(one per row, column name → value\); got /);
    }
  });
});

describe('showTable', () => {
  afterEach(() => {
    tslabJupyter.lastWriteDisplayData = null;
  });

  it('sends text/html and text/plain through the kernel’s writer', () => {
    const sent: { data: Record<string, string> }[] = [];
    tslabJupyter.lastWriteDisplayData = (content: { data: Record<string, string> }) => sent.push(content);
    showTable(rows);
    assert.equal(sent.length, 1);
    assert.deepEqual(Object.keys(sent[0].data).sort(), ['text/html', 'text/plain']);
    assert.deepEqual(sent[0].data, tableBundle(rows).data);
  });

  it("sends the same bundle through Deno.jupyter.display under Deno's kernel", async () => {
    const sent: unknown[] = [];
    const g = globalThis as { Deno?: unknown };
    g.Deno = { jupyter: { display: async (obj: unknown, options: unknown) => void sent.push({ obj, options }) } };
    try {
      await showTable(rows);
    } finally {
      delete g.Deno;
    }
    assert.deepEqual(sent, [{ obj: tableBundle(rows).data, options: { raw: true } }]);
  });

  it('fails at once, with a clear message, outside a notebook kernel', () => {
    assert.throws(() => showTable(rows), /showTable: no notebook kernel \(tslab or Deno\) is running in this process/);
  });
});
