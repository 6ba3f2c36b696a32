/**
 * What the runner needs from a kernel, whichever it is: start, run one cell at a time while
 * reporting what the cell prints and displays, and stop, leaving no process behind. tslab is the
 * only implementation today (tslabKernel.ts); another kernel is one more file that implements
 * `Kernel` and one more entry in the runner's `KERNELS`.
 *
 * This file also guarantees that no kernel outlives the runner: every started kernel is tracked,
 * and while any is live the process's exit and SIGINT/SIGTERM/SIGHUP kill them all (a kernel
 * spinning in a synchronous loop never sees its parent go).
 */
import * as os from 'node:os';
import type { MimeBundle } from './nbformat';

/** A display_data message's content, as a kernel's display call sends it. */
export interface DisplayContent {
  data: MimeBundle;
  metadata?: Record<string, unknown>;
  transient?: { display_id?: string };
}

/** What a kernel reports while it runs cells. */
export type KernelEvent =
  | { type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  /** The kernel's report of why the running cell failed (a throw, a type error). */
  | { type: 'error'; text: string }
  | { type: 'display'; content: DisplayContent; update: boolean }
  /**
   * An error no cell's code caught: a promise rejected with no handler, or an exception thrown
   * from a timer or an event. `cell` is the cell that was running, or if none was, the one that
   * ran last (null before the first).
   */
  | { type: 'unhandled'; origin: 'unhandledRejection' | 'uncaughtException'; text: string; cell: number | null; running: boolean }
  | { type: 'done'; status: 'ok' | 'error' | 'abort'; executionCount: number | null; durationMs: number };

export interface Kernel {
  /** Resolves with the start-up time in ms once the kernel accepts cells. */
  ready(timeoutMs: number): Promise<number>;
  /** Starts one cell; `cell` is its 1-based position in the notebook, for attributing errors. */
  execute(code: string, cell: number): void;
  /** Replaces the listener of kernel events (one cell's collector at a time). */
  onEvent(fn: (event: KernelEvent) => void): void;
  /** Called once if the kernel process dies, with a sentence saying how. */
  onExit(fn: (why: string) => void): void;
  /** Asks the kernel to stop, kills it and everything it started after `graceMs` at most. */
  shutdown(graceMs: number): Promise<void>;
  /** Kills the kernel and every process it started, at once. */
  kill(): void;
  /** Everything the kernel printed outside cells (start-up, crashes). */
  log(): string;
  readonly exited: boolean;
}

/** A kind of kernel: the kernelspec its notebooks declare, and how to start one. */
export interface KernelDriver {
  /** The kernelspec name the notebooks must carry (`metadata.kernelspec.name`). */
  kernelspecName: string;
  /** Starts a kernel whose working folder is `notebookDir`, as Jupyter starts it. */
  start(notebookDir: string): Kernel;
}

const live = new Set<Kernel>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function killAll(): void {
  for (const kernel of live) kernel.kill();
}

function onSignal(sig: (typeof SIGNALS)[number]): void {
  killAll();
  // The conventional status of a process ended by a signal, as the default action would give.
  process.exit(128 + os.constants.signals[sig]);
}

/**
 * Registers a started kernel. While at least one is live, the runner's exit and termination
 * signals kill every live kernel first; with none live, the process's default handling returns.
 */
export function trackKernel(kernel: Kernel): void {
  if (live.size === 0) {
    process.on('exit', killAll);
    for (const sig of SIGNALS) process.on(sig, onSignal);
  }
  live.add(kernel);
}

/** Unregisters a kernel that has exited and whose processes are gone. */
export function untrackKernel(kernel: Kernel): void {
  if (!live.delete(kernel) || live.size > 0) return;
  process.off('exit', killAll);
  for (const sig of SIGNALS) process.off(sig, onSignal);
}
