import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Notebook } from '../../../scripts/notebooks/nbformat';
import { isAlive } from '../../../scripts/notebooks/processTree';

// The runner's command line, run as `npm run notebooks -- ARGS` runs it, on the fixture notebooks
// (real tslab kernels, one process per notebook).
const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'scripts', 'notebooks', 'cli.ts');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'notebooks');
const fixture = (name: string): string => path.join(FIXTURES, `${name}.ipynb`);

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-test-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 900_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function read(file: string): Notebook {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
}

/** A minimal notebook that needs nothing from this repository, for folders outside it. */
function tinyNotebook(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'tslab', display_name: 'TypeScript', language: 'typescript' } },
    cells: [{ cell_type: 'code', metadata: {}, source: 'console.log(6 * 7);', outputs: [], execution_count: null }],
    ...overrides,
  });
}

describe('the runner command on failing notebooks', () => {
  it('names the notebook, the cell, its first line and the full runtime error, and stops there', () => {
    const out = path.join(tmp, 'runtime');
    const r = cli(`--out=${out}`, fixture('runtime-error'));
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /test\/fixtures\/notebooks\/runtime-error\.ipynb, cell 3 \("\/\/ The runner must name this cell and print the full error\."\) failed:\n/,
    );
    assert.match(r.stderr, /RangeError: microBatchSize 16 is too large for this fixture\n\s+at evalmachine/);
    assert.doesNotMatch(r.stderr, /tslab[\\/]dist/, 'the harness’s own stack frames are dropped');
    const code = read(path.join(out, 'runtime-error.ipynb')).cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[0].outputs, [{ output_type: 'stream', name: 'stdout', text: 'first cell ran\n' }]);
    const error = code[1].outputs![0] as { output_type: string; ename: string; evalue: string };
    assert.deepEqual([error.output_type, error.ename, error.evalue], ['error', 'RangeError', 'microBatchSize 16 is too large for this fixture']);
    assert.equal(code[2].execution_count, null, 'cells after the failure do not run');
    assert.deepEqual(code[2].outputs, []);
    assert.match(r.stdout, /runtime-error\.ipynb\s+2\/3 .* FAILED at cell 3/);
  });

  it('fails a notebook whose cell drops a promise that rejects, naming the cell and the error', () => {
    // Before: the cell printed "UnhandledPromiseRejection" to its stderr, and the run passed.
    const out = path.join(tmp, 'rejection');
    const r = cli(`--out=${out}`, fixture('unhandled-rejection'));
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /unhandled-rejection\.ipynb, cell 3 \("\/\/ The runner must fail the notebook here: .*"\) failed with an error nothing handled:\n\s+RangeError: the claim checked in a promise nobody awaited is false\n/,
    );
    assert.match(r.stderr, /while this cell was running: a promise rejected and nothing handled it/);
    assert.match(r.stdout, /unhandled-rejection\.ipynb\s+2\/3 .* FAILED at cell 3/);
    const code = read(path.join(out, 'unhandled-rejection.ipynb')).cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[1].outputs![0], { output_type: 'stream', name: 'stdout', text: 'the cell itself returns normally\n' });
    assert.equal((code[1].outputs![1] as { ename: string }).ename, 'RangeError');
    assert.equal(code[2].execution_count, null);
  });

  it('reports a type error with its position in the cell', () => {
    const r = cli(`--out=${path.join(tmp, 'type')}`, fixture('type-error'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /type-error\.ipynb, cell 2 \("const learningRate: number = 'fast';"\) failed:\n\s+1:7 - Type 'string' is not assignable to type 'number'\./);
  });

  it('kills a cell that runs past the per-cell timeout and keeps the outputs before it', () => {
    const out = path.join(tmp, 'timeout');
    const r = cli('--timeout=3', `--out=${out}`, fixture('timeout'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /timeout\.ipynb, cell 3 \("while \(true\) \{"\) timed out:\n\s+the cell did not finish within 3 s/);
    const code = read(path.join(out, 'timeout.ipynb')).cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(code[0].outputs, [{ output_type: 'stream', name: 'stdout', text: 'before the loop\n' }]);
    assert.equal((code[1].outputs![0] as { ename: string }).ename, 'CellTimeoutError');
  });
});

/** A notebook of `sources`, one code cell each. */
function notebookOf(...sources: string[]): string {
  const cells = sources.map((source) => ({ cell_type: 'code', metadata: {}, source, outputs: [], execution_count: null }));
  return tinyNotebook({ cells });
}

