import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLOTLY_MIME } from '../../../src/tutorial/plot';
import { MAX_TIMEOUT_SECONDS } from '../../../scripts/notebooks/args';
import { loadNotebook, REPORT_KEY, type Notebook, type NotebookReport } from '../../../scripts/notebooks/nbformat';
import { cleanErrorText, collectNotebooks, outPath, runNotebook, runNotebooks } from '../../../scripts/notebooks/runner';

// These tests start real tslab kernels (one process per notebook) on the fixture notebooks; the
// passing one imports the built library by package name: `npm run build` must have run
// (test:unit does). The command line's own tests are in cli.test.ts.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');
const fixture = (name: string): string => path.join(FIXTURES, `${name}.ipynb`);

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-test-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function read(file: string): Notebook {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
}

/** A notebook of code cells in `dir` (one cell for a string) that needs nothing from this repository. */
function tinyNotebook(dir: string, name: string, source: string | string[]): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const kernelspec = { name: 'tslab', display_name: 'TypeScript', language: 'typescript' };
  const cells = [source].flat().map((s) => ({ cell_type: 'code', metadata: {}, source: s, outputs: [], execution_count: null }));
  fs.writeFileSync(file, JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { kernelspec }, cells }));
  return file;
}

/** The text of a cell's stream outputs. */
const streamText = (cell: Notebook['cells'][number]): string => (cell.outputs ?? []).filter((o) => o.output_type === 'stream').map((o) => [(o as { text: string | string[] }).text].flat().join('')).join('');

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
    // The copy is written beside and renamed over (a reader never sees half of it): nothing else stays.
    assert.deepEqual(fs.readdirSync(path.join(tmp, 'passing')), ['passing.ipynb']);
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

describe('runNotebook on an error nobody handles', () => {
  it('fails at the cell that was running when a timer threw, not the cell that set the timer', async () => {
    const report = await runNotebook(fixture('uncaught-exception'), { outDir: path.join(tmp, 'uncaught'), log: () => {} });
    assert.equal(report.status, 'failed');
    assert.equal(report.error?.kind, 'unhandled');
    assert.equal(report.error?.cell, 3);
    assert.match(report.error!.text, /^TypeError: thrown from a timer that no cell awaits\n/);
    assert.match(report.error!.text, /while this cell was running: an exception was thrown outside any cell/);
    const code = read(report.outFile!).cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[1].outputs![0], { output_type: 'stream', name: 'stdout', text: 'the waiting cell finished\n' });
    const error = code[1].outputs![1] as { output_type: string; ename: string; evalue: string };
    assert.deepEqual([error.output_type, error.ename, error.evalue], ['error', 'TypeError', 'thrown from a timer that no cell awaits']);
    assert.equal(code[2].execution_count, null, 'cells after the failure do not run');
  });
});

describe('runNotebook with the longest timeouts', () => {
  it('runs cells under the largest finite timeout and under none, instead of killing them at once', async () => {
    // Node fires a timer of 2^31 ms or more immediately: the cell below would be reported as
    // timed out after a few ms.
    const file = tinyNotebook(path.join(tmp, 'long'), 'long.ipynb', "await new Promise((resolve) => setTimeout(resolve, 300));\nconsole.log('waited');");
    for (const cellTimeoutSeconds of [MAX_TIMEOUT_SECONDS, Infinity]) {
      const report = await runNotebook(file, { outDir: path.join(tmp, 'long-out'), cellTimeoutSeconds, log: () => {} });
      assert.equal(report.status, 'ok', `${cellTimeoutSeconds}: ${JSON.stringify(report.error)}`);
      assert.ok(report.cells[0].durationMs >= 250);
    }
  });

  it('refuses a timeout past 2^31 - 1 ms before starting any kernel', async () => {
    const file = tinyNotebook(path.join(tmp, 'huge'), 'huge.ipynb', '1');
    await assert.rejects(runNotebook(file, { cellTimeoutSeconds: 3e6, outDir: path.join(tmp, 'huge-out') }), { name: 'RunnerArgumentError' });
    await assert.rejects(runNotebooks({ inputs: [file], cellTimeoutSeconds: 3e6, outDir: path.join(tmp, 'huge-out') }), { name: 'RunnerArgumentError' });
    assert.equal(fs.existsSync(path.join(tmp, 'huge-out')), false);
  });
});

