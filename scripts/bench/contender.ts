import type { RoundMedians } from './everyCoreBreakdown';

/** Something of ours timed in a bench row (scripts/bench/bench.ts): one call is one step or one window. */
export interface Contender {
  label: string;
  /** Threads it is meant to use. */
  threads: number;
  call(): void | Promise<void>;
  dispose(): void | Promise<void>;
  /** A worker option's worker threads (everyCore.ts). */
  workers?: number;
  /** A worker option's warm-up: the median ms of each block of its untimed windows (everyCore.ts). */
  warmupCurve?: number[];
  /** A worker option's round report over the windows it ran, as medians (everyCoreBreakdown.ts). */
  rounds?(): RoundMedians | null;
}