// Two notebooks that can only finish side by side: each marks its start, then waits for the other's.
const meeting = (me: string, other: string): string =>
  notebookOf(
    `import * as fs from 'fs';\nfs.writeFileSync('${me}.start', '');`,
    `while (!fs.existsSync('${other}.start')) await new Promise((r) => setTimeout(r, 20));\nconsole.log('${me} met ${other}');`,
  );

describe('the runner command with --jobs', () => {
  it('runs notebooks side by side, prints each one\'s lines together, keeps the reports in file order, and runs a timing notebook alone', () => {
    const dir = path.join(tmp, 'jobs');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a.ipynb'), meeting('a', 'b'));
    fs.writeFileSync(path.join(dir, 'b.ipynb'), meeting('b', 'a'));
    fs.writeFileSync(path.join(dir, 'c-timing.ipynb'), notebookOf('const t0 = performance.now();\nconsole.log(typeof t0);'));
    const r = cli('--jobs=2', `--out=${path.join(tmp, 'jobs-out')}`, dir);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(read(path.join(tmp, 'jobs-out', 'a.ipynb')).cells[1].outputs, [{ output_type: 'stream', name: 'stdout', text: 'a met b\n' }]);
    // Each header is followed by its own notebook's lines only, up to the next header.
    const blocks = r.stdout.split(/^(?=\[\d\/3\] )/m).slice(1);
    assert.equal(blocks.length, 3, r.stdout);
    for (const block of blocks) {
      const name = /^\[\d\/3\] .*\/([\w-]+)\.ipynb/.exec(block)![1];
      assert.equal(/ran alone: it measures time/.test(block), name === 'c-timing', block);
      // a's second cell waits for b.start, b's for a.start: a block holds its own line, not the other's.
      const own = block.split('\nnotebook ')[0];
      if (name === 'a') assert.ok(own.includes("existsSync('b.start')") && !own.includes("existsSync('a.start')"), own);
      if (name === 'b') assert.ok(own.includes("existsSync('a.start')") && !own.includes("existsSync('b.start')"), own);
    }
    assert.deepEqual([...r.stdout.matchAll(/^(\S+)\.ipynb\s+\d+\/\d+ /gm)].map((m) => m[1]), ['a', 'b', 'c-timing']);
  });

  it('is what lets them meet: one at a time, the first waits for a notebook that cannot start (the negative case)', () => {
    const dir = path.join(tmp, 'one-job');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a.ipynb'), meeting('a', 'b'));
    fs.writeFileSync(path.join(dir, 'b.ipynb'), meeting('b', 'a'));
    const r = cli('--timeout=15', `--out=${path.join(tmp, 'one-job-out')}`, path.join(dir, 'a.ipynb'), path.join(dir, 'b.ipynb'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /a\.ipynb, cell 2 .* timed out/);
  });

  it('refuses a count that is not a whole number from 1 to 16, naming what is accepted', () => {
    for (const bad of ['0', '2.5', 'two', '17', '']) {
      const r = cli(`--jobs=${bad}`);
      assert.equal(r.status, 2);
      assert.match(r.stderr, new RegExp(`runNotebooks: --jobs must be a whole number from 1 to 16; got "${bad.replace('.', '\\.')}"\\.`));
    }
  });
});

describe('the runner command on bad input', () => {
  it('explains each unusable notebook and still runs and reports the others', () => {
    const dir = path.join(tmp, 'bad');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a-good.ipynb'), tinyNotebook());
    fs.writeFileSync(path.join(dir, 'b-invalid.ipynb'), '{ "cells": [ ');
    fs.writeFileSync(path.join(dir, 'c-python.ipynb'), tinyNotebook({ metadata: { kernelspec: { name: 'python3', language: 'python' } } }));
    fs.writeFileSync(path.join(dir, 'd-old.ipynb'), tinyNotebook({ nbformat: 3, nbformat_minor: 0 }));
    const r = cli(`--out=${path.join(tmp, 'bad-out')}`, dir, path.join(dir, 'e-missing.ipynb'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /b-invalid\.ipynb cannot be run:\n\s+invalid JSON: /);
    assert.match(r.stderr, /c-python\.ipynb cannot be run:\n\s+wrong kernel: metadata\.kernelspec\.name must be "tslab" \(the TypeScript kernel\); got "python3" \(language python\)/);
    assert.match(r.stderr, /d-old\.ipynb cannot be run:\n\s+unsupported nbformat 3\.0; nbformat must be 4/);
    assert.match(r.stderr, /e-missing\.ipynb cannot be run:\n\s+file not found: /);
    assert.match(r.stdout, /a-good\.ipynb\s+1\/1 .* ok\n/);
    assert.match(r.stdout, /total .* 1\/5 ok/);
    const good = read(path.join(tmp, 'bad-out', 'a-good.ipynb'));
    assert.deepEqual(good.cells[0].outputs, [{ output_type: 'stream', name: 'stdout', text: '42\n' }]);
  });

  it('says so when there is no notebook to run', () => {
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    const r = cli(empty);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /No notebooks to run: .*empty\/ holds no \.ipynb files\./);
  });

  it('with --check-clean, refuses a source notebook committed with outputs', () => {
    const dir = path.join(tmp, 'dirty');
    fs.mkdirSync(dir);
    const cells = [{ cell_type: 'code', metadata: {}, source: '1', outputs: [], execution_count: 3 }];
    fs.writeFileSync(path.join(dir, 'dirty.ipynb'), tinyNotebook({ cells }));
    const r = cli('--check-clean', `--out=${path.join(tmp, 'dirty-out')}`, dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not clean: cell 1 has outputs or an execution count/);
  });

  it('rejects a bad option or timeout, naming what is accepted, with status 2', () => {
    const accepted = 'a positive number of seconds up to 2147483.647 (2^31 - 1 ms), or none for no limit';
    for (const [arg, got] of [['--timeout=soon', '"soon"'], ['--timeout=3000000', '"3000000"'], ['--timeout=0', '"0"']]) {
      const r = cli(arg);
      assert.equal(r.status, 2, arg);
      assert.equal(r.stderr.trim(), `runNotebooks: --timeout must be ${accepted}; got ${got}.`);
    }
    const r = cli('--timout=3');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^runNotebooks: unknown option --timout=3; accepted: --timeout=SECONDS\|none, --out=DIR, --check-clean, --max-cell-output=SIZE\|none, --max-notebook-output=SIZE\|none, --jobs=N, --help/);
  });

  it('prints its help, which says how large a timeout may be and how to ask for none', () => {
    const r = cli('--help');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^Usage: npm run notebooks -- \[OPTIONS\]/m);
    assert.match(r.stdout, /A positive number up to 2147483\.647\s+\(2\^31 - 1 ms/);
    assert.match(r.stdout, /refused, not read as no limit\. --timeout=none sets no limit\./);
  });
});

