/**
 * Type-checks every notebook the way Deno would run it: `deno check` on each notebook's code
 * cells, concatenated in order into one module. Deno's Jupyter kernel runs cells without
 * type-checking them (tslab checks each cell as it runs), so this is the Deno path's type check.
 * Errors point at the notebook, the cell and the line in that cell.
 *
 *   npm run check:deno [-- NOTEBOOK ...]
 *
 * The concatenated files go to build/deno-check/ (kept, to read an error in context). They are
 * checked with the repository's deno.json, whose `sloppy-imports` lets Deno follow dist/'s
 * extensionless `.d.ts` imports. Exits 1 on any error.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { denoBinary } from '../installKernel';
import { codeCells, findNotebooks, readNotebook, type CodeCell } from './notebooks';

const ROOT = path.resolve(__dirname, '..', '..');
const CONFIG = {
  outDir: path.join(ROOT, 'build', 'deno-check'),
  denoConfig: path.join(ROOT, 'deno.json'),
};

/** Where a line of the concatenated module came from. */
export interface LineOrigin {
  cell: number;
  line: number;
}

/** One notebook's cells as one module, and the origin of each of its lines (index = line - 1). */
export function concatenateCells(cells: CodeCell[]): { source: string; origins: (LineOrigin | null)[] } {
  const lines: string[] = [];
  const origins: (LineOrigin | null)[] = [];
  for (const { cell, code } of cells) {
    // A marker line between cells, so that the file reads like the notebook.
    lines.push(`// ---- cell ${cell}`);
    origins.push(null);
    code.split('\n').forEach((text, i) => {
      lines.push(text);
      origins.push({ cell, line: i + 1 });
    });
  }
  // `export {}` keeps a notebook without imports a module (top-level await, own scope).
  return { source: `${lines.join('\n')}\nexport {};\n`, origins };
}

/**
 * Rewrites deno's locations in `output` ("file:///…/02-model.ts:12:5") that point into `file`
 * to the notebook's own: "notebooks/02-model.ipynb, cell 7, line 3:5".
 */
export function mapLocations(output: string, file: string, notebook: string, origins: (LineOrigin | null)[]): string {
  const url = `file://${file.split(path.sep).join('/')}`;
  const escaped = url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return output.replace(new RegExp(`${escaped}:(\\d+):(\\d+)`, 'g'), (whole, line: string, column: string) => {
    const origin = origins[Number(line) - 1];
    return origin ? `${notebook}, cell ${origin.cell}, line ${origin.line}:${column}` : whole;
  });
}

/** What `deno check` said about a set of notebooks. */
export interface CheckResult {
  ok: boolean;
  /** deno's report with every location in a notebook rewritten to the notebook, cell and line. */
  report: string;
  /** The notebooks (relative to the repository) that the report names. */
  failing: string[];
}

/**
 * Checks the notebooks in one `deno check` run (one TypeScript program: the library's types are
 * loaded once, not once per notebook).
 */
export function checkNotebooks(notebooks: string[], deno: string): CheckResult {
  const files = notebooks.map((notebook) => {
    const relative = path.relative(ROOT, notebook);
    const { source, origins } = concatenateCells(codeCells(readNotebook(notebook)));
    // A notebook outside the repository (a test's) goes to outside/, still under the repository's
    // node_modules and deno.json.
    const name = relative.startsWith('..') ? path.join('outside', path.basename(notebook)) : relative;
    const file = path.join(CONFIG.outDir, name.replace(/\.ipynb$/, '.ts'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, source);
    return { relative, file, origins };
  });
  const r = spawnSync(deno, ['check', `--config=${CONFIG.denoConfig}`, ...files.map((f) => f.file)], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
  });
  if (r.error) throw r.error;
  // "Check file:///…" progress lines say nothing once the errors are mapped, nor does the Rust
  // backtrace that deno appends when RUST_BACKTRACE is set.
  let report = `${r.stdout}${r.stderr}`.replace(/^Stack backtrace:[\s\S]*$/m, '').split('\n').filter((l) => !/^(Check|Download) /.test(l)).join('\n').trim();
  for (const f of files) report = mapLocations(report, f.file, f.relative, f.origins);
  const failing = files.filter((f) => report.includes(`${f.relative}, cell `)).map((f) => f.relative);
  return { ok: r.status === 0, report, failing };
}

function main(): void {
  const inputs = process.argv.slice(2);
  const unknown = inputs.find((a) => a.startsWith('-'));
  if (unknown) {
    console.error(`check:deno: unknown option ${unknown}; accepted: notebook files (default: every notebook under notebooks/).`);
    process.exit(2);
  }
  const notebooks = inputs.length > 0 ? inputs.map((f) => path.resolve(f)) : findNotebooks();
  if (notebooks.length === 0) {
    console.error('check:deno: no notebooks found under notebooks/.');
    process.exit(1);
  }
  const deno = denoBinary();
  if (!deno) {
    console.error('check:deno: no deno binary in node_modules; run `npm ci` (deno is a devDependency).');
    process.exit(1);
  }
  const result = checkNotebooks(notebooks, deno);
  if (result.report) console.log(result.report);
  for (const notebook of notebooks) {
    const relative = path.relative(ROOT, notebook);
    console.log(`${result.failing.includes(relative) ? 'FAILED' : 'ok    '} ${relative}`);
  }
  // A failure that names no notebook (a broken deno.json, a missing module) still fails.
  const failed = result.ok ? 0 : Math.max(1, result.failing.length);
  console.log(`deno check: ${result.ok ? notebooks.length : notebooks.length - result.failing.length} of ${notebooks.length} notebooks type-check under Deno.`);
  process.exit(failed > 0 ? 1 : 0);
}

if (require.main === module) main();
