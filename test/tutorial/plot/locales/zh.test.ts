import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { glossaryViolations, loadGlossary } from '../../../../scripts/translation/glossary';
import { looksEnglish } from '../../../../src/tutorial/plot/locale';
import { ZH_TEXTS } from '../../../../src/tutorial/plot/locales/zh';

const glossary = loadGlossary();
const entries = Object.entries(ZH_TEXTS);

/** Table entries that break the rules of locales/zh.ts, as messages. */
function problems(table: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [en, zh] of Object.entries(table)) {
    const holes = (s: string) => s.split('${}').length - 1;
    if (holes(en) !== holes(zh)) found.push(`${en}: ${holes(en)} placeholders, translated with ${holes(zh)}`);
    if (zh.toLowerCase() !== en.toLowerCase() && looksEnglish(zh)) found.push(`${en}: the translation "${zh}" is still English`);
    for (const v of glossaryViolations(zh, glossary, 'zh')) found.push(`${en}: "${v.found}" (the glossary writes "${v.use}")`);
    const term = glossary.terms.find((t) => t.code === en);
    if (term && !zh.includes(term.zh)) found.push(`${en}: the glossary's term is "${term.zh}", not "${zh}"`);
  }
  return found;
}

describe('the zh display table (src/tutorial/plot/locales/zh.ts)', () => {
  it('keeps its placeholders, is Chinese or deliberately kept, and uses the glossary’s terms', () => {
    assert.deepEqual(problems(ZH_TEXTS), []);
    assert.ok(entries.length > 40);
  });

  it('catches a dropped placeholder, an English translation, a ruled-out spelling and a term the glossary names otherwise (negative cases)', () => {
    assert.deepEqual(
      problems({ 'microBatchSize ${}': '微批次大小', measured: 'measured value', gradient: '斜率', accumulationSteps: '累加次数' }),
      [
        'microBatchSize ${}: 1 placeholders, translated with 0',
        'measured: the translation "measured value" is still English',
        'gradient: "斜率" (the glossary writes "梯度")',
        'accumulationSteps: the glossary\'s term is "累积步数", not "累加次数"',
      ],
    );
  });
});
