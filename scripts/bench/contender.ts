/** Something of ours timed in a bench row (scripts/bench/bench.ts): one call is one step or one window. */
export interface Contender {
  label: string;
  /** Threads it is meant to use. */
  threads: number;
  call(): void | Promise<void>;
  dispose(): void | Promise<void>;
}
