import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { allNotebooks, CLASSIC, denoNotebooks, HTTP_PAGES, LAB, LIGHTHOUSE, lighthousePages, missingImports, MissingNotebookError, MissingPageError, NBCONVERT_DENO, NBCONVERT_TSLAB, notebookImports, notebooksOf, pagesOf, ZH_DOCS_AXE } from './frontEndSets';

describe("the front ends' sets of notebooks", () => {
  const sets = { NBCONVERT_TSLAB, NBCONVERT_DENO, CLASSIC, LAB };

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

  it('under Deno: chapters that import every module any English chapter imports, and the Chinese display locale', () => {
    assert.deepEqual(denoNotebooks({}), NBCONVERT_DENO.map((c) => c.file));
    assert.deepEqual(missingImports(NBCONVERT_DENO), []);
    assert.ok(NBCONVERT_DENO.some((c) => c.file.startsWith('zh/')));
  });

  it('under Deno: a set that misses a module is named with a chapter that imports it (the negative case)', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deno-set-'));
    const notebook = (...code: string[]) => JSON.stringify({ cells: [{ cell_type: 'markdown', source: "from 'prose'" }, ...code.map((c) => ({ cell_type: 'code', source: c.split(/(?<=\n)/) }))] });
    try {
      fs.writeFileSync(path.join(root, '01-a.ipynb'), notebook("import { x } from 'tfjs-accumulate';\n", "const os = require('node:os');"));
      fs.writeFileSync(path.join(root, '02-b.ipynb'), notebook("import {\n  y,\n} from \"tfjs-accumulate/parallel\";\nconst m = await import('node:fs');"));
      assert.deepEqual(notebookImports(path.join(root, '02-b.ipynb')), ['node:fs', 'tfjs-accumulate/parallel']);
      assert.deepEqual(missingImports([{ file: '01-a.ipynb', why: 'the first' }], root), ['node:fs (imported by 02-b.ipynb)', 'tfjs-accumulate/parallel (imported by 02-b.ipynb)']);
      assert.deepEqual(missingImports([{ file: '01-a.ipynb', why: 'the first' }, { file: '02-b.ipynb', why: 'the second' }], root), []);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
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

  it('the http:// and Chinese axe-core pages: each named page, the whole list with E2E_ALL_NOTEBOOKS=1, and a missing one named (the negative case)', () => {
    const site = fs.mkdtempSync(path.join(os.tmpdir(), 'sets-site-'));
    try {
      fs.mkdirSync(path.join(site, 'zh', 'docs'), { recursive: true });
      for (const { file } of [...HTTP_PAGES, ...ZH_DOCS_AXE]) fs.writeFileSync(path.join(site, file), '');
      const every = ['index.html', '01-environment.html'];
      assert.deepEqual(pagesOf(HTTP_PAGES, site, 'http://', () => every, {}), HTTP_PAGES.map((c) => c.file));
      assert.deepEqual(pagesOf(ZH_DOCS_AXE, site, 'axe-core', () => every, {}), ['zh/docs/testing.html']);
      assert.deepEqual(pagesOf(HTTP_PAGES, site, 'http://', () => every, { E2E_ALL_NOTEBOOKS: '1' }), every);
      for (const set of [HTTP_PAGES, ZH_DOCS_AXE]) assert.ok(set.every((c) => c.why.length > 0) && new Set(set.map((c) => c.file)).size === set.length);
      fs.rmSync(path.join(site, 'zh', 'search.html'));
      assert.throws(() => pagesOf(HTTP_PAGES, site, 'http://', () => every, {}), (e: Error) => e instanceof MissingPageError && e.message.includes('zh/search.html for http://'));
    } finally {
      fs.rmSync(site, { recursive: true, force: true });
    }
  });

  it("Lighthouse's pages: each kind once, every page with E2E_ALL_NOTEBOOKS=1, and a missing one named (the negative case)", () => {
    const site = fs.mkdtempSync(path.join(os.tmpdir(), 'sets-site-'));
    try {
      fs.mkdirSync(path.join(site, 'zh'));
      for (const { file } of LIGHTHOUSE) fs.writeFileSync(path.join(site, file), '');
      fs.writeFileSync(path.join(site, '01-environment.html'), '');
      assert.deepEqual(lighthousePages(site, {}), LIGHTHOUSE.map((c) => c.file));
      assert.equal(new Set(LIGHTHOUSE.map((c) => c.file)).size, LIGHTHOUSE.length);
      assert.ok(LIGHTHOUSE.every((c) => c.why.length > 0));
      assert.ok(lighthousePages(site, { E2E_ALL_NOTEBOOKS: '1' }).includes('01-environment.html'));
      fs.rmSync(path.join(site, '06-batchnorm.html'));
      assert.throws(() => lighthousePages(site, {}), (e: Error) => e instanceof MissingPageError && e.message.includes('06-batchnorm.html'));
    } finally {
      fs.rmSync(site, { recursive: true, force: true });
    }
  });
});
