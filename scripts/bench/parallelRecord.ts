/**
 * Keeping a run of `benchParallel.ts --record` for chapter 8: the part of the measurement the
 * chapter shows (src/tutorial/recordedRuns.ts says why a chapter shows a recorded run), the rule
 * for a run worth keeping, and the module it is written as. Bench tooling, so it lives here and
 * not in the library's tutorial entry point.
 */
import type { ParallelMeasurement, ProcessLimit } from '../../src/parallel/index';
import type { RecordedParallelRun } from '../../src/tutorial/index';

/** A record's argument that cannot be kept, named with what is accepted. */
export class RecordArgsError extends Error {
  override name = 'RecordArgsError';
  constructor(field: string, accepted: string, got: unknown) {
    super(`parallelRunRecord: ${field} must be ${accepted}; got ${describeValue(got)}.`);
  }
}

/** A short, printable form of a bad value. */
function describeValue(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : value.toISOString();
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
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
  if (typeof args?.command !== 'string' || args.command.trim() === '') throw new RecordArgsError('command', 'the command line that ran the bench', args?.command);
  if (!(args.recordedAt instanceof Date) || Number.isNaN(args.recordedAt.getTime())) throw new RecordArgsError('recordedAt', 'a valid Date', args.recordedAt);
  if (measurement.parallel.length === 0) throw new RecordArgsError('measurement', 'a measurement with at least one parallel trainer', measurement.parallel);
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

/** Why a run is not kept as chapter 8's record, or null when it may be: its 2-worker windows must have had two cores. */
export function recordRefusal(run: RecordedParallelRun): string | null {
  const two = run.trainers.find((t) => t.workers === 2 && t.sync === 'window');
  if (!two) return 'the run has no 2-worker window to show';
  if (two.coresUsed < 1.5) return `its 2-worker windows got ${two.coresUsed.toFixed(2)} cores (1.5 needed): run it again on an idle machine`;
  return null;
}
