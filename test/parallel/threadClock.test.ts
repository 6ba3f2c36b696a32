import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { clockSince, threadClock } from '../../src/parallel/threadClock';

/**
 * This thread's user+system time in clock ticks (USER_HZ, 100 per second on Linux) from
 * `/proc/thread-self/stat`: a second, coarser source for the same thread's CPU time. The process's
 * own clock (`process.cpuUsage`) is no reference: it adds GC and worker threads, and a CI run on a
 * loaded machine saw this thread run 18 of the process's 43 ms.
 */
function threadTicks(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from the pid; the slice starts at field 3.
  return Number(fields[11]) + Number(fields[12]);
}

describe('threadClock', () => {
  it('counts this thread\'s CPU time for a busy loop and not for a sleep', async () => {
    const start = threadClock();
    assert.ok(start !== null, 'Linux exposes /proc/thread-self/schedstat');
    // Busy until the kernel's tick count for this thread has moved 5 ticks (about 50 ms), however
    // long that takes on a loaded machine. Ticks are rounded, so each end can be off by one.
    const ticks0 = threadTicks();
    while (threadTicks() - ticks0 < 5);
    const busy = clockSince(start);
    const tickMs = (threadTicks() - ticks0) * 10;
    assert.ok(busy.cpuMs >= tickMs - 20 && busy.cpuMs <= tickMs + 20,
      `${JSON.stringify(busy)} against ${tickMs} ms in this thread's tick count`);
    // The least of three sleeps: a GC step or the test runner's reporting can land in one of them
    // (a CI run saw 30+ ms once), but a clock that counted wall time would show about 60 ms in each.
    const sleeps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const idle = threadClock();
      await new Promise((r) => setTimeout(r, 60));
      sleeps.push(clockSince(idle).cpuMs);
    }
    assert.ok(Math.min(...sleeps) < 30, `sleeping costs no CPU time: ${JSON.stringify(sleeps)} ms`);
    assert.deepEqual(clockSince(null), { cpuMs: 0, runQueueMs: 0 });
  });
});
