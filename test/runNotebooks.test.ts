import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLOTLY_MIME } from '../src/plot';
import { loadNotebook, REPORT_KEY, runNotebook, type Notebook, type NotebookReport } from '../scripts/runNotebooks';

// These tests start real tslab kernels (one process per notebook) on the fixture notebooks, which
// import the built library by package name: `npm run build` must have run (test:unit does).
const ROOT = path.resolve(__dirname, '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');
const fixture = (name: string): string => path.join(FIXTURES, `${name}.ipynb`);

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'runNotebooks-test-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the runner's command line, as `npm run notebooks -- ARGS` would. */
function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'runNotebooks.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function read(file: string): Notebook {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
}

/** A minimal notebook that needs nothing from this repository, for folders outside it. */
function tinyNotebook(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'tslab', display_name: 'TypeScript', language: 'typescript' } },
    cells: [{ cell_type: 'code', metadata: {}, source: 'console.log(6 * 7);', outputs: [], execution_count: null }],
    ...overrides,
  });
}

describe('runNotebook on a passing notebook', () => {
  let report: NotebookReport;
  let executed: Notebook;
  let sourceBefore: string;

  before(async () => {
    sourceBefore = fs.readFileSync(fixture('passing'), 'utf8');
    report = await runNotebook(fixture('passing'), { outDir: path.join(tmp, 'passing'), log: () => {} });
    executed = read(report.outFile!);
  });

  it('reports success with a timing for every code cell', () => {
    assert.equal(report.status, 'ok', JSON.stringify(report.error));
    assert.equal(report.executedCells, 5);
    assert.deepEqual(report.cells.map((c) => c.cell), [2, 4, 5, 6, 7]);
    assert.ok(report.cells.every((c) => c.durationMs >= 0));
    assert.equal(report.outFile, path.join(tmp, 'passing', 'passing.ipynb'));
  });

  it('leaves the source notebook byte for byte as it was', () => {
    assert.equal(fs.readFileSync(fixture('passing'), 'utf8'), sourceBefore);
  });

  it('records execution counts, stdout, stderr and the timing keys nbclient writes', () => {
    const code = executed.cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code.map((c) => c.execution_count), [1, 2, 3, 4, 5]);
    assert.deepEqual(code[1].outputs, [
      { output_type: 'stream', name: 'stdout', text: 'accumulationSteps = 4\n<script>window.__textScriptRan = true;</script> is printed, not run\n' },
      { output_type: 'stream', name: 'stderr', text: 'a warning on stderr\n' },
    ]);
    // The value of a cell's last expression is printed, as in the tslab kernel; here after an await.
    assert.deepEqual(code[4].outputs, [{ output_type: 'stream', name: 'stdout', text: '8\n' }]);
    const timing = code[0].metadata.execution as Record<string, string>;
    assert.ok(Date.parse(timing['shell.execute_reply']) >= Date.parse(timing['iopub.execute_input']));
  });

  it('keeps every MIME type of a display bundle: HTML from tslab.display, the three of showFigure', () => {
    const code = executed.cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[2].outputs, [{ output_type: 'display_data', data: { 'text/html': '<b id="kept-html">HTML output is kept</b>' }, metadata: {} }]);
    const [chart] = code[3].outputs!;
    assert.equal(chart.output_type, 'display_data');
    const data = (chart as { data: Record<string, unknown> }).data;
    assert.deepEqual(Object.keys(data).sort(), [PLOTLY_MIME, 'text/html', 'text/plain'].sort());
    const fig = data[PLOTLY_MIME] as { data: { name: string }[] };
    assert.deepEqual(fig.data.map((t) => t.name), ['accumulationSteps = 1', 'accumulationSteps = 4']);
  });

  it('stores its report in the executed copy, which is a valid notebook of the same kernel', () => {
    const runner = (executed.metadata[REPORT_KEY] as { runner: { status: string; executedCells: number } }).runner;
    assert.equal(runner.status, 'ok');
    assert.equal(runner.executedCells, 5);
    assert.doesNotThrow(() => loadNotebook(report.outFile!));
  });
});

