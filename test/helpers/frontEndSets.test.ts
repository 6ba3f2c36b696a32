import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { allNotebooks, CLASSIC, denoNotebooks, LAB, MissingNotebookError, NBCONVERT_DENO_ZH, NBCONVERT_TSLAB, notebooksOf } from './frontEndSets';

describe("the front ends' sets of notebooks", () => {
  const sets = { NBCONVERT_TSLAB, NBCONVERT_DENO_ZH, CLASSIC, LAB };

  it('name notebooks that exist, each once, each with a reason', () => {
    for (const [name, set] of Object.entries(sets)) {
      assert.deepEqual(notebooksOf(set, {}), set.map((c) => c.file), name);
      assert.equal(new Set(set.map((c) => c.file)).size, set.length, `${name}: a notebook twice`);
      assert.ok(set.every((c) => c.why.length > 10), `${name}: a choice without a reason`);
    }
  });

  it('cover both editions, figures and tables in each browser front end', () => {
    for (const set of [CLASSIC, LAB]) {
      const files = set.map((c) => c.file);
      assert.ok(files.some((f) => f.startsWith('zh/')) && files.some((f) => !f.startsWith('zh/')));
      const code = files.map((f) => fs.readFileSync(path.join(__dirname, '..', '..', 'notebooks', f), 'utf8')).join('');
      assert.match(code, /showFigure\(/);
      assert.match(code, /showTable\(/);
    }
  });

  it('under Deno: every English chapter, and the Chinese ones of the set', () => {
    const deno = denoNotebooks({});
    assert.deepEqual(deno.filter((f) => !f.startsWith('zh/')), allNotebooks(['']));
    assert.deepEqual(deno.filter((f) => f.startsWith('zh/')), NBCONVERT_DENO_ZH.map((c) => c.file));
  });

  it('become every notebook of both editions with E2E_ALL_NOTEBOOKS=1', () => {
    assert.deepEqual(notebooksOf(LAB, { E2E_ALL_NOTEBOOKS: '1' }), allNotebooks());
    assert.deepEqual(denoNotebooks({ E2E_ALL_NOTEBOOKS: '1' }), allNotebooks());
  });

  it('refuse a notebook that is not there, naming it (the negative case)', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'front-end-sets-'));
    try {
      fs.writeFileSync(path.join(root, '01-a.ipynb'), '{}');
      assert.deepEqual(notebooksOf([{ file: '01-a.ipynb', why: 'it is there' }], {}, root), ['01-a.ipynb']);
      assert.throws(() => notebooksOf([{ file: '09-language-model.ipynb', why: 'not written yet' }], {}, root), (e: Error) => e instanceof MissingNotebookError && e.message.includes('09-language-model.ipynb'));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
