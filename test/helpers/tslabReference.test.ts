import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadTslabReference, REFERENCE_DIR, saveTslabReference } from './tslabReference';

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