describe('the runner command on failing notebooks', () => {
  it('names the notebook, the cell, its first line and the full runtime error, and stops there', () => {
    const out = path.join(tmp, 'runtime');
    const r = cli(`--out=${out}`, fixture('runtime-error'));
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /test\/fixtures\/notebooks\/runtime-error\.ipynb, cell 3 \("\/\/ The runner must name this cell and print the full error\."\) failed:\n/,
    );
    assert.match(r.stderr, /RangeError: microBatchSize 16 is too large for this fixture\n\s+at evalmachine/);
    assert.doesNotMatch(r.stderr, /tslab[\\/]dist/, 'the harness’s own stack frames are dropped');
    const code = read(path.join(out, 'runtime-error.ipynb')).cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[0].outputs, [{ output_type: 'stream', name: 'stdout', text: 'first cell ran\n' }]);
    const error = code[1].outputs![0] as { output_type: string; ename: string; evalue: string };
    assert.deepEqual([error.output_type, error.ename, error.evalue], ['error', 'RangeError', 'microBatchSize 16 is too large for this fixture']);
    assert.equal(code[2].execution_count, null, 'cells after the failure do not run');
    assert.deepEqual(code[2].outputs, []);
    assert.match(r.stdout, /runtime-error\.ipynb\s+2\/3 .* FAILED at cell 3/);
  });

  it('reports a type error with its position in the cell', () => {
    const r = cli(`--out=${path.join(tmp, 'type')}`, fixture('type-error'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /type-error\.ipynb, cell 2 \("const learningRate: number = 'fast';"\) failed:\n\s+1:7 - Type 'string' is not assignable to type 'number'\./);
  });

  it('kills a cell that runs past the per-cell timeout and keeps the outputs before it', () => {
    const out = path.join(tmp, 'timeout');
    const r = cli('--timeout=3', `--out=${out}`, fixture('timeout'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /timeout\.ipynb, cell 3 \("while \(true\) \{"\) timed out:\n\s+the cell did not finish within 3 s/);
    const code = read(path.join(out, 'timeout.ipynb')).cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[0].outputs, [{ output_type: 'stream', name: 'stdout', text: 'before the loop\n' }]);
    assert.equal((code[1].outputs![0] as { ename: string }).ename, 'CellTimeoutError');
  });
});

describe('the runner command on bad input', () => {
  it('explains each unusable notebook and still runs and reports the others', () => {
    const dir = path.join(tmp, 'bad');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a-good.ipynb'), tinyNotebook());
    fs.writeFileSync(path.join(dir, 'b-invalid.ipynb'), '{ "cells": [ ');
    fs.writeFileSync(path.join(dir, 'c-python.ipynb'), tinyNotebook({ metadata: { kernelspec: { name: 'python3', language: 'python' } } }));
    fs.writeFileSync(path.join(dir, 'd-old.ipynb'), tinyNotebook({ nbformat: 3, nbformat_minor: 0 }));
    const r = cli(`--out=${path.join(tmp, 'bad-out')}`, dir, path.join(dir, 'e-missing.ipynb'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /b-invalid\.ipynb cannot be run:\n\s+invalid JSON: /);
    assert.match(r.stderr, /c-python\.ipynb cannot be run:\n\s+wrong kernel: metadata\.kernelspec\.name must be "tslab" \(the TypeScript kernel\); got "python3" \(language python\)/);
    assert.match(r.stderr, /d-old\.ipynb cannot be run:\n\s+unsupported nbformat 3\.0; nbformat must be 4/);
    assert.match(r.stderr, /e-missing\.ipynb cannot be run:\n\s+file not found: /);
    assert.match(r.stdout, /a-good\.ipynb\s+1\/1 .* ok\n/);
    assert.match(r.stdout, /total .* 1\/5 ok/);
    const good = read(path.join(tmp, 'bad-out', 'a-good.ipynb'));
    assert.deepEqual(good.cells[0].outputs, [{ output_type: 'stream', name: 'stdout', text: '42\n' }]);
  });

  it('says so when there is no notebook to run', () => {
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    const r = cli(empty);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /No notebooks to run: .*empty\/ holds no \.ipynb files\./);
  });

  it('with --check-clean, refuses a source notebook committed with outputs', () => {
    const dir = path.join(tmp, 'dirty');
    fs.mkdirSync(dir);
    const cells = [{ cell_type: 'code', metadata: {}, source: '1', outputs: [], execution_count: 3 }];
    fs.writeFileSync(path.join(dir, 'dirty.ipynb'), tinyNotebook({ cells }));
    const r = cli('--check-clean', `--out=${path.join(tmp, 'dirty-out')}`, dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not clean: cell 1 has outputs or an execution count/);
  });

  it('rejects a bad option, naming what is accepted', () => {
    const r = cli('--timeout=soon');
    assert.equal(r.status, 2);
    assert.equal(r.stderr.trim(), 'runNotebooks: --timeout must be a positive number of seconds; got "soon".');
  });
});
