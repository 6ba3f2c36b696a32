/**
 * Processes a kernel leaves behind: a kernel runs the reader's code, and that code may start
 * processes of its own. Each kernel is started as the leader of its own process group; killing
 * it kills the group and, on Linux, every descendant found in /proc first (a descendant that
 * started a group of its own, or one orphaned once the kernel is gone, would escape the group).
 * jupyter_client stops its kernels the same way, by signalling the process group.
 *
 * What neither finds is a process that both left the group and was orphaned before the kill:
 * `sh -c 'setsid sleep 4322 &'` in a cell leaves a sleep in a session of its own, re-parented to
 * init once its shell exits. So each kernel (and each Jupyter server or nbconvert run the tests
 * start) also gets a tag in its environment, {@link KERNEL_TAG_VAR}, unique to it; every process
 * it starts inherits it, and the kill sweeps /proc for it. Unlike a pid, a tag is never reused,
 * so the sweep is safe after the kernel has exited. A process that drops its environment on
 * purpose (`env -i`) escapes; a cgroup would catch that one too, but creating cgroups needs a
 * delegation this project cannot count on (CI's containers, a reader's laptop).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';

/** The parent pid of every process, read from /proc; empty where there is no /proc. */
function parentPids(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return parents;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // /proc/PID/stat is "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // The process exited while we read the table.
    }
  }
  return parents;
}

/** Every process started by `pid`, directly or not (Linux; empty elsewhere). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parentPids()) children.set(parent, [...(children.get(parent) ?? []), child]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // ESRCH: already gone. EPERM cannot happen for our own descendants.
  }
}

/** The environment variable that tags every process a kernel started (see the module comment). */
export const KERNEL_TAG_VAR = 'TFJS_ACCUMULATE_KERNEL_TAG';

/** A new tag, unique to one kernel or server: this process's id and a random UUID. */
export function newKernelTag(): string {
  return `${process.pid}-${randomUUID()}`;
}

/** `env` with `tag` added, for the kernel or server to be started with it. */
export function taggedEnv(tag: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, [KERNEL_TAG_VAR]: tag };
}

/** Every process whose environment carries `tag` (Linux; those this user may read; empty elsewhere). */
export function taggedProcesses(tag: string): number[] {
  const needle = Buffer.from(`${KERNEL_TAG_VAR}=${tag}\0`);
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
    .filter((e) => {
      try {
        return fs.readFileSync(`/proc/${e}/environ`).includes(needle);
      } catch {
        return false; // gone, or another user's
      }
    })
    .map(Number);
}

/**
 * SIGKILLs every process tagged with `tag` until none is left: a tagged process may fork while
 * the sweep reads /proc, so it sweeps again until a pass finds nothing (at most `passes`).
 * Returns how many it killed.
 */
export function killTagged(tag: string, passes = 20): number {
  let killed = 0;
  for (let i = 0; i < passes; i++) {
    const found = taggedProcesses(tag).filter(isAlive);
    if (found.length === 0) break;
    for (const pid of found) signal(pid, 'SIGKILL');
    killed += found.length;
  }
  return killed;
}

/**
 * SIGKILLs the process group that `pid` leads and, while `pid` itself has not exited, `pid` and
 * all its descendants; with a `tag`, then every process that carries it. The tree is read
 * before anything is killed, because an orphan is re-parented and no longer found under `pid`
 * afterwards. Once `pid` has exited and been reaped its number may belong to another process,
 * so then only the group is signalled (a group id stays reserved while any member lives), and
 * the tag finds the rest.
 */
export function killTree(pid: number, { exited, tag }: { exited: boolean; tag?: string }): void {
  const tree = exited ? [] : descendants(pid);
  signal(-pid, 'SIGKILL');
  if (!exited) signal(pid, 'SIGKILL');
  for (const child of tree) signal(child, 'SIGKILL');
  if (tag) killTagged(tag);
}

/** True while `pid` runs; a zombie (dead, not yet reaped by its parent) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: signal 0 succeeded, so it exists
  }
}
