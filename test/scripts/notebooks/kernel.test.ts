import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trackKernel, untrackKernel, type Kernel } from '../../../scripts/notebooks/kernel';

/** A kernel that only records being killed. */
function fakeKernel(): Kernel & { kills: number } {
  const k = {
    kills: 0,
    exited: false,
    ready: async () => 0,
    execute: () => {},
    onEvent: () => {},
    onExit: () => {},
    shutdown: async () => {},
    kill: () => void (k.kills += 1),
    log: () => '',
  };
  return k;
}

const counts = (): number[] => ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP'].map((e) => process.listenerCount(e));

describe('trackKernel', () => {
  it('guards exit and termination signals while a kernel is live, and gives them back after', () => {
    const before = counts();
    const exitListeners = process.listeners('exit');
    const a = fakeKernel();
    const b = fakeKernel();
    trackKernel(a);
    trackKernel(b);
    assert.deepEqual(counts(), before.map((n) => n + 1), 'one listener per event, however many kernels');
    // What the process runs as it exits (called directly: emitting 'exit' would run the test
    // runner's own listeners too): every live kernel is killed.
    const guard = process.listeners('exit').find((l) => !exitListeners.includes(l))!;
    guard(0);
    assert.deepEqual([a.kills, b.kills], [1, 1]);
    untrackKernel(a);
    assert.deepEqual(counts(), before.map((n) => n + 1), 'still guarded while b is live');
    untrackKernel(b);
    untrackKernel(b); // twice is harmless
    assert.deepEqual(counts(), before);
    const c = fakeKernel();
    trackKernel(c);
    guard(0);
    assert.deepEqual([a.kills, b.kills, c.kills], [1, 1, 1], 'only live kernels are killed');
    untrackKernel(c);
    assert.deepEqual(counts(), before);
  });
});
