import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as ts from 'typescript';
import * as core from '../../src/index';
import * as backend from '../../src/backend/index';
import * as parallel from '../../src/parallel/index';
import * as tutorial from '../../src/tutorial/index';

/**
 * The rules every tutorial notebook keeps (they are read, not run, here; `npm test` also runs
 * them): committed clean, the same shape, and never a private copy of library code.
 */

const folder = join(__dirname, '..', '..', 'notebooks');
const files = readdirSync(folder).filter((f) => f.endsWith('.ipynb')).sort();
/** The Chinese edition (`zh/01-environment.ipynb` …) keeps the same rules. */
const translated = readdirSync(join(folder, 'zh')).filter((f) => f.endsWith('.ipynb')).sort().map((f) => `zh/${f}`);

interface Cell {
  cell_type: string;
  source: string | string[];
  metadata?: { tags?: string[] };
  outputs?: unknown[];
  execution_count?: number | null;
}
const read = (file: string) => JSON.parse(readFileSync(join(folder, file), 'utf8')) as { cells: Cell[]; metadata: { kernelspec?: { name?: string } } };
const text = (cell: Cell) => (Array.isArray(cell.source) ? cell.source.join('') : cell.source);

/** Every name the entry points export (`tfjs-accumulate`, `/backend`, `/parallel`, `/tutorial`), values and types alike. */
function exportedNames(): Set<string> {
  const names = new Set([...Object.keys(core), ...Object.keys(backend), ...Object.keys(parallel), ...Object.keys(tutorial)]);
  for (const entry of ['core/index.ts', 'backend/index.ts', 'parallel/index.ts', 'tutorial/index.ts']) {
    const file = ts.createSourceFile(entry, readFileSync(join(__dirname, '..', '..', 'src', entry), 'utf8'), ts.ScriptTarget.Latest);
    file.forEachChild((node) => {
      if (ts.isExportDeclaration(node) && node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const e of node.exportClause.elements) names.add(e.name.text);
      }
    });
  }
  return names;
}

/** Names a piece of code declares, at any depth: functions, classes, variables, types. */
function declaredNames(code: string): string[] {
  const source = ts.createSourceFile('cell.ts', code, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name) {
      names.push(node.name.text);
    }
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) names.push(node.name.text);
    node.forEachChild(visit);
  };
  visit(source);
  return names;
}

/** How many lines a function defined in a notebook may span before it counts as library code. */
const MAX_NOTEBOOK_FUNCTION_LINES = 8;
/** The comment that marks a longer function as the article's own code, rebuilt from scratch. */
const FROM_SCRATCH = /\/\/\s*From scratch\b/i;

/**
 * Functions in a piece of code that span more than `MAX_NOTEBOOK_FUNCTION_LINES` lines and are
 * not marked as from-scratch code: named function declarations, and function or arrow
 * expressions given to a variable. Inline callbacks are part of the statement that uses them.
 */
