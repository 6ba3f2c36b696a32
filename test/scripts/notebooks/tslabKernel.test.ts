import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KernelEvent } from '../../../scripts/notebooks/kernel';
import { isAlive } from '../../../scripts/notebooks/processTree';
import { TslabKernel } from '../../../scripts/notebooks/tslabKernel';

// One real tslab kernel (tslabChild.ts in a child process), driven without the runner.
let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tslabKernel-test-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs one cell and returns every event up to and including `done`. */
function run(kernel: TslabKernel, code: string, cell: number): Promise<KernelEvent[]> {
  return new Promise((resolve) => {
    const events: KernelEvent[] = [];
    kernel.onEvent((e) => {
      events.push(e);
      if (e.type === 'done') resolve(events);
    });
    kernel.execute(code, cell);
  });
}

describe('TslabKernel', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  it('runs cells in the notebook folder, reports their output, and on shutdown leaves nothing they started', async () => {
    const kernel = new TslabKernel(dir);
    assert.ok((await kernel.ready(120_000)) > 0);
    const printed = await run(kernel, 'console.log(process.cwd());', 2);
    assert.deepEqual(printed[0], { type: 'stream', name: 'stdout', text: `${fs.realpathSync(dir)}\n` });
    assert.deepEqual(
      printed.slice(1).map((e) => [e.type, e.type === 'done' && e.status, e.type === 'done' && e.executionCount]),
      [['done', 'ok', 1]],
    );
    const spawned = await run(kernel, "import { spawn } from 'child_process';\nspawn('sleep', ['600'], { stdio: 'ignore' }).pid", 3);
    const sleeper = Number((spawned.find((e) => e.type === 'stream') as { text: string }).text);
    assert.ok(isAlive(sleeper));
    const rejected = await run(kernel, "Promise.reject(new Error('dropped')).then(() => {});", 4);
    const unhandled = rejected.find((e) => e.type === 'unhandled');
    assert.ok(unhandled && unhandled.type === 'unhandled');
    assert.deepEqual([unhandled.origin, unhandled.cell, unhandled.running], ['unhandledRejection', 4, true]);
    assert.match(unhandled.text, /^Error: dropped\n/);
    const pid = kernel.pid!;
    await kernel.shutdown(2000);
    assert.equal(kernel.exited, true);
    for (const t0 = Date.now(); (isAlive(pid) || isAlive(sleeper)) && Date.now() - t0 < 120_000; ) await sleep(50);
    assert.equal(isAlive(pid), false);
    assert.equal(isAlive(sleeper), false, 'a process started by a cell is stopped with its kernel');
  });

  it('kill() stops a kernel stuck in a synchronous loop, and says how it exited', async () => {
    const kernel = new TslabKernel(dir);
    await kernel.ready(120_000);
    const exit = new Promise<string>((resolve) => kernel.onExit(resolve));
    kernel.execute('while (true) {}', 2);
    await sleep(300);
    kernel.kill();
    assert.equal(await exit, 'the kernel process exited (SIGKILL)');
    assert.equal(kernel.exited, true);
  });

  it('shuts down a kernel whose channel fails to write (EPIPE), without an unhandled error', async () => {
    const kernel = new TslabKernel(dir);
    await kernel.ready(120_000);
    // A child that died can look connected until Node sees its exit; a write then fails with
    // EPIPE (it crashed the runner once, on a loaded machine, from shutdown's send). Node reports
    // such a failure to send's callback, or with no callback as an 'error' event on the child:
    // this channel fails every write that way.
    const child = (kernel as unknown as { child: ChildProcess }).child;
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    child.send = ((_msg: unknown, callback?: (e: Error | null) => void) => {
      process.nextTick(() => (callback ? callback(epipe) : child.emit('error', epipe)));
      return false;
    }) as ChildProcess['send'];
    const errors: Error[] = [];
    const catchError = (e: Error): void => void errors.push(e);
    process.on('uncaughtException', catchError);
    try {
      await kernel.shutdown(500);
      await sleep(100);
    } finally {
      process.off('uncaughtException', catchError);
    }
    assert.deepEqual(errors.map((e) => e.message), []);
    assert.equal(kernel.exited, true, 'killed after its grace, as a kernel that does not answer');
    assert.match(kernel.log(), /not sent to the kernel: write EPIPE/);
  });
});
