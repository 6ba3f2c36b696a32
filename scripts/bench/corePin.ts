import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { median } from '../../src/tutorial/index';

/**
 * One core for both one-thread sides of the bench. The cores of a virtual machine do not always
 * run at one speed (on this project's 2-core VM one was seen 1.7x slower than the other for
 * minutes), so a one-thread ratio means something only when ours and PyTorch ran on the same
 * core. The one-thread peer's main thread is pinned for its whole life; ours' main thread only
 * while its one-thread blocks are timed, because a worker started by a pinned thread inherits
 * its core, and V8's helper threads and the every-core contenders must keep every core.
 */

/** A CPU list or core the kernel would not take, or a pin that did not hold. */
export class CorePinError extends Error {
  override name = 'CorePinError';
}

/** The cores of a Linux CPU list such as "0-1,3", ascending. */
export function parseCpuList(list: string): number[] {
  const cores = new Set<number>();
  for (const part of list.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new CorePinError(`bad CPU list ${JSON.stringify(list)}: accepted are core numbers and ranges, such as "0-1,3"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new CorePinError(`bad CPU list ${JSON.stringify(list)}: a range must not run backwards`);
    for (let c = from; c <= to; c++) cores.add(c);
  }
  return [...cores].sort((a, b) => a - b);
}

/** The cores thread `tid` of process `pid` may run on, as the kernel says (/proc). */
export function allowedCores(pid: number, tid: number = pid): number[] {
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
  const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(status);
  if (!line) throw new CorePinError(`/proc/${pid}/task/${tid}/status has no Cpus_allowed_list`);
  return parseCpuList(line[1]);
}

/** Pins one thread (a thread id; a process's id names its main thread) to `cores`, and checks that it held. */
export function pinThread(tid: number, cores: number[]): void {
  if (cores.length === 0 || cores.some((c) => !Number.isInteger(c) || c < 0)) {
    throw new CorePinError(`cannot pin thread ${tid} to ${JSON.stringify(cores)}: accepted are one or more core numbers ≥ 0`);
  }
  try {
    execFileSync('taskset', ['-p', '-c', cores.join(','), String(tid)], { stdio: 'pipe' });
  } catch (e) {
    const why = e instanceof Error && 'stderr' in e ? String((e as { stderr: unknown }).stderr).trim() : String(e);
    throw new CorePinError(`taskset could not pin thread ${tid} to cores ${cores.join(',')}: ${why}`);
  }
  const held = allowedCores(tid);
  if (held.join(',') !== [...cores].sort((a, b) => a - b).join(',')) {
    throw new CorePinError(`thread ${tid} asked for cores ${cores.join(',')} but runs on ${held.join(',')}`);
  }
}

/**
 * Runs `fn` with this process's main thread on `core`, and gives the thread back the cores it
 * had, also when `fn` throws. The taskset calls stay outside whatever `fn` times.
 */
export async function onCore<T>(core: number, fn: () => Promise<T> | T): Promise<T> {
  const had = allowedCores(process.pid);
  pinThread(process.pid, [core]);
  try {
    return await fn();
  } finally {
    pinThread(process.pid, had);
  }
}

/** A fixed integer loop; its time on a core is that core's speed. */
function spin(): number {
  let x = 1;
  for (let i = 0; i < 20_000_000; i++) x = (x * 1_103_515_245 + 12_345) | 0;
  return x;
}

/** Ms of a fixed loop on each of `cores`, median of `rounds` turns: whether the cores run at one speed. */
export async function coreSpeeds(cores: number[], rounds = 5): Promise<number[]> {
  const samples: number[][] = cores.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (const [i, core] of cores.entries()) {
      samples[i].push(
        await onCore(core, () => {
          const t = performance.now();
          spin();
          return performance.now() - t;
        }),
      );
    }
  }
  return samples.map((s) => median(s));
}

/** How the bench placed its one-thread sides, for the report. */
export interface Pinning {
  /** The core both one-thread sides ran on; null when they were not pinned. */
  core: number | null;
  /** Why not, when they were not. */
  reason?: string;
  /** {@link coreSpeeds} of every core the bench may use, at the start and the end of the run. */
  speeds?: { cores: number[]; startMs: number[]; endMs?: number[] };
}

/**
 * Pins the one-thread peer (`peerPid`, null when none runs) to the lowest core this process may
 * use, and probes every such core's speed. If that fails, neither side is pinned, and the
 * returned reason says why.
 */
export async function pinOneThreadSides(peerPid: number | null): Promise<Pinning> {
  try {
    const cores = allowedCores(process.pid);
    if (peerPid !== null) pinThread(peerPid, [cores[0]]);
    return { core: cores[0], speeds: { cores, startMs: await coreSpeeds(cores) } };
  } catch (e) {
    return { core: null, reason: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

/** The report's line on pinning. */
export function pinningLine(p: Pinning, peer: boolean): string {
  if (p.core === null) return `One-thread blocks not pinned to a core: ${p.reason ?? 'unknown reason'}.`;
  const who = peer ? "ours' main thread (during its one-thread blocks) and the one-thread PyTorch peer took turns on" : "ours' main thread ran its one-thread blocks on";
  const speeds = p.speeds
    ? ` Core speeds (ms of a fixed loop on cores ${p.speeds.cores.join(', ')}): ${p.speeds.startMs.map((m) => m.toFixed(1)).join('/')} at the start` +
      (p.speeds.endMs ? `, ${p.speeds.endMs.map((m) => m.toFixed(1)).join('/')} at the end.` : '.')
    : '';
  return `Pinning: ${who} core ${p.core}${peer ? '' : '; no PyTorch peer ran'}.${speeds}`;
}
