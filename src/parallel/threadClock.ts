import { readdirSync, readFileSync } from 'node:fs';

/**
 * The calling thread's own scheduler clock on Linux, from `/proc/thread-self/schedstat`: the
 * nanoseconds it ran on a CPU and the nanoseconds it waited, runnable, for one. Read inside a
 * worker it is that worker's, unlike `process.cpuUsage()`, which adds up every thread. Their
 * split tells a step that does more work (more CPU time) from one that waits for a core (more
 * run-queue time, as on a loaded machine).
 */

/** Milliseconds on a CPU and waiting for one since the thread started; null where the file is missing (not Linux). */
export interface ThreadClock {
  cpuMs: number;
  runQueueMs: number;
}

let available = true;

/** Reads the calling thread's clock, or returns null off Linux. */
export function threadClock(): ThreadClock | null {
  if (!available) return null;
  try {
    const [cpu, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(/\s+/).map(Number);
    return { cpuMs: cpu / 1e6, runQueueMs: wait / 1e6 };
  } catch {
    available = false;
    return null;
  }
}

/** `later − earlier`, or zeros when either is unknown. */
export function clockSince(earlier: ThreadClock | null, later: ThreadClock | null = threadClock()): ThreadClock {
  if (earlier === null || later === null) return { cpuMs: 0, runQueueMs: 0 };
  return { cpuMs: later.cpuMs - earlier.cpuMs, runQueueMs: later.runQueueMs - earlier.runQueueMs };
}

/**
 * On-CPU nanoseconds of every thread of this process so far, by thread id (the first field of
 * /proc/self/task/<tid>/schedstat), or null without /proc. A thread that ended between the listing
 * and its read is left out.
 */
export function taskCpuNs(): Map<string, number> | null {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  const out = new Map<string, number>();
  for (const tid of tids) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}
