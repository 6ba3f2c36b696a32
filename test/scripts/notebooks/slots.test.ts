import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Slots } from '../../../scripts/notebooks/slots';

describe('Slots (a first-come, first-served limit on what runs at once)', () => {
  it('runs two light tasks at once, a heavy one alone, in the order they came', async () => {
    const slots = new Slots(2);
    const log: string[] = [];
    let running = 0;
    let most = 0;
    // Each task ends when the test opens its gate, not after a timer: the order is the test's, whatever the load.
    const gates = new Map<string, () => void>();
    const task = (name: string, weight: number) =>
      slots.run(weight, async () => {
        running += weight;
        most = Math.max(most, running);
        log.push(`start ${name} (${running} in use)`);
        await new Promise<void>((open) => gates.set(name, open));
        running -= weight;
        log.push(`end ${name}`);
      });
    const turns = () => new Promise((r) => setImmediate(r));
    const all = Promise.all([task('a', 1), task('b', 1), task('heavy', 2), task('c', 1)]);
    for (const name of ['b', 'a', 'heavy', 'c']) {
      await turns();
      gates.get(name)!();
    }
    await all;
    assert.equal(most, 2);
    assert.deepEqual(log, ['start a (1 in use)', 'start b (2 in use)', 'end b', 'end a', 'start heavy (2 in use)', 'end heavy', 'start c (1 in use)', 'end c']);
  });

  it('frees its share when a task fails, and refuses a weight it cannot hold', async () => {
    const slots = new Slots(2);
    await assert.rejects(slots.run(2, async () => Promise.reject(new Error('boom'))), /boom/);
    assert.equal(await slots.run(2, async () => 'ran'), 'ran');
    await assert.rejects(slots.run(3, async () => 0), /weight 3, accepted 1 to 2/);
  });
});