describe('runNotebook with output past its caps', () => {
  it('keeps the first 1 MB of a cell that prints 100 × 1 MB, says so in the cell, and runs on', { timeout: 600_000 }, async () => {
    const file = tinyNotebook(path.join(tmp, 'flood'), 'flood.ipynb', ["for (let i = 0; i < 100; i++) console.log('x'.repeat(1_000_000));", "console.log('after the flood');"]);
    const report = await runNotebook(file, { outDir: path.join(tmp, 'flood-out'), log: () => {} });
    assert.equal(report.status, 'ok', JSON.stringify(report.error));
    assert.ok(fs.statSync(report.outFile!).size < 1_100_000, `the executed copy holds ${fs.statSync(report.outFile!).size} bytes`);
    const [flood, after] = read(report.outFile!).cells;
    assert.match(streamText(flood), /\[output truncated: the runner keeps at most 1 MB per cell \(--max-cell-output\); this cell's output past its first 1 MB was dropped\]/);
    assert.equal(streamText(after), 'after the flood\n');
  });

  it('cuts at the notebook cap across cells, and keeps a display whole or not at all', { timeout: 900_000 }, async () => {
    const print = "console.log('y'.repeat(60_000));";
    const file = tinyNotebook(path.join(tmp, 'caps'), 'caps.ipynb', [print, print, "require('tslab').display.html('<b>' + 'z'.repeat(60_000) + '</b>');", "console.log('small');"]);
    const report = await runNotebook(file, { outDir: path.join(tmp, 'caps-out'), log: () => {}, maxCellOutputBytes: 1_000_000, maxNotebookOutputBytes: 100_000 });
    assert.equal(report.status, 'ok', JSON.stringify(report.error));
    const cells = read(report.outFile!).cells;
    assert.equal(streamText(cells[0]).length, 60_001, 'the first cell whole');
    assert.match(streamText(cells[1]), /^y{39999}\n\[output truncated: the runner keeps at most 100 kB per notebook \(--max-notebook-output\)/);
    assert.deepEqual(cells[2].outputs!.map((o) => o.output_type), ['stream'], 'the display did not fit: only the note');
    assert.match(streamText(cells[2]), /output truncated/);
  });
});

describe('runNotebook and the processes a cell starts', () => {
  it('stops one that left the kernel\'s process group and session (setsid) once its shell exited', { timeout: 900_000 }, async () => {
    const marker = `4322.${process.pid}${Date.now() % 1000}`;
    const sleeping = (): number[] => fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((e) => {
      try {
        return fs.readFileSync(`/proc/${e}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
      } catch {
        return false;
      }
    }).map(Number);
    const file = tinyNotebook(path.join(tmp, 'setsid'), 'setsid.ipynb', [`require('child_process').spawnSync('sh', ['-c', 'setsid sleep ${marker} &'], { stdio: 'ignore' });`]);
    try {
      const report = await runNotebook(file, { outDir: path.join(tmp, 'setsid-out'), log: () => {} });
      assert.equal(report.status, 'ok', JSON.stringify(report.error));
      assert.deepEqual(sleeping(), [], 'the setsid sleep outlived the runner');
    } finally {
      for (const pid of sleeping()) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('collectNotebooks, outPath and cleanErrorText', () => {
  it('expands a folder to its notebooks in name order and keeps files as given', () => {
    const files = collectNotebooks([FIXTURES, 'missing.ipynb']);
    assert.deepEqual(files.slice(0, 2).map((f) => path.basename(f)), ['passing.ipynb', 'runtime-error.ipynb']);
    assert.equal(files[files.length - 1], 'missing.ipynb');
  });

  it('keeps a notebook\'s path below the notebook folder, so that a translation does not overwrite its original', () => {
    const root = path.join(tmp, 'book');
    assert.equal(outPath(path.join(root, '01-a.ipynb'), 'out', root), path.resolve('out', '01-a.ipynb'));
    assert.equal(outPath(path.join(root, 'zh', '01-a.ipynb'), 'out', root), path.resolve('out', 'zh', '01-a.ipynb'));
    assert.equal(outPath(path.join(tmp, 'elsewhere', '01-a.ipynb'), 'out', root), path.resolve('out', '01-a.ipynb'));
    assert.equal(outPath(path.join(ROOT, 'notebooks', '03-accumulation.ipynb'), 'build/notebooks'), path.resolve('build/notebooks/03-accumulation.ipynb'));
  });

  it("drops the harness's stack frames and keeps the notebook's", () => {
    const text = ['Error: x', '    at evalmachine.<anonymous>:1:1', '    at Script.runInContext (node:vm:1:1)', `    at run (${ROOT}/node_modules/tslab/dist/executor.js:1:1)`, `    at go (${ROOT}/scripts/notebooks/runner.ts:1:1)`].join('\n');
    assert.equal(cleanErrorText(text), 'Error: x\n    at evalmachine.<anonymous>:1:1');
  });
});
