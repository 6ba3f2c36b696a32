/**
 * Which threads of this process did the work: the pinning, verified. Linux only (reads
 * /proc/self/task/<tid>/schedstat, whose first field is the thread's time on a CPU in ns); on
 * other systems the count is null.
 */

/**
 * A thread counts as busy when it ran at least this share of the busiest thread's CPU time.
 * Relative to the busiest thread, not to the wall time: on a loaded machine a thread that wants
 * a whole core gets only part of it, yet two threads sharing a product still run alike. V8's
 * compiler and garbage-collector threads run a few percent beside the main thread.
 */
export const BUSY_SHARE = 0.25;

// On-CPU nanoseconds of each thread: the parallel entry point's reader, which its measurements use too.
export { taskCpuNs } from '../../src/parallel/index';

/** Threads that ran at least `share` of the busiest thread's CPU time between two {@link taskCpuNs} readings. */
export function busyThreads(before: Map<string, number> | null, after: Map<string, number> | null, share = BUSY_SHARE): number | null {
  if (!before || !after) return null;
  const used = [...after].map(([tid, ns]) => ns - (before.get(tid) ?? 0));
  const busiest = Math.max(0, ...used);
  return busiest === 0 ? 0 : used.filter((ns) => ns >= share * busiest).length;
}

/** Threads' CPU time over wall time between two readings: how many cores the process kept busy on average. */
export function cpuPerWall(before: Map<string, number> | null, after: Map<string, number> | null, wallNs: number): number | null {
  if (!before || !after) return null;
  let total = 0;
  for (const [tid, ns] of after) total += ns - (before.get(tid) ?? 0);
  return total / wallNs;
}

/** CPU nanoseconds of the busiest thread between two {@link taskCpuNs} readings. */
export function busiestThreadNs(before: Map<string, number> | null, after: Map<string, number> | null): number | null {
  if (!before || !after) return null;
  let busiest = 0;
  for (const [tid, ns] of after) busiest = Math.max(busiest, ns - (before.get(tid) ?? 0));
  return busiest;
}
