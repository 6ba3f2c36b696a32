import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clockSince, threadClock } from '../../src/parallel/threadClock';

describe('threadClock', () => {
  it('counts this thread\'s CPU time for a busy loop and not for a sleep', async () => {
    const start = threadClock();
    assert.ok(start !== null, 'Linux exposes /proc/thread-self/schedstat');
    // Busy until the process's own CPU clock (another source: getrusage) has counted 40 ms, however
    // long that takes on a loaded machine; this thread ran nearly all of it.
    const cpu0 = process.cpuUsage();
    const spent = () => { const d = process.cpuUsage(cpu0); return (d.user + d.system) / 1000; };
    while (spent() < 40);
    const busy = clockSince(start);
    const processMs = spent();
    assert.ok(busy.cpuMs > 20 && busy.cpuMs <= processMs + 5, `${JSON.stringify(busy)} against ${processMs} ms of process CPU`);
    // The least of three sleeps: other work of this process (the test runner's reporting, a GC)
    // can land in one of them (a CI run saw 30+ ms once), but a clock that counted wall time
    // would show about 60 ms in each.
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
