/**
 * Processes a kernel leaves behind: a kernel runs the reader's code, and that code may start
 * processes of its own. Each kernel is started as the leader of its own process group; killing
 * it kills the group and, on Linux, every descendant found in /proc first (a descendant that
 * started a group of its own, or one orphaned once the kernel is gone, would escape the group).
 * jupyter_client stops its kernels the same way, by signalling the process group.
 */
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

/**
 * SIGKILLs the process group that `pid` leads and, while `pid` itself has not exited, `pid` and
 * all its descendants. The tree is read before anything is killed, because an orphan is
 * re-parented and no longer found under `pid` afterwards. Once `pid` has exited and been reaped
 * its number may belong to another process, so then only the group is signalled: a group id
 * stays reserved while any member lives.
 */
export function killTree(pid: number, { exited }: { exited: boolean }): void {
  const tree = exited ? [] : descendants(pid);
  signal(-pid, 'SIGKILL');
  if (!exited) signal(pid, 'SIGKILL');
  for (const child of tree) signal(child, 'SIGKILL');
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
