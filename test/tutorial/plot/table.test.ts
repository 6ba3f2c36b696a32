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
        '<tbody><tr><td>BatchNorm</td><td style="text-align:right">0.25</td><td>true</td></tr>' +
        '<tr><td>GroupNorm</td><td style="text-align:right">0.125</td><td></td></tr></tbody></table>',
    );
  });

  it('sends aligned plain text with a header rule, with no box-drawing characters', () => {
    assert.equal(tableBundle(rows).data['text/plain'], ['layer      error  ok', '---------  -----  ----', 'BatchNorm   0.25  true', 'GroupNorm  0.125'].join('\n'));
  });

  it('escapes markup in keys and values, so a value cannot inject an element', () => {
    const html = tableBundle([{ '<b>k</b>': '<img src=x onerror=alert(1)>' }]).data['text/html'];
    assert.doesNotMatch(html, /<img|<b>/);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
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
