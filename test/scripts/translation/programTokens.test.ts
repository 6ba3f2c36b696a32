import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isProgramValue, programDifference, programTokens, tokenize } from '../../../scripts/translation/programTokens';

const NOTEBOOKS = join(__dirname, '..', '..', '..', 'notebooks');
/** Every translated edition: a folder under notebooks/ holding twins of the English chapters. */
const EDITIONS = ['zh'];

interface Cell {
  cell_type: string;
  source: string | string[];
}
const codeCells = (file: string): string[] =>
  (JSON.parse(readFileSync(file, 'utf8')) as { cells: Cell[] }).cells
    .filter((c) => c.cell_type === 'code')
    .map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source));

/** Where a translated notebook stops running its English twin's program, or undefined. */
function notebookDifference(english: string[], translated: string[]): string | undefined {
  if (english.length !== translated.length) return `${translated.length} code cells, the English twin has ${english.length}`;
  for (let i = 0; i < english.length; i++) {
    const difference = programDifference(english[i], translated[i]);
    if (difference) return `code cell ${i + 1}: ${difference}`;
  }
  return undefined;
}

describe('the scanner view of a cell', () => {
  it('sets aside comments and the text of strings and templates, nested ones included', () => {
    const code = "const a = `x ${b.map((s) => `${s}% at ${'q'}`).join(', ')} y`; // note\nconst r = /a'b/g.test(c) / 2;";
    assert.equal(
      programTokens(code).join(' '),
      "const a = `…${ b . map ( ( s ) => `…${ s }…${ '…' }…` ) . join ( '…' ) }…` ; const r = /a'b/g . test ( c ) / 2 ;",
    );
    const comment = tokenize(code).find((t) => t.kind === 'comment')!;
    assert.deepEqual([comment.content, comment.trailing], ['note', true]);
  });

  it('tells program values from messages', () => {
    assert.equal(isProgramValue('per-sample'), true);
    assert.equal(isProgramValue('\\n'), true);
    assert.equal(isProgramValue('training finished'), false);
    assert.equal(isProgramValue('训练结束'), false);
  });

  it('accepts translated comments, messages and templates', () => {
    const english = "// Sum the gradients.\nconsole.log(`loss ${loss.toFixed(4)} at ${step}`, 'done now'); /* why */";
    const chinese = "// 把梯度加起来。\nconsole.log(`第 ${loss.toFixed(4)} 步的损失 ${step}`, '完成'); /* 原因 */";
    assert.equal(programDifference(english, chinese), undefined);
  });

  it('refuses a changed statement, a translated program value, and a moved placeholder (the negative cases)', () => {
    const english = "const gap = maxRelativeDifference(a, b);\nassert.ok(gap <= 1e-5, 'close enough');";
    assert.match(programDifference(english, "const gap = maxRelativeDifference(a, b);\nassert.ok(gap <= 1e-4, '足够接近');")!, /token \d+ differs.*1e-5/);
    assert.match(programDifference(english, "const gap = maxRelativeDifference(b, a);\nassert.ok(gap <= 1e-5, '足够接近');")!, /differs/);
    assert.match(programDifference(english, "const gap = maxRelativeDifference(a, b);")!, /ends early/);
    assert.match(programDifference("f(x, 'per-sample')", "f(x, '按样本')")!, /program value/);
    assert.match(programDifference('`${a} of ${b}`', '`${b} 中的 ${a}`')!, /differs/);
    assert.match(programDifference("f('a b')", 'f(`a b`)')!, /differs/);
  });

  it('compares notebooks cell by cell, in order (negative cases: a cell dropped, two cells swapped)', () => {
    const cells = ['const a = 1;', 'const b = 2;', 'assert.equal(a + b, 3);'];
    assert.equal(notebookDifference(cells, [...cells]), undefined);
    assert.match(notebookDifference(cells, cells.slice(0, 2))!, /2 code cells, the English twin has 3/);
    assert.match(notebookDifference(cells, [cells[1], cells[0], cells[2]])!, /^code cell 1: /);
  });
});

for (const lang of EDITIONS) {
  const folder = join(NOTEBOOKS, lang);
  const english = readdirSync(NOTEBOOKS).filter((f) => f.endsWith('.ipynb')).sort();
  describe(`the ${lang} edition runs the same programs as the English chapters`, () => {
    it('has one notebook per English chapter, with the same file name', () => {
      assert.deepEqual(readdirSync(folder).filter((f) => f.endsWith('.ipynb')).sort(), english);
    });
    for (const name of english) {
      it(`${lang}/${name}: the same code cells, in the same order, equal once comments and string texts are set aside`, () => {
        const difference = notebookDifference(codeCells(join(NOTEBOOKS, name)), codeCells(join(folder, name)));
        assert.equal(difference, undefined, `${lang}/${name} ${difference}; run \`npm run notebooks:sync\``);
      });
    }
  });
}
