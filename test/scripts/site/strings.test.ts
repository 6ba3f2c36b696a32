import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { html } from '../../../scripts/site/html';
import { fill, fillHtml, UI, ui } from '../../../scripts/site/strings';

/** Every leaf string of an object, with its key path. */
function leaves(o: object, prefix = ''): [string, string][] {
  return Object.entries(o).flatMap(([k, v]) => (typeof v === 'string' ? [[prefix + k, v] as [string, string]] : leaves(v as object, `${prefix}${k}.`)));
}

describe('the UI strings', () => {
  it('gives every edition every string, with the same placeholders', () => {
    const en = new Map(leaves(UI.en));
    const zh = new Map(leaves(UI['zh-CN']));
    assert.deepEqual([...zh.keys()].sort(), [...en.keys()].sort());
    const holes = (s: string): string[] => (s.match(/\{\w+\}/g) ?? []).sort();
    for (const [k, v] of en) assert.deepEqual(holes(zh.get(k)!), holes(v), k);
    for (const [k, v] of zh) assert.match(v, /[\u4e00-\u9fff]|^[\p{P}\p{S}\s{}\w]*$/u, `${k} is Chinese`);
    assert.equal(ui('zh-CN'), UI['zh-CN']);
    assert.equal(ui('fr'), UI.en);
  });

  it('fills placeholders, and refuses a missing value instead of leaving it in a page', () => {
    assert.equal(fill(UI['zh-CN'].outputOfCell, { n: 2, cell: 7 }), '第 7 个单元的第 2 个输出');
    assert.throws(() => fill('{a} and {b}', { a: 1 }), /no value for \{b\}/);
  });

  it('escapes the template and string values in markup, and keeps SafeHtml', () => {
    assert.equal(fillHtml('<{x}> {y}', { x: '<b>', y: html`<code>ok</code>` }).value, '&lt;&lt;b&gt;&gt; <code>ok</code>');
  });
});
