import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLOTLY_MIME } from '../../src/tutorial/index';
import { NBCONVERT_TSLAB, notebooksOf } from '../helpers/frontEndSets';
import { isolatedJupyterEnv, nbconvertExecute } from '../helpers/jupyter';
import { inSlots, NOTEBOOK_SLOTS } from '../helpers/notebookSlots';
import { Slots } from '../../scripts/notebooks/slots';
import { saveTslabReference } from '../helpers/tslabReference';
import { CELL_HANG_SECONDS } from '../helpers/ceilings';

// Executes notebooks with Debian's real Jupyter: `jupyter nbconvert --execute --to notebook`
// under /usr/bin/python3, with the tslab kernelspec installed by the project's own script into a
// temporary prefix (nothing outside the temporary folder is touched). Needs `npm run build` and
// the Debian packages of scripts/systemDeps.sh. `npm run test:jupyter` runs it.
const ROOT = path.resolve(__dirname, '..', '..');
const NOTEBOOKS = path.resolve(process.env.NOTEBOOKS_DIR ?? path.join(ROOT, 'notebooks'));
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');
/** Seconds a cell may run under nbconvert: a ceiling for a hang (test/helpers/ceilings.ts). */
const CELL_TIMEOUT = CELL_HANG_SECONDS;

let tmp: string;
let env: NodeJS.ProcessEnv;

function installKernel(): { status: number | null; output: string; kernelJson: { argv: string[]; language: string } } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'installKernel.ts'), `--prefix=${path.join(tmp, 'prefix')}`], { cwd: ROOT, encoding: 'utf8' });
  const file = path.join(tmp, 'prefix', 'share', 'jupyter', 'kernels', 'tslab', 'kernel.json');
  return { status: r.status, output: r.stdout + r.stderr, kernelJson: fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined };
}

/** Runs nbconvert on one notebook; on failure, `error` is what the failing cell printed. */
function nbconvert(notebook: string): ReturnType<typeof nbconvertExecute> {
  // One folder per notebook and edition: runs side by side must not write one file.
  const outDir = path.join(tmp, 'out', path.basename(path.dirname(notebook)));
  return nbconvertExecute({ notebook, outDir, config: path.join(ROOT, 'scripts', 'notebooks', 'nbconvert_config.py'), cellTimeout: CELL_TIMEOUT, cwd: ROOT, env });
}

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'jupyter-e2e-'));
  // Only the kernelspec installed below, and no state in the user's Jupyter folders.
  env = isolatedJupyterEnv(tmp);
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the tslab kernelspec', () => {
  it('is installed by scripts/installKernel.ts, idempotently, and runs this repository’s tslab', () => {
    const first = installKernel();
    assert.equal(first.status, 0, first.output);
    const second = installKernel();
    assert.equal(second.status, 0, second.output);
    assert.deepEqual(second.kernelJson, first.kernelJson);
    assert.deepEqual(first.kernelJson.argv, [process.execPath, '--require', path.join(ROOT, 'scripts', 'jupyter', 'tslabBindGuard.cjs'), path.join(ROOT, 'node_modules', '.bin', 'tslab'), 'kernel', '--config-path', '{connection_file}']);
    assert.equal(first.kernelJson.language, 'typescript');
  });
});

describe('jupyter nbconvert --execute with the tslab kernel', () => {
  before(() => {
    // The kernelspec test above may be filtered out; installing again is harmless.
    assert.equal(installKernel().status, 0);
  });

  it('runs the passing fixture, and showFigure reaches Jupyter as one bundle of three MIME types', async () => {
    const r = await nbconvert(path.join(FIXTURES, 'passing.ipynb'));
    assert.equal(r.status, 0, r.error);
    const nb = JSON.parse(fs.readFileSync(r.outFile, 'utf8')) as { cells: { cell_type: string; outputs?: { output_type: string; data?: Record<string, unknown> }[] }[] };
    const displays = nb.cells.flatMap((c) => c.outputs ?? []).filter((o) => o.output_type === 'display_data');
    const chart = displays.find((o) => o.data && PLOTLY_MIME in o.data);
    assert.ok(chart, 'a Plotly output');
    assert.deepEqual(Object.keys(chart.data!).sort(), [PLOTLY_MIME, 'text/html', 'text/plain'].sort());
  });

  it('fails on a runtime error and reports the cell with its error text', async () => {
    const r = await nbconvert(path.join(FIXTURES, 'runtime-error.ipynb'));
    assert.notEqual(r.status, 0);
    assert.match(r.error, /^cell 3 \('\/\/ The runner must name this cell and print the full error\.'\) failed:\n/);
    assert.match(r.error, /RangeError: microBatchSize 16 is too large for this fixture/);
  });

  // The representative set of test/helpers/frontEndSets.ts: what nbconvert adds to the runner is
  // the kernelspec and the kernel over ZeroMQ, which these notebooks and the fixtures exercise.
  const notebooks = notebooksOf(NBCONVERT_TSLAB, process.env, NOTEBOOKS);
  if (notebooks.length === 0) {
    it('finds the notebooks to execute', () => {
      assert.fail(`no notebooks in ${path.relative(ROOT, NOTEBOOKS) || NOTEBOOKS}/ to execute`);
    });
  }
  // Two notebooks at a time, one that measures time alone (test/helpers/notebookSlots.ts).
  const slots = new Slots(NOTEBOOK_SLOTS);
  describe('the set of notebooks, two at a time', { concurrency: true }, () => {
    for (const name of notebooks) {
      const file = path.join(NOTEBOOKS, name);
      it(`executes ${path.relative(ROOT, NOTEBOOKS)}/${name}`, () =>
        inSlots(slots, file, async () => {
          const r = await nbconvert(file);
          if (r.status !== 0) assert.fail(`${name}: ${r.error}`);
          saveTslabReference(file, r.outFile);
        }));
    }
  });
});
