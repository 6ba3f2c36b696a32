import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { findNotebooks, readNotebook } from '../../scripts/deno/notebooks';
import { denoBinary, installKernel, kernelJson, kernelspecProblem, NOTEBOOK_KERNELSPEC } from '../../scripts/installKernel';

const ROOT = path.resolve(__dirname, '..', '..');

describe('kernelJson', () => {
  it("runs this clone's deno for --deno, and declares the notebooks' language for both kernels", () => {
    const deno = kernelJson('deno') as { argv: string[]; language: string; display_name: string; env: Record<string, string> };
    assert.deepEqual(deno.argv, ['/usr/bin/python3', path.join(ROOT, 'scripts', 'deno', 'kernel_proxy.py'), denoBinary(), '{connection_file}']);
    assert.ok(deno.argv[2].startsWith(path.join(ROOT, 'node_modules') + path.sep));
    assert.equal((kernelJson('deno', '/opt/py/bin/python3') as { argv: string[] }).argv[0], '/opt/py/bin/python3');
    assert.equal(deno.display_name, 'Deno');
    assert.equal(deno.env.DENO_NO_UPDATE_CHECK, '1');
    for (const kernel of ['tslab', 'deno'] as const) assert.equal(kernelJson(kernel).language, NOTEBOOK_KERNELSPEC.language, kernel);
  });

  it('refuses an unknown kernel before touching anything', () => {
    assert.throws(() => installKernel({ kernel: 'python' as never }), /installKernel: kernel must be "tslab" or "deno"/);
  });
});

describe('the kernelspec the notebooks name', () => {
  it('is tslab / TypeScript / typescript in every notebook on disk', () => {
    const notebooks = findNotebooks();
    assert.ok(notebooks.length > 0);
    for (const file of notebooks) assert.equal(kernelspecProblem(readNotebook(file).metadata), null, path.relative(ROOT, file));
  });

  it('is refused when the name or the language differs, or is missing', () => {
    assert.equal(kernelspecProblem({ kernelspec: { ...NOTEBOOK_KERNELSPEC } }), null);
    assert.equal(kernelspecProblem({ kernelspec: { ...NOTEBOOK_KERNELSPEC, name: 'deno' } }), 'kernelspec.name is "deno", expected "tslab"');
    assert.match(kernelspecProblem({ kernelspec: { ...NOTEBOOK_KERNELSPEC, language: 'javascript' } })!, /kernelspec\.language is "javascript"/);
    assert.equal(kernelspecProblem({}), 'no metadata.kernelspec');
  });
});
