import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GLOSSARY_PAGE, glossaryProblems, glossaryViolations, loadGlossary, proseOf, renderGlossary, type Glossary } from '../../../scripts/translation/glossary';

const NOTEBOOKS = join(__dirname, '..', '..', '..', 'notebooks');
const glossary = loadGlossary();

interface Cell {
  cell_type: string;
  source: string | string[];
}
const cellsOf = (file: string): Cell[] => (JSON.parse(readFileSync(file, 'utf8')) as { cells: Cell[] }).cells;
const text = (c: Cell) => (Array.isArray(c.source) ? c.source.join('') : c.source);
const show = (v: { found: string; use: string; context: string }[]) => v.map((x) => `"${x.found}" (write "${x.use}") in "…${x.context}…"`).join('\n');

describe('the glossary', () => {
  it('fixes the issue’s terms, each once, and rules out no spelling that a term needs', () => {
    const zh = glossary.terms.map((t) => t.zh);
    for (const term of ['梯度累积', '微批次', '累积步数', '逻辑批次', '归一化', '学习率', '优化器', '张量', '批归一化', '组归一化']) assert.ok(zh.includes(term), term);
    assert.deepEqual(glossaryProblems(glossary), []);
  });

  it('catches a broken glossary (negative case)', () => {
    const broken: Glossary = { about: '', terms: [{ en: 'micro-batch', zh: '微批次', avoid: ['批次'] }, { en: 'micro-batch', zh: '微步', avoid: [] }] };
    assert.deepEqual(glossaryProblems(broken), ['"micro-batch" is listed twice', 'micro-batch: avoiding "批次" would forbid the term "微批次"']);
  });

  it('finds a ruled-out spelling in Chinese text, and a Latin one in prose only (negative cases)', () => {
    assert.deepEqual(
      glossaryViolations('把梯度累加到缓冲区，累积步数为 4。', glossary, 'zh').map((v) => [v.found, v.use]),
      [['梯度累加', '梯度累积']],
    );
    assert.deepEqual(glossaryViolations('每个微批次的梯度累积起来。', glossary, 'zh'), []);
    assert.deepEqual(
      glossaryViolations(proseOf('Each Microbatch holds 16; `microBatches` is the name.'), glossary, 'en').map((v) => v.found),
      ['Microbatch'],
    );
  });

  it('docs/glossary.md is rendered from it (`npm run glossary`)', () => {
    assert.equal(readFileSync(GLOSSARY_PAGE, 'utf8'), renderGlossary(glossary));
  });
});

describe('the notebooks use the glossary', () => {
  const zhFolder = join(NOTEBOOKS, 'zh');
  for (const name of readdirSync(zhFolder).filter((f) => f.endsWith('.ipynb')).sort()) {
    it(`zh/${name}: no ruled-out spelling in prose, comments or messages`, () => {
      const cells = cellsOf(join(zhFolder, name));
      const violations = [
        ...glossaryViolations(cells.map(text).join('\n'), glossary, 'zh'),
        ...glossaryViolations(proseOf(cells.filter((c) => c.cell_type === 'markdown').map(text).join('\n')), glossary, 'en'),
      ];
      assert.equal(violations.length, 0, show(violations));
    });
  }

  it('zh/translations.json: no ruled-out spelling in a translated comment or message', () => {
    const table = JSON.parse(readFileSync(join(zhFolder, 'translations.json'), 'utf8')) as Record<string, string>;
    const violations = glossaryViolations(Object.values(table).join('\n'), glossary, 'zh');
    assert.equal(violations.length, 0, show(violations));
  });

  for (const name of readdirSync(NOTEBOOKS).filter((f) => f.endsWith('.ipynb')).sort()) {
    it(`${name}: no ruled-out English spelling in its prose`, () => {
      const prose = proseOf(cellsOf(join(NOTEBOOKS, name)).filter((c) => c.cell_type === 'markdown').map(text).join('\n'));
      const violations = glossaryViolations(prose, glossary, 'en');
      assert.equal(violations.length, 0, show(violations));
    });
  }
});