describe('stopping the runner', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`with ${signal} while a cell spins leaves neither the kernel nor what the notebook started alive`, async () => {
      const pidFile = path.join(tmp, `pids-${signal}.json`);
      const runner = spawn(process.execPath, ['--import', 'tsx', CLI, `--out=${path.join(tmp, `spin-${signal}`)}`, fixture('spinning')], {
        cwd: ROOT,
        env: { ...process.env, RUNNER_TEST_PID_FILE: pidFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      runner.stdout.on('data', (b) => (stdout += b));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => runner.on('exit', (code, sig) => resolve({ code, signal: sig })));
      // The first cell writes the pids and the runner logs it done; then the loop cell is running.
      for (const t0 = Date.now(); !/\[1\/2\] cell 2 /.test(stdout); await sleep(100)) {
        assert.ok(Date.now() - t0 < 120_000, `the spinning cell never started:\n${stdout}`);
      }
      const pids = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as { kernel: number; sleeper: number };
      await sleep(500);
      assert.ok(isAlive(pids.kernel) && isAlive(pids.sleeper), 'both run before the signal');
      runner.kill(signal);
      const end = await exited;
      assert.equal(end.code, signal === 'SIGTERM' ? 143 : 130, `exit ${JSON.stringify(end)}`);
      for (const t0 = Date.now(); (isAlive(pids.kernel) || isAlive(pids.sleeper)) && Date.now() - t0 < 120_000; ) await sleep(50);
      assert.equal(isAlive(pids.kernel), false, `the kernel ${pids.kernel} outlived the runner`);
      assert.equal(isAlive(pids.sleeper), false, `the process ${pids.sleeper} the notebook started outlived the runner`);
    });
  }
});
