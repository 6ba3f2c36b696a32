import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { cellOutputs, findLosses, formattingDifferences } from '../../scripts/deno/compareOutputs';
import { NOTEBOOKS_DIR, readNotebook, type NotebookJson } from '../../scripts/deno/notebooks';
import { denoNotebooks } from '../helpers/frontEndSets';
import { isolatedJupyterEnv, nbconvertExecute, runCommand } from '../helpers/jupyter';
import { inSlots, NOTEBOOK_SLOTS } from '../helpers/notebookSlots';
import { Slots } from '../../scripts/notebooks/slots';
import { loadTslabReference } from '../helpers/tslabReference';
import { CELL_HANG_SECONDS } from '../helpers/ceilings';

// Executes every English chapter and the Chinese ones of test/helpers/frontEndSets.ts with
// Debian's `jupyter nbconvert --execute` under Deno, and compares each with a tslab run (the
// runner's or test:jupyter's, else its own), both kernels installed by
// `npm run kernel:install` into a temporary prefix: tslab, then Deno through
// scripts/deno/nbconvert_deno.py. Every notebook must pass under Deno, and no cell may show less under
// Deno than under tslab (fewer printed lines, displays or results). Needs `npm run build` and the
// Debian packages of scripts/systemDeps.sh. `npm run test:deno` runs it.
const ROOT = path.resolve(__dirname, '..', '..');
const NOTEBOOKS = path.resolve(process.env.NOTEBOOKS_DIR ?? NOTEBOOKS_DIR);
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');
const GENERATED = path.join(ROOT, 'build', 'deno-e2e');
const PYTHON = '/usr/bin/python3';
/** The MIME type of showFigure's Plotly JSON (docs/notebooks.md). */
const PLOTLY_MIME = 'application/vnd.plotly.v1+json';
/** Seconds a cell may run under nbconvert: a ceiling for a hang (test/helpers/ceilings.ts). */
const CELL_TIMEOUT = CELL_HANG_SECONDS;

let tmp: string;
let env: NodeJS.ProcessEnv;

const run = (command: string, args: string[]) => runCommand(command, args, { cwd: ROOT, env });

function installKernel(kernel: 'tslab' | 'deno'): Promise<{ status: number | null; output: string; kernelJson?: { argv: string[]; language: string; display_name: string } }> {
  const flags = kernel === 'deno' ? ['--deno'] : [];
  return run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'installKernel.ts'), ...flags, `--prefix=${path.join(tmp, 'prefix')}`]).then((r) => {
    const file = path.join(tmp, 'prefix', 'share', 'jupyter', 'kernels', kernel, 'kernel.json');
    return { status: r.status, output: r.stdout + r.stderr, kernelJson: fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined };
  });
}

/** Runs nbconvert on one notebook; on failure, `error` is what the failing cell printed. */
async function nbconvert(kernel: 'tslab' | 'deno', notebook: string): Promise<{ status: number | null; nb?: NotebookJson; error: string }> {
  const relative = path.relative(ROOT, notebook).startsWith('..') ? path.basename(notebook) : path.relative(ROOT, notebook);
  const outDir = path.join(tmp, 'out', kernel, path.dirname(relative));
  // tslab's run is test:jupyter's; Deno's adds the barrier against late output.
  const config = kernel === 'deno' ? path.join(ROOT, 'scripts', 'deno', 'nbconvert_deno.py') : path.join(ROOT, 'scripts', 'notebooks', 'nbconvert_config.py');
  const r = await nbconvertExecute({ notebook, outDir, config, kernel, cellTimeout: CELL_TIMEOUT, cwd: ROOT, env });
  return { status: r.status, nb: r.status === 0 ? readNotebook(r.outFile) : undefined, error: r.error };
}

/**
 * A notebook of code cells, written under build/: Deno's kernel starts in the notebook's folder
 * and finds deno.json, package.json and node_modules from there, so a notebook in /tmp could not
 * import the library.
 */
