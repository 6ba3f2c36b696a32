import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { NORMALIZATIONS } from '../../src/tutorial/models';
import { normalizationName } from '../../src/tutorial/normalizationName';
import { looksEnglish, setLocale } from '../../src/tutorial/plot/locale';

interface GlossaryTerm {
  en: string;
  zh: string;
  avoid?: string[];
}
const glossary = JSON.parse(readFileSync(join(__dirname, '..', '..', 'notebooks', 'glossary.json'), 'utf8')) as { terms: GlossaryTerm[] };
const ruledOut = glossary.terms.flatMap((t) => t.avoid ?? []);

describe('normalizationName', () => {
  afterEach(() => setLocale(undefined));

  it('gives English reader words, never the kind the program uses', () => {
    const names = NORMALIZATIONS.map((n) => normalizationName(n, 'en'));
    assert.deepEqual(names, ['BatchNorm', 'GroupNorm', 'LayerNorm', 'frozen BatchNorm', 'Batch Renorm', 'no normalization']);
    for (const [i, n] of NORMALIZATIONS.entries()) assert.notEqual(names[i], n, `${n} is printed as a word, not as its code name`);
  });

  it('gives Chinese words in zh, from the display table, in the glossary\'s spelling', () => {
    const names = NORMALIZATIONS.map((n) => normalizationName(n, 'zh'));
    assert.deepEqual(names, ['批归一化', '组归一化', '层归一化', '冻结的批归一化', '批再归一化', '无归一化']);
    for (const name of names) {
      assert.equal(looksEnglish(name), false, name);
      assert.deepEqual(ruledOut.filter((bad) => name.includes(bad)), [], name);
    }
  });

  it('follows the active locale when none is given', () => {
    setLocale('zh');
    assert.equal(normalizationName('batch'), '批归一化');
    setLocale('en');
    assert.equal(normalizationName('batch'), 'BatchNorm');
  });

  it('refuses an unknown kind or locale, naming it (negative cases)', () => {
    assert.throws(() => normalizationName('batchNorm' as never, 'en'), /normalizationName: normalization must be one of .*got "batchNorm"/);
    assert.throws(() => normalizationName('batch', 'fr' as never), /normalizationName: locale must be one of "en", "zh"/);
  });
});
