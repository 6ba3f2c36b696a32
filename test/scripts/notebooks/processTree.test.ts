import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { descendants, isAlive, killTree } from '../../../scripts/notebooks/processTree';

/** Polls until `check` holds or `ms` pass; returns whether it held. */
async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(50)) if (check()) return true;
  return check();
}

describe('killTree', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  it('kills a group leader, the processes it started, and one that left the group', async () => {
    // A shell in its own group starting a sleep in the group and one in a new session of its own.
    const leader = spawn('sh', ['-c', 'sleep 60 & setsid sleep 60 & wait'], { detached: true, stdio: 'ignore' });
    const pid = leader.pid!;
    assert.ok(await eventually(() => descendants(pid).length >= 2), 'both sleeps started');
    const tree = descendants(pid);
    assert.ok([pid, ...tree].every(isAlive), 'alive before');
    killTree(pid, { exited: false });
    assert.ok(await eventually(() => ![pid, ...tree].some(isAlive)), `still alive: ${[pid, ...tree].filter(isAlive).join(', ')}`);
  });

  it('after the leader exited, still kills what is left in its group', async () => {
    const leader = spawn('sh', ['-c', 'sleep 60 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    leader.stdout.on('data', (b) => (out += b));
    await new Promise((resolve) => leader.on('exit', resolve));
    const orphan = Number(out.trim());
    assert.ok(isAlive(orphan), 'the sleep outlives its shell');
    killTree(leader.pid!, { exited: true });
    assert.ok(await eventually(() => !isAlive(orphan)));
  });
});
