
/**
 * Bench runs kept in the repository, for a chapter to show beside its own measurement. A page's
 * numbers come from the run that made it, on whatever machine and load that was; a speed-up over
 * cores needs a machine that gave the process its cores, which a CI or a reader's laptop may not.
 * So a chapter shows its own run and, labelled as recorded with the command that made it, one
 * run taken when the machine was idle.
 */

/** One trainer of a recorded window: the single thread's rival. */
export interface RecordedTrainer {
  workers: number;
  /** `"window"`: the workers' sums meet once per window; `"round"`: after every round of one micro-batch per worker. */
  sync: 'window' | 'round';
  /** Median wall-clock time of a window, ms. */
  windowMs: number;
  /** The single thread's window time over this one's. */
  speedup: number;
  /** Process CPU time over wall-clock time during its windows: below 1.5 the machine did not give two workers two cores. */
  coresUsed: number;
}

/** A run of `scripts/bench/benchParallel.ts --record`, as scripts/bench/parallelRecord.ts keeps it. */
export interface RecordedParallelRun {
  /** The command that made it, to run again. */
  command: string;
  /** When it started, ISO 8601 (UTC). */
  recordedAt: string;
  /** The processor (`os.cpus()[0].model`) and its logical cores. */
  cpu: string;
  cores: number;
  /** The 1-minute load average when the run started. */
  loadAverage: number;
  /** The backend the trainers ran on, and the model. */
  backend: string;
  model: string;
  accumulationSteps: number;
  microBatchSize: number;
  /** The single-thread `GradientAccumulator`'s median window, ms. */
  singleThreadMs: number;
  trainers: RecordedTrainer[];
  /** What two independent one-thread processes reached together over one alone: the machine's own limit for this work. */
  processLimitSpeedup: number;
  /** PyTorch's window at as many threads as workers, ms; null when it did not run. */
  torchMs: number | null;
}
