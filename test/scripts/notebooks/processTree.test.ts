import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { descendants, isAlive, killTagged, killTree, newKernelTag, taggedEnv, taggedProcesses } from '../../../scripts/notebooks/processTree';

/** The name of a process's program (/proc/PID/comm), or '' once it is gone. */
function command(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Polls until `check` holds or `ms` pass; returns whether it held. */
async function eventually(check: () => boolean, ms = 120_000): Promise<boolean> {
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

describe('a kernel\'s tag', { skip: process.platform !== 'linux' && 'reads /proc' }, () => {
  it('finds and kills a process that left the group and the session and was orphaned, which the group and the tree miss', async () => {
    const tag = newKernelTag();
    // As a cell's `sh -c 'setsid sleep 4322 &'`: the shell exits, the sleep is re-parented to init.
    const leader = spawn('sh', ['-c', 'setsid sleep 61 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: taggedEnv(tag) });
    let out = '';
    leader.stdout.on('data', (b) => (out += b));
    await new Promise((resolve) => leader.on('exit', resolve));
    // Wait for the sleep itself: setsid execs it only after leaving the group, and before that the
    // tagged process is still in the group, which the kill below then reaches (a race a loaded
    // machine lost once).
    const sleeping = (): number[] => taggedProcesses(tag).filter((p) => isAlive(p) && command(p) === 'sleep');
    assert.ok(await eventually(() => sleeping().length > 0), `the sleep of ${out.trim()} carries the tag`);
    const escaped = sleeping();
    // The negative case: the group and the tree, all that killed a kernel's processes before, miss it.
    killTree(leader.pid!, { exited: true });
    await sleep(200);
    assert.ok(escaped.every(isAlive), 'the group kill does not reach it');
    assert.ok(killTagged(tag) >= 1);
    assert.ok(await eventually(() => !escaped.some(isAlive)), `still alive: ${escaped.filter(isAlive).join(', ')}`);
    assert.deepEqual(taggedProcesses(tag).filter(isAlive), []);
  });

  it('is unique to each kernel, so that one kernel\'s sweep never reaches another\'s processes', async () => {
    const [mine, other] = [newKernelTag(), newKernelTag()];
    assert.notEqual(mine, other);
    const theirs = spawn('sleep', ['62'], { stdio: 'ignore', env: taggedEnv(other) });
    try {
      assert.ok(await eventually(() => taggedProcesses(other).includes(theirs.pid!)));
      assert.equal(killTagged(mine), 0);
      assert.ok(isAlive(theirs.pid!));
    } finally {
      theirs.kill('SIGKILL');
    }
  });
});
