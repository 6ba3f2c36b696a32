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

describe('the notebooks', () => {
  it('are the chapters, numbered in reading order', () => {
    assert.deepEqual(files.map((f) => f.slice(0, 3)), ['01-', '02-', '03-', '04-', '05-', '06-', '07-', '08-']);
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
        assert.match(lines[0], /^# \d\. /, 'an H1 title');
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

  it('the redefinition check catches a copy of a library function', () => {
    const names = declaredNames('function lineChart() {}\nconst checkEquivalence = () => 1;\nclass GradientAccumulator {}');
    const exported = exportedNames();
    assert.deepEqual(names.filter((n) => exported.has(n)), ['lineChart', 'checkEquivalence', 'GradientAccumulator']);
  });
});