function longFunctions(code: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile('cell.ts', code, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const check = (name: string, fn: ts.Node, statement: ts.Node) => {
    const lines = lineOf(fn.getEnd()) - lineOf(fn.getStart(source)) + 1;
    const leading = code.slice(statement.getFullStart(), statement.getStart(source));
    if (lines > MAX_NOTEBOOK_FUNCTION_LINES && !FROM_SCRATCH.test(leading)) found.push({ name, lines });
  };
  const visit = (node: ts.Node) => {
    if (ts.isFunctionDeclaration(node) && node.name) check(node.name.text, node, node);
    if (ts.isVariableStatement(node)) {
      for (const d of node.declarationList.declarations) {
        const init = d.initializer;
        if (init && ts.isIdentifier(d.name) && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) check(d.name.text, init, node);
      }
    }
    node.forEachChild(visit);
  };
  visit(source);
  return found;
}

/** The longest code cell a chapter shows, in lines: about one screen, read without scrolling. */
const MAX_CELL_LINES = 25;
/** The longest code line, in characters: fits the site's code column without scrolling sideways. */
const MAX_LINE_CHARACTERS = 88;
/**
 * Jupyter's tags for a cell whose code the reader does not need (Jupyter Book, nbconvert's
 * TagRemovePreprocessor): its outputs stay, its code is hidden or folded.
 */
const HIDING_TAGS = ['remove-input', 'hide-input', 'remove-cell'];
/** How many checks (`assert…(` or `check(` calls) a chapter may show in its visible code. */
const MAX_VISIBLE_CHECKS = 4;

const hidden = (cell: Cell) => (cell.metadata?.tags ?? []).some((t) => HIDING_TAGS.includes(t));

/** What is wrong with the shape of one code cell: too many lines, or lines too long. */
function shapeProblems(code: string): string[] {
  const lines = code.replace(/\n+$/, '').split('\n');
  const problems = lines.length > MAX_CELL_LINES ? [`${lines.length} lines (at most ${MAX_CELL_LINES})`] : [];
  for (const [i, line] of lines.entries()) {
    if (line.length > MAX_LINE_CHARACTERS) problems.push(`line ${i + 1} has ${line.length} characters (at most ${MAX_LINE_CHARACTERS})`);
  }
  return problems;
}

/** The checks a reader sees: `assert(`, `assert.equal(` … and `check(` calls in cells not hidden by a tag. */
function visibleChecks(cells: Cell[]): number {
  const calls = /\bassert(?:\.\w+)?\(|(?<![.\w])check\(/g;
  return cells.filter((c) => c.cell_type === 'code' && !hidden(c)).reduce((n, c) => n + (text(c).match(calls)?.length ?? 0), 0);
}

/** Whether a cell is harness, not lesson: the backend choice every chapter repeats, or the final leak check. */
function isBoilerplate(code: string): boolean {
  return /^const environment = await selectBackend\(/m.test(code) || /tf\.memory\(\)\.numTensors,\s*0/.test(code);
}

/**
 * Upstream issues and pull requests a piece of markdown names (`#34191`, `PR #19998`) without a
 * link to their GitHub page: every `#N` must be the text of a link whose address ends in
 * `/issues/N` or `/pull/N`.
 */
function unlinkedIssues(markdown: string): string[] {
  const found: string[] = [];
  const link = /\[([^\]]*)\]\(([^)\s]*)\)/g;
  for (const [, label, href] of markdown.matchAll(link)) {
    for (const [, n] of label.matchAll(/#(\d+)/g)) {
      if (!new RegExp(`^https://github\\.com/[^/]+/[^/]+/(issues|pull)/${n}$`).test(href)) found.push(n);
    }
  }
  for (const [, n] of markdown.replace(link, '').matchAll(/#(\d+)/g)) found.push(n);
  return found;
}

describe('the notebooks', () => {
  it('are the chapters, numbered in reading order', () => {
    assert.deepEqual(files.map((f) => f.slice(0, 3)), ['00-', '01-', '02-', '03-', '04-', '05-', '06-', '07-', '08-', '09-', '10-']);
  });

  for (const file of [...files, ...translated]) {
    describe(file, () => {
      const notebook = read(file);

      it('is committed clean: no outputs, no execution counts', () => {
        for (const [i, cell] of notebook.cells.entries()) {
          if (cell.cell_type !== 'code') continue;
          assert.deepEqual(cell.outputs, [], `cell ${i + 1} has outputs`);
          assert.equal(cell.execution_count, null, `cell ${i + 1} has an execution count`);
        }
      });

      it('uses the tslab kernel, opens with an H1 title and a subtitle, then one imports cell', () => {
        assert.equal(notebook.metadata.kernelspec?.name, 'tslab');
        const [title, imports] = notebook.cells;
        assert.equal(title.cell_type, 'markdown');
        const lines = text(title).split('\n').filter((l) => l.trim() !== '');
        assert.match(lines[0], /^# \d+\. /, 'an H1 title');
        assert.ok(lines.length === 2 && !lines[1].startsWith('#'), 'one subtitle line');
        assert.equal(imports.cell_type, 'code');
        assert.ok(text(imports).split('\n').every((l) => l.trim() === '' || l.startsWith('import ') || /^\s|^}/.test(l)), 'only imports');
        const elsewhere = notebook.cells.slice(2).filter((c) => c.cell_type === 'code' && /^import /m.test(text(c)));
        assert.equal(elsewhere.length, 0, 'imports only in the imports cell');
      });

      it("imports the library by its package name and never redefines what it exports", () => {
        const code = notebook.cells.filter((c) => c.cell_type === 'code').map(text).join('\n');
        assert.match(code, /from 'tfjs-accumulate(\/backend|\/parallel|\/tutorial)?'/);
        assert.doesNotMatch(code, /from '\.\.?\//, 'no relative imports of the source');
        const exported = exportedNames();
        const clashes = declaredNames(code).filter((name) => exported.has(name));
        assert.deepEqual(clashes, [], `redefines library exports: ${clashes.join(', ')}`);
      });

      if (file.endsWith('05-where-frameworks-slipped.ipynb')) {
        it('links every upstream issue and pull request it names to its GitHub page', () => {
          const prose = notebook.cells.filter((c) => c.cell_type === 'markdown').map(text).join('\n');
          assert.deepEqual(unlinkedIssues(prose), []);
          assert.ok((prose.match(/github\.com\/[^)]+\/(issues|pull)\/\d+/g) ?? []).length >= 9, 'all nine');
        });
      }

      it(`keeps code cells to ${MAX_CELL_LINES} lines of at most ${MAX_LINE_CHARACTERS} characters`, () => {
        for (const [i, cell] of notebook.cells.entries()) {
          if (cell.cell_type !== 'code') continue;
          assert.deepEqual(shapeProblems(text(cell)), [], `cell ${i + 1} is too big to read without scrolling`);
        }
      });

      it(`keeps its checks out of the reader's way: setup and teardown tagged, at most ${MAX_VISIBLE_CHECKS} visible checks`, () => {
        for (const [i, cell] of notebook.cells.entries()) {
          if (cell.cell_type === 'code' && isBoilerplate(text(cell))) {
            assert.ok(hidden(cell), `cell ${i + 1} is setup or teardown: tag it ${HIDING_TAGS.join(' or ')}`);
          }
        }
        const shown = visibleChecks(notebook.cells);
        assert.ok(shown <= MAX_VISIBLE_CHECKS, `${shown} visible checks: move the rest into cells tagged remove-input`);
      });

      it(`defines no function over ${MAX_NOTEBOOK_FUNCTION_LINES} lines unless it is marked as from-scratch code`, () => {
        for (const [i, cell] of notebook.cells.entries()) {
          if (cell.cell_type !== 'code') continue;
          const long = longFunctions(text(cell));
          assert.deepEqual(long, [], `cell ${i + 1} defines ${long.map((f) => `${f.name} (${f.lines} lines)`).join(', ')}: move it into the library, or mark the article's own code with "// From scratch"`);
        }
      });
    });
  }

  it('the long-function check catches a helper that belongs in the library, and spares marked from-scratch code', () => {
    const body = Array.from({ length: 8 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const helper = `const timeIt = () => {\n${body}\n};`;
    assert.deepEqual(longFunctions(helper), [{ name: 'timeIt', lines: 10 }]);
    assert.deepEqual(longFunctions(`function timeIt() {\n${body}\n}`), [{ name: 'timeIt', lines: 10 }]);
    assert.deepEqual(longFunctions(`// From scratch: the article's train_step.\n${helper}`), []);
    assert.deepEqual(longFunctions('const short = () => {\n  return 1;\n};'), []);
  });

  it('the shape check catches a long cell and a long line, and passes a cell at the limits', () => {
    const atLimit = Array.from({ length: MAX_CELL_LINES }, () => 'x'.repeat(MAX_LINE_CHARACTERS)).join('\n');
    assert.deepEqual(shapeProblems(`${atLimit}\n`), []);
    assert.deepEqual(shapeProblems(`${atLimit}\ny;`), [`${MAX_CELL_LINES + 1} lines (at most ${MAX_CELL_LINES})`]);
    assert.deepEqual(shapeProblems(`ok;\n${'y'.repeat(MAX_LINE_CHARACTERS + 1)}`), [`line 2 has ${MAX_LINE_CHARACTERS + 1} characters (at most ${MAX_LINE_CHARACTERS})`]);
  });

  it('the checks rule counts asserts and checks in visible cells only, and finds untagged setup and teardown', () => {
    const cell = (source: string, tags?: string[]): Cell => ({ cell_type: 'code', source, metadata: tags ? { tags } : {} });
    const cells = [cell('assert.equal(a, 1);\nassert(b);\ncheck(c, "c holds");'), cell('assert.ok(d);', ['remove-input']), cell('x.check(e); recheck(f);')];
    assert.equal(visibleChecks(cells), 3);
    assert.equal(visibleChecks([cells[1]]), 0);
    assert.ok(isBoilerplate("const environment = await selectBackend(undefined, { onNotice: () => {} });"));
    assert.ok(isBoilerplate('assert.equal(tf.memory().numTensors, 0);'));
    assert.ok(!isBoilerplate("const report = await selectBackend(undefined);\nawait showTable(rows);"));
    assert.ok(hidden(cell('', ['hide-input'])) && !hidden(cell('', ['other'])));
  });

  it('the upstream-link check finds a bare issue number and a link to the wrong page', () => {
    const good = '[#34191](https://github.com/huggingface/transformers/pull/34191)';
    assert.deepEqual(unlinkedIssues(`fixed in ${good} and [PR #1875](https://github.com/pytorch/torchtune/pull/1875)`), []);
    assert.deepEqual(unlinkedIssues('transformers #34191 fixed it'), ['34191']);
    assert.deepEqual(unlinkedIssues('[#35438](https://github.com/huggingface/transformers/pull/35808)'), ['35438']);
    assert.deepEqual(unlinkedIssues('[#19990](https://example.com/issues/19990)'), ['19990']);
  });

  it('the redefinition check catches a copy of a library function', () => {
    const names = declaredNames('function lineChart() {}\nconst checkEquivalence = () => 1;\nclass GradientAccumulator {}');
    const exported = exportedNames();
    assert.deepEqual(names.filter((n) => exported.has(n)), ['lineChart', 'checkEquivalence', 'GradientAccumulator']);
  });
});
