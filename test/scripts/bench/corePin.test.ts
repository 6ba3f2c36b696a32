import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { allowedCores, CorePinError, coreSpeeds, onCore, parseCpuList, pinningLine, pinOneThreadSides, pinThread } from '../../../scripts/bench/corePin';

const cores = allowedCores(process.pid);
const twoCores = cores.length >= 2 ? false : 'this process may use one core only';
/** A core other than the lowest, so that pinning to it changes the mask. */
const last = cores[cores.length - 1];

test('a CPU list is read as the kernel writes it, and a bad one is refused by name', () => {
  assert.deepEqual(parseCpuList('0-1,3'), [0, 1, 3]);
  assert.deepEqual(parseCpuList('2\n'), [2]);
  assert.deepEqual(parseCpuList('4,0-2'), [0, 1, 2, 4]);
  assert.throws(() => parseCpuList('a-b'), (e: Error) => e instanceof CorePinError && /accepted are core numbers and ranges/.test(e.message));
  assert.throws(() => parseCpuList('3-1'), (e: Error) => e instanceof CorePinError && /must not run backwards/.test(e.message));
});

test('pinning to no core, a negative one or one the machine lacks is a named error', () => {
  assert.throws(() => pinThread(process.pid, []), (e: Error) => e instanceof CorePinError && /accepted are one or more core numbers/.test(e.message));
  assert.throws(() => pinThread(process.pid, [-1]), CorePinError);
  assert.throws(() => pinThread(process.pid, [4095]), (e: Error) => e instanceof CorePinError && /taskset could not pin/.test(e.message));
  assert.deepEqual(allowedCores(process.pid), cores, 'a refused pin leaves the mask as it was');
});

test('onCore runs on the core and gives the thread its cores back, also when the call throws', { skip: twoCores }, async () => {
  assert.deepEqual(await onCore(last, () => allowedCores(process.pid)), [last]);
  assert.deepEqual(allowedCores(process.pid), cores);
  await assert.rejects(
    onCore(last, () => {
      assert.deepEqual(allowedCores(process.pid), [last]);
      throw new Error('the timed call failed');
    }),
    /the timed call failed/,
  );
  assert.deepEqual(allowedCores(process.pid), cores, 'restored after a throw');
});

test('a worker started by a pinned thread inherits its core, which is why ours pins only around one-thread blocks', { skip: twoCores }, async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
    parentPort.postMessage(tid);
    setInterval(() => {}, 1000);`;
  const worker = await onCore(last, () => new Worker(code, { eval: true }));
  try {
    const [tid] = (await once(worker, 'message')) as [number];
    assert.notEqual(tid, process.pid);
    assert.deepEqual(allowedCores(process.pid, tid), [last]);
    assert.deepEqual(allowedCores(process.pid), cores);
  } finally {
    await worker.terminate();
  }
});

test('the peer is pinned to the lowest core and every core is probed; a peer that cannot be pinned leaves both unpinned', async () => {
  const child = spawn('sleep', ['30']);
  try {
    const pinning = await pinOneThreadSides(child.pid as number);
    assert.equal(pinning.core, cores[0]);
    assert.deepEqual(allowedCores(child.pid as number), [cores[0]]);
    assert.deepEqual(pinning.speeds?.cores, cores);
    assert.equal(pinning.speeds?.startMs.length, cores.length);
    assert.ok(pinning.speeds?.startMs.every((ms) => ms > 0));
    assert.match(pinningLine(pinning, true), new RegExp(`one-thread PyTorch peer took turns on core ${cores[0]}\\. Core speeds`));
  } finally {
    child.kill();
  }
  await once(child, 'exit');
  const failed = await pinOneThreadSides(child.pid as number);
  assert.equal(failed.core, null);
  assert.match(failed.reason ?? '', /^CorePinError: taskset could not pin thread/);
  assert.match(pinningLine(failed, true), /^One-thread blocks not pinned to a core: CorePinError/);
  assert.deepEqual(allowedCores(process.pid), cores);
});

test('without a peer the line says that ours alone ran on the core', async () => {
  const alone = await pinOneThreadSides(null);
  assert.equal(alone.core, cores[0]);
  assert.match(pinningLine(alone, false), new RegExp(`ours' main thread ran its one-thread blocks on core ${cores[0]}; no PyTorch peer ran`));
  assert.equal((await coreSpeeds([cores[0]], 1)).length, 1);
});
