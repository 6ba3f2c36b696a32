import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cellText, formerName, pairCells, syncEdition, syncNotebook, translateCode, type Notebook, type NotebookCell } from '../../../scripts/translation/syncNotebooks';

const NOTEBOOKS = join(__dirname, '..', '..', '..', 'notebooks');

const code = (source: string): NotebookCell => ({ cell_type: 'code', metadata: {}, source, outputs: [], execution_count: null });
const prose = (source: string): NotebookCell => ({ cell_type: 'markdown', metadata: {}, source });
const notebook = (cells: NotebookCell[]): Notebook => ({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5 });

describe('translateCode', () => {
  const table = {
    'Sum the gradients, then update once.': '先把梯度加起来，\n再更新一次。',
    'loss ${} at step ${}': '第 ${} 步的损失 ${}',
    'training finished': '训练结束',
    'per-sample': '按样本', // a program value: never applied
  };

  it('replaces comments (a run of // lines as one), strings and templates, keeping indentation and program values', () => {
    const english = [
      'if (applied) {',
      '  // Sum the gradients,',
      '  // then update once.',
      "  console.log(`loss ${loss} at step ${step}`, 'training finished', 'per-sample');",
      '}',
    ].join('\n');
    const { code: out, untranslated } = translateCode(english, table);
    assert.equal(
      out,
      ['if (applied) {', '  // 先把梯度加起来，', '  // 再更新一次。', "  console.log(`第 ${loss} 步的损失 ${step}`, '训练结束', 'per-sample');", '}'].join('\n'),
    );
    assert.deepEqual(untranslated, []);
  });

  it('lists what it cannot translate and leaves it as it is', () => {
    const { code: out, untranslated } = translateCode("log('new message'); // new comment", table);
    assert.equal(out, "log('new message'); // new comment");
    assert.deepEqual(untranslated.sort(), ['new comment', 'new message']);
  });

  it('refuses a translation that would change the program', () => {
    assert.throws(() => translateCode('log(`a ${x} b`)', { 'a ${} b': '甲乙' }), /keep its 1 \$\{\} placeholders/);
    assert.throws(() => translateCode("log('a b')", { 'a b': "甲'乙" }), /may not contain '/);
  });
});

describe('pairCells', () => {
  const a = 'const a = 1;';
  const b = 'const b = a + 1;';
  const c = 'assert.equal(b, 2);';
  it('pairs unchanged cells, a changed cell with its old version, and leaves out inserted and removed ones', () => {
    assert.deepEqual(pairCells([a, b, c], [a, b, c]), [0, 1, 2]);
    assert.deepEqual(pairCells([a, 'const b = a + 2;', c], [a, b, c]), [0, 1, 2], 'changed in place');
    assert.deepEqual(pairCells([a, 'log(1);', b, c], [a, b, c]), [0, 2, 3], 'English inserted a cell');
    assert.deepEqual(pairCells([a, c], [a, b, c]), [0, -1, 1], 'English removed a cell');
  });
});

describe('syncNotebook', () => {
  it('regenerates code cells from the English twin and keeps the translated prose where it was', () => {
    const english = notebook([prose('# 1. Title'), code("import x from 'x';"), prose('Intro.'), code("log('hello there');"), code('const added = 1;'), code('done();')]);
    const translated = notebook([prose('# 1. 标题'), code("import x from 'x';"), prose('引言。'), code("log('旧的译文');"), prose('收尾。'), code('done();'), code('removed();')]);
    const { notebook: out, inserted, removed, untranslated } = syncNotebook(english, translated, { 'hello there': '你好' }, '01-zh');
    assert.deepEqual(
      out.cells.map((c) => `${c.cell_type[0]}:${cellText(c)}`),
      ['m:# 1. 标题', "c:import x from 'x';", 'm:引言。', "c:log('你好');", 'c:const added = 1;', 'm:收尾。', 'c:done();'],
    );
    assert.deepEqual(inserted, [2]);
    assert.equal(removed, 1);
    assert.deepEqual(untranslated, []);
    assert.deepEqual(out.cells.map((c) => c.id), ['01-zh-00', '01-zh-01', '01-zh-02', '01-zh-03', '01-zh-04', '01-zh-05', '01-zh-06']);
  });
});

describe('cell tags', () => {
  it('follow the English code cell (a tag added, changed or dropped there is one here), other metadata stays', () => {
    const tagged = (source: string, tags: string[]): NotebookCell => ({ ...code(source), metadata: { tags } });
    const english = notebook([prose('# 1. T'), code("import x from 'x';"), tagged('setup();', ['remove-input']), code('shown();')]);
    const translated = notebook([prose('# 1. 标题'), code("import x from 'x';"), code('setup();'), { ...tagged('shown();', ['hide-input']), metadata: { tags: ['hide-input'], scrolled: true } }]);
    const { notebook: out } = syncNotebook(english, translated, {}, '01-zh');
    assert.deepEqual(out.cells.map((c) => c.metadata), [{}, {}, { tags: ['remove-input'] }, { scrolled: true }]);
  });
});

describe('formerName', () => {
  it('finds the twin of a renamed English chapter by its code, and nothing for a new chapter', () => {
    const english = notebook([prose('# 6. BatchNorm'), code("import x from 'x';"), code('run(1);'), code('check();')]);
    const twin = notebook([prose('# 5. 批归一化'), code("import x from 'x';"), code('run(1);'), code('check(2);')]);
    const other = notebook([prose('# 4. 其他'), code("import y from 'y';"), code('other();')]);
    assert.equal(formerName(english, [['04-other.ipynb', other], ['05-batchnorm.ipynb', twin]]), '05-batchnorm.ipynb');
    assert.equal(formerName(english, [['04-other.ipynb', other]]), undefined);
  });
});

describe('English prose changes', () => {
  it('are listed until the translation is marked as reviewed', () => {
    const english = notebook([prose('# 1. Title'), code('done();'), prose('Old text.')]);
    const reviewed = syncNotebook(english, notebook([prose('# 1. 标题'), code('done();'), prose('旧文。')]), {}, '01-zh', true).notebook;
    assert.deepEqual(syncNotebook(english, reviewed, {}, '01-zh').proseChanged, []);
    const edited = notebook([prose('# 1. Title'), code('done();'), prose('New text.'), prose('Added.')]);
    assert.deepEqual(syncNotebook(edited, reviewed, {}, '01-zh').proseChanged, [2, 3]);
    const again = syncNotebook(edited, reviewed, {}, '01-zh', true).notebook;
    assert.deepEqual(syncNotebook(edited, again, {}, '01-zh').proseChanged, []);
  });
});

describe('the Chinese edition', () => {
  it('is in sync: its code cells are the English code with the table applied (`npm run notebooks:sync`)', () => {
    const lines: string[] = [];
    const stale = syncEdition({ lang: 'zh', check: true }, (line) => lines.push(line));
    assert.deepEqual(stale, [], lines.join('\n'));
  });

  it('writes every markdown cell in Chinese, under a title numbered like the English one', () => {
    for (const name of readdirSync(join(NOTEBOOKS, 'zh')).filter((f) => f.endsWith('.ipynb'))) {
      const cells = (JSON.parse(readFileSync(join(NOTEBOOKS, 'zh', name), 'utf8')) as Notebook).cells;
      const english = (JSON.parse(readFileSync(join(NOTEBOOKS, name), 'utf8')) as Notebook).cells;
      for (const [i, cell] of cells.entries()) {
        if (cell.cell_type === 'markdown') assert.match(cellText(cell), /\p{Script=Han}/u, `zh/${name} cell ${i + 1} has no Chinese: translate it`);
      }
      assert.equal(/^# (\d+)\. /.exec(cellText(cells[0]))?.[1], /^# (\d+)\. /.exec(cellText(english[0]))?.[1], `zh/${name}: chapter number`);
    }
  });
});
