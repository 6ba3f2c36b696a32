/**
 * Every core, three ways, for the bench's native window rows (issue 26, "Threads, explicitly"):
 * the BLAS's threads on the main thread, the parallel trainer's workers at one BLAS thread each,
 * or both, each beside one thread and PyTorch at every core in the same rounds.
 *
 * scripts/bench/bench.ts owns the rows and the rounds: a native window row's `oneThread` and
 * `allCores` contenders are options (a) and (b); this file adds (c) `ParallelAccumulator` with
 * one worker per core and one BLAS thread each, and (d) workers x BLAS threads above one each,
 * timed only where the library accepts it (never more threads than cores: on 2 cores, 2 x 2 is
 * refused, and the row shows the library's own error). Then it prints "Every core: which wins".
 */
import * as tf from '@tensorflow/tfjs';
import { setNativeThreads } from '../../src/backend/index';
import { ParallelAccumulator } from '../../src/parallel/index';
import type { LossSpec, RoundReport, TransferableTensor } from '../../src/parallel/index';
import type { Contender } from './contender';
import { median } from '../../src/tutorial/index';
import { packed, roundMedians } from './everyCoreBreakdown';
import { fmt, Refusal, Report, Stats } from './benchReport';

/** A way to use the cores: `workers` worker threads (0: the main thread alone), each with the BLAS at `blasThreads`. */
export interface CoreSplit {
  workers: number;
  blasThreads: number;
}

/**
 * The worker splits to time beside the main thread's options at `cores`: one worker per core at
 * one BLAS thread, then every "both" split (workers x BLAS threads = cores, each at least 2).
 * Where the cores allow none (2 or 3 cores, or a prime count), the smallest "both", 2 x 2, is
 * listed so that the table shows why it is not run.
 */
