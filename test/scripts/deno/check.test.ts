import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { denoBinary } from '../../../scripts/installKernel';
import { checkNotebooks, concatenateCells, mapLocations } from '../../../scripts/deno/check';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');

function notebook(dir: string, name: string, cells: string[]): string {
  const file = path.join(dir, name);
  const nb = {
    cells: [{ cell_type: 'markdown', metadata: {}, source: '# Title' }, ...cells.map((source) => ({ cell_type: 'code', metadata: {}, outputs: [], execution_count: null, source }))],
    metadata: {},
    nbformat: 4,
    nbformat_minor: 5,
  };
  fs.writeFileSync(file, JSON.stringify(nb));
  return file;
}

describe('concatenateCells', () => {
  it('keeps every line of every cell and records where it came from', () => {
    const { source, origins } = concatenateCells([
      { cell: 2, code: 'const a = 1;\nconst b = a;' },
      { cell: 4, code: 'console.log(b);' },
    ]);
    const lines = source.split('\n');
    assert.equal(lines[origins.findIndex((o) => o?.cell === 2 && o.line === 2)], 'const b = a;');
    assert.equal(lines[origins.findIndex((o) => o?.cell === 4 && o.line === 1)], 'console.log(b);');
    assert.equal(origins[0], null, 'the marker line before a cell maps nowhere');
  });
});

describe('mapLocations', () => {
  it('rewrites locations in the concatenated file to notebook, cell and line, and leaves others alone', () => {
    const file = '/repo/build/deno-check/notebooks/02-model.ts';
    const origins = [null, { cell: 3, line: 1 }, null, { cell: 5, line: 1 }, { cell: 5, line: 2 }];
    const out = mapLocations(`at file://${file}:5:9\nat file:///elsewhere.ts:5:9\nat file://${file}:1:1`, file, 'notebooks/02-model.ipynb', origins);
    assert.equal(out, `at notebooks/02-model.ipynb, cell 5, line 2:9\nat file:///elsewhere.ts:5:9\nat file://${file}:1:1`);
  });
});

describe('deno check on notebooks', () => {
  const deno = denoBinary();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'deno-check-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('finds the deno binary that npm installed', () => {
    assert.ok(deno && fs.existsSync(deno), 'node_modules holds a deno binary');
  });

  it('passes a notebook that type-checks and names the notebook, cell and line of a type error', () => {
    const r = checkNotebooks([path.join(FIXTURES, 'passing.ipynb'), path.join(FIXTURES, 'type-error.ipynb')], deno!);
    assert.equal(r.ok, false);
    assert.deepEqual(r.failing, ['test/fixtures/notebooks/type-error.ipynb']);
    assert.match(r.report, /TS2322 \[ERROR\]: Type 'string' is not assignable to type 'number'/);
    assert.match(r.report, /at test\/fixtures\/notebooks\/type-error\.ipynb, cell 2, line 1:7/);
  });

  it("checks calls into the library against dist/'s types (needs npm run build)", () => {
    const file = notebook(tmp, 'library-misuse.ipynb', [
      "import * as tf from '@tensorflow/tfjs';\nimport { GradientAccumulator } from 'tfjs-accumulate';",
      "const accumulator = new GradientAccumulator({\n  optimizer: tf.train.sgd(0.1),\n  accumulationSteps: 'four',\n});",
    ]);
    const r = checkNotebooks([file], deno!);
    assert.equal(r.ok, false, r.report);
    assert.match(r.report, /library-misuse\.ipynb, cell 3, line 3:\d+/);
  });

  it('passes the same calls when they are typed right', () => {
    const file = notebook(tmp, 'library-use.ipynb', [
      "import * as tf from '@tensorflow/tfjs';\nimport { GradientAccumulator } from 'tfjs-accumulate';",
      'const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });\naccumulator.dispose();',
    ]);
    const r = checkNotebooks([file], deno!);
    assert.equal(r.ok, true, r.report);
  });
});
