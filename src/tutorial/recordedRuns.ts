import { argumentError } from '../core/errors';
import type { ParallelMeasurement, ProcessLimit } from '../parallel/index';

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

/** A run of `scripts/bench/benchParallel.ts`, as {@link parallelRunRecord} keeps it. */
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

/** Options of {@link parallelRunRecord}: what the measurement itself does not say. */
export interface ParallelRunRecordArgs {
  /** The command line that ran the bench. Required. */
  command: string;
  /** When it started. Required. */
  recordedAt: Date;
  /** The processor's name and logical cores. Required. */
  cpu: string;
  cores: number;
  /** The 1-minute load average at the start. Required. */
  loadAverage: number;
  /** The backend and a short name of the model. Required. */
  backend: string;
  model: string;
  /** PyTorch's window, ms, or null. Default null. */
  torchMs?: number | null;
}

/** The part of a bench run a chapter shows, from the bench's measurements. */
export function parallelRunRecord(measurement: ParallelMeasurement, limit: ProcessLimit, args: ParallelRunRecordArgs): RecordedParallelRun {
  const owner = 'parallelRunRecord';
  if (typeof args?.command !== 'string' || args.command.trim() === '') throw argumentError(owner, 'command', 'the command line that ran the bench', args?.command);
  if (!(args.recordedAt instanceof Date) || Number.isNaN(args.recordedAt.getTime())) throw argumentError(owner, 'recordedAt', 'a valid Date', args.recordedAt);
  if (measurement.parallel.length === 0) throw argumentError(owner, 'measurement', 'a measurement with at least one parallel trainer', measurement.parallel);
  return {
    command: args.command,
    recordedAt: args.recordedAt.toISOString(),
    cpu: args.cpu,
    cores: args.cores,
    loadAverage: args.loadAverage,
    backend: args.backend,
    model: args.model,
    accumulationSteps: measurement.accumulationSteps,
    microBatchSize: measurement.microBatchSize,
    singleThreadMs: measurement.singleThreadMs,
    trainers: measurement.parallel.map((p) => ({ workers: p.workers, sync: p.sync, windowMs: p.windowMs, speedup: p.speedup, coresUsed: p.coresUsed })),
    processLimitSpeedup: limit.speedup,
    torchMs: args.torchMs ?? null,
  };
}

/**
 * The module that holds a record (src/tutorial/recorded/parallelWindow.ts, which chapter 8 shows),
 * as `benchParallel.ts --record` writes it: a constant, so that every build of the library
 * (CommonJS, ESM, the browser) carries it without reading a file.
 */
export function recordModule(record: RecordedParallelRun): string {
  return [
    "import type { RecordedParallelRun } from '../recordedRuns';",
    '',
    `// Written by \`${record.command}\`; run it again on an idle machine to replace it.`,
    `export const RECORDED_PARALLEL_WINDOW: RecordedParallelRun = ${JSON.stringify(record, null, 2)};`,
    '',
  ].join('\n');
}
