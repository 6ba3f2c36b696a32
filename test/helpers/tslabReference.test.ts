import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import * as os from 'node:os';
import { loadTslabReference, REFERENCE_DIR, runnerReference, saveTslabReference } from './tslabReference';

// A notebook inside the repository (build/), as test:jupyter's are, and its "executed" copy.
const DIR = path.join(path.resolve(__dirname, '..', '..'), 'build', 'tslab-reference-test');
const NOTEBOOK = path.join(DIR, 'n.ipynb');
const EXECUTED = path.join(DIR, 'executed.ipynb');
const nb = (text: string) => JSON.stringify({ cells: [{ cell_type: 'code', source: text, outputs: [], metadata: {} }], metadata: {}, nbformat: 4, nbformat_minor: 5 });

after(() => {
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.rmSync(path.join(REFERENCE_DIR, 'build', 'tslab-reference-test'), { recursive: true, force: true });
});

describe("test:jupyter's kept tslab runs", () => {
  it('are reused for the same notebook and build, and not once the notebook changed', () => {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(NOTEBOOK, nb('1'));
    assert.equal(loadTslabReference(NOTEBOOK), undefined, 'nothing kept yet');
    fs.writeFileSync(EXECUTED, nb('executed'));
    saveTslabReference(NOTEBOOK, EXECUTED);
    assert.equal(loadTslabReference(NOTEBOOK)?.cells[0].source, 'executed');
    fs.writeFileSync(NOTEBOOK, nb('2'));
    assert.equal(loadTslabReference(NOTEBOOK), undefined, 'an edited notebook is run again');
  });
});

describe("the runner's executed copies as tslab runs", () => {
  it('stand in for a notebook whose code they ran to the end after the current build, and for no other', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-reference-'));
    try {
      const [notebooks, runner] = [path.join(dir, 'notebooks'), path.join(dir, 'build')];
      fs.mkdirSync(path.join(notebooks, 'zh'), { recursive: true });
      fs.mkdirSync(path.join(runner, 'zh'), { recursive: true });
      const source = path.join(notebooks, 'zh', 'n.ipynb');
      fs.writeFileSync(source, nb('1'));
      const executed = (text: string, status: string) => JSON.stringify({ ...JSON.parse(nb(text)), metadata: { 'tfjs-accumulate': { runner: { status } } } });
      assert.equal(runnerReference(source, runner, notebooks), undefined, 'no copy yet');
      fs.writeFileSync(path.join(runner, 'zh', 'n.ipynb'), executed('1', 'ok'));
      assert.equal(runnerReference(source, runner, notebooks)?.cells[0].source, '1');
      fs.writeFileSync(path.join(runner, 'zh', 'n.ipynb'), executed('1', 'failed'));
      assert.equal(runnerReference(source, runner, notebooks), undefined, 'a run that stopped early');
      fs.writeFileSync(path.join(runner, 'zh', 'n.ipynb'), executed('2', 'ok'));
      assert.equal(runnerReference(source, runner, notebooks), undefined, 'a run of other code');
      fs.utimesSync(path.join(runner, 'zh', 'n.ipynb'), new Date(0), new Date(0));
      fs.writeFileSync(path.join(runner, 'zh', 'n.ipynb'), executed('1', 'ok'));
      fs.utimesSync(path.join(runner, 'zh', 'n.ipynb'), new Date(0), new Date(0));
      assert.equal(runnerReference(source, runner, notebooks), undefined, 'a run from before the build');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
