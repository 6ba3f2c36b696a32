import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cellSource, firstLine, loadNotebook, normalizeBundle, pushStream, uncleanReason, type Notebook, type Output } from '../../../scripts/notebooks/nbformat';

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nbformat-test-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a notebook file (tslab kernel, one code cell unless overridden) and returns its path. */
function write(name: string, overrides: Record<string, unknown> = {}): string {
  const file = path.join(tmp, name);
  const nb = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'tslab', display_name: 'TypeScript', language: 'typescript' } },
    cells: [{ cell_type: 'code', metadata: {}, source: ['const a = 1;\n', 'a'], outputs: [], execution_count: null }],
    ...overrides,
  };
  fs.writeFileSync(file, JSON.stringify(nb));
  return file;
}

describe('cellSource and firstLine', () => {
  it('join a source given as lines and name a cell by its first non-blank line', () => {
    assert.equal(cellSource({ source: ['a\n', 'b'] }), 'a\nb');
    assert.equal(cellSource({ source: 'a\nb' }), 'a\nb');
    assert.equal(firstLine('\n  \nconst x = 1;\nx'), 'const x = 1;');
    assert.equal(firstLine('x'.repeat(100)), `${'x'.repeat(77)}...`);
  });
});

describe('loadNotebook', () => {
  it('reads a valid nbformat 4 notebook of the tslab kernel', () => {
    const nb = loadNotebook(write('good.ipynb'));
    assert.equal(nb.cells.length, 1);
  });

  it('says what is wrong and what is accepted for each unusable file', () => {
    assert.throws(() => loadNotebook(path.join(tmp, 'missing.ipynb')), /^Error: file not found: /);
    fs.writeFileSync(path.join(tmp, 'bad.ipynb'), '{ "cells": [');
    assert.throws(() => loadNotebook(path.join(tmp, 'bad.ipynb')), /^Error: invalid JSON: /);
    fs.writeFileSync(path.join(tmp, 'array.ipynb'), '[]');
    assert.throws(() => loadNotebook(path.join(tmp, 'array.ipynb')), /not a notebook: the JSON is not an object/);
    assert.throws(() => loadNotebook(write('old.ipynb', { nbformat: 3, nbformat_minor: 0 })), /unsupported nbformat 3\.0; nbformat must be 4/);
    assert.throws(() => loadNotebook(write('nocells.ipynb', { cells: {} })), /"cells" must be an array/);
    assert.throws(
      () => loadNotebook(write('python.ipynb', { metadata: { kernelspec: { name: 'python3', language: 'python' } } })),
      /wrong kernel: metadata\.kernelspec\.name must be "tslab" \(the TypeScript kernel\); got "python3" \(language python\)/,
    );
    assert.throws(() => loadNotebook(write('nokernel.ipynb', { metadata: {} })), /got missing/);
    assert.throws(() => loadNotebook(write('cell.ipynb', { cells: [{ cell_type: 'code', source: 3 }] })), /cell 1 is malformed/);
  });

  it('checks the kernelspec it is asked for', () => {
    assert.throws(() => loadNotebook(write('tslab.ipynb'), 'deno'), /must be "deno"/);
  });
});

describe('uncleanReason', () => {
  it('names the first code cell committed with outputs or an execution count', () => {
    const clean = loadNotebook(write('clean.ipynb'));
    assert.equal(uncleanReason(clean), undefined);
    const dirty: Notebook = JSON.parse(JSON.stringify(clean));
    dirty.cells.push({ cell_type: 'code', metadata: {}, source: '1', outputs: [], execution_count: 3 });
    assert.match(uncleanReason(dirty)!, /^cell 2 has outputs or an execution count/);
  });
});

describe('normalizeBundle and pushStream', () => {
  it('parses JSON MIME types sent as strings and keeps everything else as it came', () => {
    const bundle = normalizeBundle({ 'application/vnd.plotly.v1+json': '{"data":[]}', 'application/json': 'not json', 'text/plain': '{"a":1}' });
    assert.deepEqual(bundle, { 'application/vnd.plotly.v1+json': { data: [] }, 'application/json': 'not json', 'text/plain': '{"a":1}' });
  });

  it('merges consecutive chunks of one stream and starts a new output for the other', () => {
    const outputs: Output[] = [];
    pushStream(outputs, 'stdout', 'a');
    pushStream(outputs, 'stdout', 'b\n');
    pushStream(outputs, 'stderr', 'c');
    assert.deepEqual(outputs, [
      { output_type: 'stream', name: 'stdout', text: 'ab\n' },
      { output_type: 'stream', name: 'stderr', text: 'c' },
    ]);
  });
});