function notebook(name: string, cells: string[]): string {
  const file = path.join(GENERATED, name);
  fs.mkdirSync(GENERATED, { recursive: true });
  const nb = {
    cells: cells.map((source) => ({ cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source })),
    metadata: { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
  fs.writeFileSync(file, JSON.stringify(nb));
  return file;
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deno-e2e-'));
  // Only the kernelspecs installed below, and no state in the user's Jupyter folders.
  env = { ...isolatedJupyterEnv(tmp), DENO_NO_UPDATE_CHECK: '1' };
  assert.equal((await installKernel('tslab')).status, 0);
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.rmSync(GENERATED, { recursive: true, force: true });
});

describe('the deno kernelspec', () => {
  it('is installed by `kernel:install -- --deno`, idempotently, and runs the deno from node_modules behind the late-output proxy', async () => {
    const first = await installKernel('deno');
    assert.equal(first.status, 0, first.output);
    const second = await installKernel('deno');
    assert.equal(second.status, 0, second.output);
    assert.deepEqual(second.kernelJson, first.kernelJson);
    const [python, proxy, binary, ...args] = first.kernelJson!.argv;
    assert.equal(python, PYTHON);
    assert.equal(proxy, path.join(ROOT, 'scripts', 'deno', 'kernel_proxy.py'));
    assert.ok(binary.startsWith(path.join(ROOT, 'node_modules') + path.sep), binary);
    assert.deepEqual(args, ['{connection_file}']);
    // The language the notebooks declare: how a front end with only this kernel picks it.
    assert.equal(first.kernelJson!.language, 'typescript');
    assert.equal(first.kernelJson!.display_name, 'Deno');
  });
});

describe('jupyter nbconvert --execute with the deno kernel', () => {
  before(async () => {
    // The kernelspec test above may be filtered out; installing again is harmless.
    assert.equal((await installKernel('deno')).status, 0);
  });

  it("keeps every line a cell prints, though Deno's kernel publishes some after the cell's idle", async () => {
    const lines = 300;
    const r = await nbconvert('deno', notebook('late-output.ipynb', [`for (let i = 0; i < ${lines}; i++) console.log(\`line \${i}\`);`, "console.log('second cell');\n42"]));
    assert.equal(r.status, 0, r.error);
    const [first, second] = cellOutputs(r.nb!);
    assert.equal(first.stdout.length, lines);
    assert.equal(first.stdout[lines - 1], `line ${lines - 1}`);
    assert.deepEqual(second.stdout, ['second cell'], 'no line of the first cell lands in the second');
    assert.equal(second.results, 1);
    assert.deepEqual(
      r.nb!.cells.map((c) => (c as { execution_count?: number }).execution_count),
      [1, 2],
      'the barrier takes no execution count',
    );
  });

  it('shows showFigure as one bundle of three MIME types and showTable as HTML and text, each in its own cell, and describeEnvironment names Deno', async () => {
    const r = await nbconvert(
      'deno',
      notebook('displays.ipynb', [
        "import { lineChart, showFigure, showTable } from 'tfjs-accumulate/tutorial';",
        "await showFigure(lineChart({ title: 'loss', xTitle: 'update', yTitle: 'loss', series: [{ name: 'train', x: [1, 2, 3], y: [3, 2, 1] }] }));",
        "await showTable([{ rule: 'per-sample', gap: 0 }]);\nconsole.log('after the table');",
        "import { describeEnvironment, selectBackend } from 'tfjs-accumulate/backend';\nconsole.log(describeEnvironment(await selectBackend('cpu', { onNotice: () => {} })));",
      ]),
    );
    assert.equal(r.status, 0, r.error);
    const [, chartCell, tableCell] = r.nb!.cells.map((c) => c.outputs ?? []);
    assert.deepEqual(chartCell.map((o) => o.output_type), ['display_data']);
    assert.deepEqual(Object.keys(chartCell[0].data!).sort(), [PLOTLY_MIME, 'text/html', 'text/plain'].sort());
    assert.deepEqual(tableCell.map((o) => o.output_type), ['display_data', 'stream'], 'the table comes before what the cell prints next');
    assert.deepEqual(Object.keys(tableCell[0].data!).sort(), ['text/html', 'text/plain']);
    // describeEnvironment names Deno and its own version, not the Node version Deno emulates.
    const runtime = cellOutputs(r.nb!)[3].stdout.find((l) => l.startsWith('runtime: '));
    assert.match(runtime ?? '', /^runtime: Deno \d+\.\d+\.\d+ \(Node compatibility [\d.]+\) on /);
  });

  it('fails on a runtime error and reports the cell with its error text', async () => {
    const r = await nbconvert('deno', path.join(FIXTURES, 'runtime-error.ipynb'));
    assert.notEqual(r.status, 0);
    assert.match(r.error, /^cell 3 \('\/\/ The runner must name this cell and print the full error\.'\) failed:\n/);
    assert.match(r.error, /RangeError: microBatchSize 16 is too large for this fixture/);
  });

  // NBCONVERT_DENO of test/helpers/frontEndSets.ts (every notebook with E2E_ALL_NOTEBOOKS=1).
  const notebooks = denoNotebooks(process.env, NOTEBOOKS).map((f) => path.join(NOTEBOOKS, f));
  if (notebooks.length === 0) {
    it('finds the notebooks to execute', () => {
      assert.fail(`no notebooks under ${path.relative(ROOT, NOTEBOOKS) || NOTEBOOKS}/ to execute`);
    });
  }
  // Two notebooks at a time, one that measures time alone (test/helpers/notebookSlots.ts).
  const slots = new Slots(NOTEBOOK_SLOTS);
  describe('the notebooks, two at a time', { concurrency: true }, () => {
    for (const file of notebooks) {
      const name = path.relative(ROOT, file);
      it(`executes ${name} under Deno, and no cell shows less than under tslab`, (t) => inSlots(slots, file, async () => {
        let start = performance.now();
        const deno = await nbconvert('deno', file);
        const denoSeconds = (performance.now() - start) / 1000;
        if (deno.status !== 0) assert.fail(`${name} under Deno: ${deno.error}`);
        start = performance.now();
        // test:jupyter's or the runner's run of the same notebook and build (tslabReference.ts).
        const kept = loadTslabReference(file);
        const tslab = kept ? { status: 0, nb: kept, error: '' } : await nbconvert('tslab', file);
        t.diagnostic(`nbconvert: Deno ${denoSeconds.toFixed(1)} s, tslab ${kept ? 'an earlier run, reused' : `${((performance.now() - start) / 1000).toFixed(1)} s`}`);
        if (tslab.status !== 0) assert.fail(`${name} under tslab: ${tslab.error}`);
        assert.deepEqual(findLosses(tslab.nb!, deno.nb!), [], `${name}: cells that showed less under Deno than under tslab`);
        // Not a failure: what docs/deno.md's table of formatting differences is made of.
        for (const difference of formattingDifferences(tslab.nb!, deno.nb!)) t.diagnostic(difference);
        // describeEnvironment, wherever a notebook prints it, names Deno and its own version.
        for (const line of cellOutputs(deno.nb!).flatMap((c) => c.stdout).filter((l) => l.startsWith('runtime: '))) {
          assert.match(line, /^runtime: Deno \d+\.\d+\.\d+ \(Node compatibility [\d.]+\) on /);
        }
      }));
    }
  });
});