export function everyCoreSplits(cores: number): CoreSplit[] {
  const both: CoreSplit[] = [];
  for (let workers = 2; workers <= cores / 2; workers++) {
    if (cores % workers === 0) both.push({ workers, blasThreads: cores / workers });
  }
  return [{ workers: cores, blasThreads: 1 }, ...(both.length > 0 ? both : [{ workers: 2, blasThreads: 2 }])];
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "ParallelAccumulator, 2 workers x 1 BLAS thread". */
export const splitLabel = (s: CoreSplit): string => `ParallelAccumulator, ${plural(s.workers, 'worker')} x ${plural(s.blasThreads, 'BLAS thread')}`;

/** Options of {@link everyCoreEntrants}: one window model, and its micro-batches. */
export interface EveryCoreArgs {
  /** Builds the model (its initial weights the same as the other contenders'). */
  model: () => tf.LayersModel;
  /** The window's micro-batches; read once into arrays and disposed. */
  microBatches: { xs: tf.Tensor; ys: tf.Tensor }[];
  /** The loss as the workers name it (`"softmaxCrossEntropy"`, `"meanSquaredError"`). */
  loss: LossSpec;
  /** The cores to fill. */
  cores: number;
  /**
   * Untimed windows after start-up, for at least this long (s), in blocks of WARMUP_BLOCK: V8
   * optimizes the workers' code in its own threads for seconds, and those threads take the cores
   * from the workers meanwhile (a CNN window of 4 x 16 on 2 workers: 22 ms for its first 25
   * windows, 14 ms around the 100th, 12 ms after 300, at 5 s). The block medians are kept.
   */
  warmupSeconds: number;
  /** The learning rate of the SGD update, as the other contenders'. Default 0.01. */
  learningRate?: number;
}

/** Windows per block of a warm-up: one median each. */
export const WARMUP_BLOCK = 25;

/**
 * Calls `window` in blocks of WARMUP_BLOCK until `seconds` have passed (at least one block), and
 * returns each block's median ms: how the option's speed settled while V8 optimized its code.
 * `now` is the clock in ms (the tests give it one that only the windows advance, so that they do
 * not depend on how fast the machine is).
 */
export async function warmUp(window: () => Promise<void>, seconds: number, now: () => number = () => performance.now()): Promise<number[]> {
  const curve: number[] = [];
  const start = now();
  do {
    const times: number[] = [];
    for (let i = 0; i < WARMUP_BLOCK; i++) {
      const t = now();
      await window();
      times.push(now() - t);
    }
    curve.push(median(times));
  } while (now() - start < seconds * 1000);
  return curve;
}

/**
 * The worker options of {@link everyCoreSplits}, each as a contender for the row's rounds, or
 * as the library's refusal. One call is one window: each micro-batch sent to the next worker,
 * then the reduction and the update on the main thread.
 */
export async function everyCoreEntrants(args: EveryCoreArgs): Promise<(Contender | Refusal)[]> {
  const batches = args.microBatches.map(({ xs, ys }) => ({ xs: packed(xs), ys: packed(ys) }));
  tf.dispose(args.microBatches.flatMap((m) => [m.xs, m.ys]));
  const out: (Contender | Refusal)[] = [];
  for (const split of everyCoreSplits(args.cores)) {
    const label = splitLabel(split);
    const threads = split.workers * split.blasThreads;
    const model = args.model();
    const optimizer = tf.train.sgd(args.learningRate ?? 0.01);
    let acc: ParallelAccumulator;
    try {
      acc = await ParallelAccumulator.create({ model, optimizer, accumulationSteps: batches.length, loss: args.loss, workers: split.workers, nativeThreads: split.blasThreads, backend: 'native' });
    } catch (error) {
      optimizer.dispose();
      model.dispose();
      out.push({ label, threads, refused: (error as Error).message });
      continue;
    }
    const rounds: RoundReport[] = [];
    const window = async (): Promise<void> => {
      // OpenBLAS keeps one thread count per process: the main thread's options change it between
      // turns, so this one sets its workers' count back before each window.
      setNativeThreads(split.blasThreads);
      // The buffers are transferred to the workers: send copies.
      for (const b of batches) {
        const result = await acc.step({ xs: { values: b.xs.values.slice(), shape: b.xs.shape }, ys: { values: b.ys.values.slice(), shape: b.ys.shape } });
        if (result.round) rounds.push(result.round);
      }
    };
    const warmupCurve = await warmUp(window, args.warmupSeconds);
    // Only the windows timed from here on are summarised.
    rounds.length = 0;
    out.push({
      label,
      threads,
      workers: split.workers,
      warmupCurve,
      rounds: () => roundMedians(rounds),
      call: window,
      dispose: async () => {
        await acc.dispose();
        model.dispose();
      },
    });
  }
  return out;
}


/** One option of the table: its label, threads, median, fastest and slowest ms and cores used (null when refused). */
export interface Option {
  label: string;
  threads: number;
  ms: number | null;
  minMs: number | null;
  maxMs: number | null;
  /** CPU time over wall time of the whole process while it ran: the cores the machine gave it. */
  cores: number | null;
  /** CPU ms per window of the whole process: the work an option costs, which load does not stretch. */
  cpuMs: number | null;
  refused: string | null;
}

/** A native window row's options in order: one thread, the BLAS at every core, then the workers' splits. */
export function rowOptions(row: Report['rows'][number]): Option[] {
  const timed = (label: string, s: Stats & { threads: number }): Option => ({ label, threads: s.threads, ms: s.ms, minMs: s.minMs, maxMs: s.maxMs, cores: s.cpuPerWall, cpuMs: s.cpuMs ?? null, refused: null });
  return [
    timed('one thread', row.ours1),
    ...(row.oursAll ? [timed(`BLAS at ${plural(row.oursAll.threads, 'thread')}, main thread`, row.oursAll)] : []),
    ...(row.others ?? []).map((o) => ('refused' in o ? { label: o.label, threads: o.threads, ms: null, minMs: null, maxMs: null, cores: null, cpuMs: null, refused: o.refused } : timed(o.label, o))),
  ];
}

/** The fastest timed option (lowest median); null when none was timed. */
export function winner(options: Option[]): Option | null {
  let best: Option | null = null;
  for (const o of options) if (o.ms !== null && (best === null || o.ms < (best.ms as number))) best = o;
  return best;
}

/**
 * Whether the machine gave the every-core options their cores: the most cores (process CPU time
 * over wall time) any timed option of two or more threads got, against the cores it asked for
 * (less half a core of slack, as the parallel bench's 1.5 of 2). Null when no such option ran.
 * On a shared machine, Linux's autogroup can leave a whole process one core whatever its
 * threads; then an every-core ratio says nothing about the code, so no such target is judged.
 */
export function coresGiven(report: Report): { cores: number; asked: number; given: boolean } | null {
  let best: { cores: number; asked: number } | null = null;
  for (const r of report.rows) {
    if (!r.others) continue;
    for (const o of rowOptions(r)) {
      if (o.ms === null || o.cores === null || o.threads < 2) continue;
      if (best === null || o.cores > best.cores) best = { cores: o.cores, asked: Math.min(o.threads, report.cpus.count) };
    }
  }
  return best === null ? null : { ...best, given: best.cores >= best.asked - 0.5 };
}

/** The verdict of {@link coresGiven} as one line of the report. */
export function coresGivenLine(report: Report): string {
  const c = coresGiven(report);
  if (c === null) return 'Every core: no option of two or more threads was timed, so nothing tells whether the machine gave this run its cores.';
  return c.given
    ? `Every core: the options got up to ${fmt(c.cores)} cores of CPU time per second of the ${c.asked} they asked for; the machine gave this run its cores.`
    : `Every core: the options got at most ${fmt(c.cores)} cores of CPU time per second of the ${c.asked} they asked for: the machine did not give this run ${c.asked} cores, so no every-core target is judged.`;
}

/** The table "Every core: which wins", for the rows that timed worker options; empty when none did. */
export function everyCoreTable(report: Report): string[] {
  const rows = report.rows.filter((r) => r.others !== undefined && r.others.length > 0);
  if (rows.length === 0) return [];
  const cores = report.cpus.count;
  const lines = [
    `Every core: which wins. Native window rows, each option timed in the same rounds as the rows above (median wall ms per window); never more threads than the ${cores} cores.`,
    '"cores used" is the process\'s CPU time over wall time while the option ran: below its threads, the machine did not give it its cores.',
    '"CPU ms" is the CPU time of a window, every thread of the process included: what an option costs in work, which load stretches less than wall time.',
    '',
    `| row | option | threads | cores used | CPU ms | ms (min–max) | x one thread | x PyTorch ${cores} threads |`,
    '|---|---|---|---|---|---|---|---|',
  ];
  const verdicts: string[] = [];
  const warmups: string[] = [];
  const given = coresGiven(report)?.given ?? null;
  for (const r of rows) {
    const options = rowOptions(r);
    const one = r.ours1.ms;
    const torch = r.torchAll ? r.torchAll.ms : null;
    options.forEach((o) => {
      const cell = o.ms === null ? `refused: ${o.refused}` : `${fmt(o.ms)} (${fmt(o.minMs)}–${fmt(o.maxMs)})`;
      lines.push(`| ${r.label} | ${o.label} | ${o.threads} | ${fmt(o.cores)} | ${fmt(o.cpuMs)} | ${cell} | ${o.ms === null ? '—' : fmt(o.ms / one)} | ${o.ms === null || torch === null ? '—' : fmt(o.ms / torch)} |`);
    });
    for (const o of r.others ?? []) {
      if ('refused' in o || !o.warmupCurve?.length) continue;
      const curve = o.warmupCurve;
      warmups.push(`${r.label}, ${o.label}: warm-up before its rounds, median ms per block of ${WARMUP_BLOCK} windows: ${curve.map((ms) => fmt(ms)).join(', ')} (first ${fmt(curve[0])}, last ${fmt(curve[curve.length - 1])}).`);
    }
    const best = winner(options);
    const target = report.config.targets.ratioAll?.[r.id];
    const verdict = (ratio: number): string => (target === undefined ? '' : `; target ≤ ${target} ${given === false ? 'not judged: the machine did not give this run its cores' : ratio <= target ? 'met' : 'missed'}`);
    if (best) verdicts.push(`${r.label}: ${best.label} wins (${fmt(best.ms)} ms, ${fmt((best.ms as number) / one)} x one thread${torch === null ? '' : `, ${fmt((best.ms as number) / torch)} x PyTorch at ${cores} threads${verdict((best.ms as number) / torch)}`}).`);
  }
  lines.push('', ...verdicts);
  if (warmups.length > 0) lines.push('', ...warmups);
  return lines;
}
