/**
 * Data-parallel accumulation across worker threads against the single-thread accumulator.
 *
 *     node --import tsx scripts/bench/benchParallel.ts            # default run, about a minute
 *     node --import tsx scripts/bench/benchParallel.ts --quick    # smoke run: 2 timed windows
 *     node --import tsx scripts/bench/benchParallel.ts --record   # and keep it for chapter 8
 *
 * A window of 8 micro-batches of 16 for the digit CNN of src/tutorial/models.ts (the bench's model:
 * conv16+BN+pool, conv32+BN+pool, dense 10), on wasm + this project's kernels, trained by
 * `GradientAccumulator` on the main thread and by `ParallelAccumulator` with 1 and 2 workers,
 * each also with a reduction after every round of one micro-batch per worker (what a
 * data-parallel loop without `no_sync` does). Every timed repetition runs one window of each in
 * turn, so load from other processes falls on all alike; the ratio is the point, not the times.
 * PyTorch runs the same window at 2 threads through scripts/bench/bench_torch.py when torch imports.
 * Beside them, the machine's own limit for this work: two independent Node processes, each
 * training the same window on one thread, timed alone and together (`measureProcessLimit`).
 * The target holds when 2 workers reach 1.7x one thread, or 95% of the two processes' speed-up
 * in the same run. A second table splits the 2-worker window as the workers measured it, a third
 * the CPU time of a micro-batch by part and thread, beside the single thread's (issue 35).
 * Output: markdown tables on stdout, JSON in build/bench/parallel.json. With `--record`, the run
 * also replaces src/tutorial/recorded/parallelWindow.ts, the recorded run chapter 8 shows beside
 * its own; a run whose 2 workers did not get two cores is refused there (exit 2), since the
 * record is the chapter's run with both cores.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { selectBackend } from '../../src/backend/index';
import { ParallelMeasurement, ParallelWindowTiming, ProcessLimit, measureParallelWindow, measureProcessLimit } from '../../src/parallel/index';
import { cnn, median, type RecordedParallelRun } from '../../src/tutorial/index';
import { parallelRunRecord, recordModule, recordRefusal } from './parallelRecord';
import { TorchPeer } from './benchPeer';
import { BenchArgsError, parseParallelArgs, type ParallelBenchArgs } from './benchArgs';

/**
 * The command line when run as a script; imported by bench.ts, which passes its own options to
 * benchParallel(), it reads none (bench's arguments are not this file's).
 */
const ARGS: ParallelBenchArgs = require.main === module ? readArgs() : { quick: false, record: false, torch: true };
const { quick, record } = ARGS;
/** The module `--record` replaces. */
export const RECORD_MODULE = join(__dirname, '..', '..', 'src', 'tutorial', 'recorded', 'parallelWindow.ts');
const CONFIG = {
  /** Where the JSON goes. */
  out: process.env.BENCH_PARALLEL_OUT ?? join(__dirname, '..', '..', 'build', 'bench', 'parallel.json'),
  accumulationSteps: 8,
  microBatchSize: 16,
  workers: [1, 2],
  windows: quick ? 2 : 7,
  /** Untimed windows of the single thread first; a trainer with W workers gets W times as many (see measureParallelWindow). */
  warmupWindows: quick ? 1 : 12,
  /** The speed-up issue 14 asks of 2 workers over one thread. */
  target: 1.7,
  /** Or this share of what two independent processes reach in the same run (issue 23). */
  targetOfLimit: 0.95,
  torch: ARGS.torch,
};

/** parseParallelArgs, or exit 2 with its error before anything is timed. */
function readArgs(): ParallelBenchArgs {
  try {
    return parseParallelArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof BenchArgsError)) throw e;
    console.error(`${e.name}: ${e.message}`);
    process.exit(2);
  }
}

/**
 * PyTorch's time for the same window at two threads (the peer of scripts/bench/bench.ts, started with
 * the libraries' own thread pools and torch.set_num_threads(2)); the median of its calls.
 */
async function torchWindow(seconds: number): Promise<{ windowMs: number | null; note: string }> {
  let peer: TorchPeer | null = null;
  try {
    peer = await TorchPeer.start('/usr/bin/python3', 2);
    if (!peer.hello.available) return { windowMs: null, note: `PyTorch not run: ${peer.hello.reason}` };
    const block = await peer.time({ kind: 'window', model: 'cnn', steps: CONFIG.accumulationSteps, micro: CONFIG.microBatchSize }, seconds, 2);
    return { windowMs: median(block.ms), note: `PyTorch ${peer.hello.torch}, 2 threads (${block.busyThreads} busy)` };
  } catch (error) {
    return { windowMs: null, note: `PyTorch not run: ${(error as Error).message.split('\n')[0]}` };
  } finally {
    peer?.close();
  }
}

export function formatParallel(m: ParallelMeasurement, torchMs: number | null, limit: ProcessLimit | null = null): string {
  const rows = [
    '| trainer | sync | window ms | x one thread | cores used | CPU ms | compute ms | transfer ms | update ms | other ms | bytes moved |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    `| GradientAccumulator, main thread | — | ${m.singleThreadMs.toFixed(1)} | 1 | ${m.singleThreadCoresUsed.toFixed(2)} | ${m.singleThreadCpuMs.toFixed(1)} | | | | | 0 |`,
  ];
  for (const p of m.parallel) {
    const s = p.split;
    rows.push(
      `| ParallelAccumulator, ${p.workers} worker${p.workers > 1 ? 's' : ''} | ${p.sync === 'window' ? 'once per window' : 'every round'} | ${p.windowMs.toFixed(1)} | ${p.speedup.toFixed(2)} | ${p.coresUsed.toFixed(2)} | ${p.cpuMs.toFixed(1)} | ${s.computeMs.toFixed(1)} | ${s.transferMs.toFixed(1)} | ${s.updateMs.toFixed(1)} | ${s.otherMs.toFixed(1)} | ${p.bytes.total} |`,
    );
  }
  if (limit !== null) {
    const together = limit.togetherMs.map((t) => t.toFixed(1)).join(' and ');
    rows.push(`| ${limit.processes} independent processes (the limit), one thread each | — | ${together} each (alone ${limit.aloneMs.toFixed(1)}) | ${limit.speedup.toFixed(2)} | | | | | | | 0 |`);
  }
  if (torchMs !== null) rows.push(`| PyTorch, 2 threads | — | ${torchMs.toFixed(1)} | ${(m.singleThreadMs / torchMs).toFixed(2)} | | | | | | | |`);
  return rows.join('\n');
}

/** The workers' own account of the median window (the busiest worker), beside the single thread's time per micro-batch. */
export function formatInWorker(m: ParallelMeasurement): string {
  const rows = [
    '| trainer | sync | micro-batches | compute ms | per micro-batch ms | x one thread | CPU per micro-batch ms | x one thread (CPU) | waiting for a core ms | GC ms | idle ms | weight reads ms | packing ms | messages | main thread CPU ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    `| GradientAccumulator, main thread | — | ${m.accumulationSteps} | | ${(m.singleThreadMs / m.accumulationSteps).toFixed(2)} | 1 | ${m.singleThreadPerMicroBatch.cpuMs.toFixed(2)} | 1 | ${(m.singleThreadPerMicroBatch.runQueueMs * m.accumulationSteps).toFixed(1)} | | | | | | ${(m.singleThreadPerMicroBatch.cpuMs * m.accumulationSteps).toFixed(1)} |`,
  ];
  for (const p of m.parallel) {
    const w = p.inWorker;
    rows.push(
      `| ParallelAccumulator, ${p.workers} worker${p.workers > 1 ? 's' : ''} | ${p.sync === 'window' ? 'once per window' : 'every round'} | ${w.microBatches} | ${w.computeMs.toFixed(1)} | ${w.perMicroBatchMs.toFixed(2)} | ${w.computeInflation.toFixed(2)} | ${w.cpuPerMicroBatchMs.toFixed(2)} | ${w.cpuInflation.toFixed(2)} | ${w.runQueueMs.toFixed(1)} | ${w.gcMs.toFixed(1)} | ${w.idleMs.toFixed(1)} | ${w.unpackMs.toFixed(2)} | ${w.packMs.toFixed(2)} | ${w.messages} | ${p.mainThread.cpuMs.toFixed(1)} |`,
    );
  }
  return rows.join('\n');
}

/** A window's CPU time by part (src/parallel/measure.ts), named through the entry point as scripts must. */
type WorkerCost = NonNullable<ParallelMeasurement['singleThreadCost']>;

/** The parts of {@link WorkerCost}, in the table's order. */
const COST_PARTS: [keyof WorkerCost, string][] = [
  ['microStepMs', 'the micro-step itself (forward, backward, adding into the sums)'],
  ['copiesMs', "copies in the workers (weight reads, packing the sums)"],
  ['messagesMs', "the rest of the workers' threads (messages, event loop)"],
  ['mainThreadMs', 'the main thread besides (sending micro-batches, the reduce, the update, sending weights)'],
  ['otherThreadsMs', "other threads (V8's compilers and GC helpers, libuv)"],
];

/**
 * Where a worker's extra CPU for the same micro-batch goes (issue 35): the median window's CPU
 * time by thread, per micro-batch, each part's ms and share of its trainer's total, beside the
 * single thread's; then the warm-up each trainer paid before its timed windows. Empty off Linux.
 */
export function formatWorkerCost(m: ParallelMeasurement): string {
  const single = m.singleThreadCost;
  const trainers = m.parallel.filter((p) => p.cost !== null);
  if (single === null || trainers.length === 0) return '';
  const per = (ms: number) => ms / m.accumulationSteps;
  const cell = (ms: number, total: number) => `${per(ms).toFixed(2)} (${((100 * ms) / Math.max(1e-9, total)).toFixed(0)}%)`;
  const name = (p: ParallelWindowTiming) => `${p.workers} worker${p.workers > 1 ? 's' : ''}, ${p.sync === 'window' ? 'once per window' : 'every round'}`;
  const rows = [
    `| part, CPU ms per micro-batch (share) | one thread | ${trainers.map(name).join(' | ')} |`,
    `|---|---|${trainers.map(() => '---|').join('')}`,
  ];
  for (const [key, label] of COST_PARTS) {
    // The single thread's main thread does its micro-steps and the update: all of it is "the micro-step".
    const one = key === 'microStepMs' ? cell(single.microStepMs, single.totalMs) : key === 'otherThreadsMs' ? cell(single.otherThreadsMs, single.totalMs) : '—';
    rows.push(`| ${label} | ${one} | ${trainers.map((p) => cell((p.cost as WorkerCost)[key], (p.cost as WorkerCost).totalMs)).join(' | ')} |`);
  }
  rows.push(`| total (every thread) | ${per(single.totalMs).toFixed(2)} | ${trainers.map((p) => `${per((p.cost as WorkerCost).totalMs).toFixed(2)}`).join(' | ')} |`);
  rows.push(`| x one thread | 1 | ${trainers.map((p) => ((p.cost as WorkerCost).totalMs / Math.max(1e-9, single.totalMs)).toFixed(2)).join(' | ')} |`);
  const warm = [`one thread ${m.singleThreadWarmup.windows} windows, ${m.singleThreadWarmup.cpuMs.toFixed(0)} ms`, ...m.parallel.map((p) => `${name(p)} ${p.warmup.windows} windows, ${p.warmup.cpuMs.toFixed(0)} ms`)];
  return [
    ...rows,
    '',
    `Warm-up before the timed windows (process CPU, paid once per start): ${warm.join('; ')}.`,
  ].join('\n');
}

/**
 * Runs the comparison and returns its report as markdown lines and as JSON; `npm run bench` can
 * call this and print `text` beside its own tables.
 */
export async function benchParallel(options: { quick?: boolean; torch?: boolean } = {}): Promise<{ text: string; json: object; record: RecordedParallelRun }> {
  const isQuick = options.quick ?? quick;
  const startedAt = new Date();
  const env = await selectBackend('wasm', { onNotice: () => {} });
  const load = loadavg()[0];
  const windows = isQuick ? 2 : CONFIG.windows;
  const measurement = await measureParallelWindow({
    model: () => cnn({ normalization: 'batch' }),
    accumulationSteps: CONFIG.accumulationSteps,
    microBatchSize: CONFIG.microBatchSize,
    workers: CONFIG.workers,
    windows,
    warmupWindows: isQuick ? 1 : CONFIG.warmupWindows,
    backend: 'wasm',
  });
  const torch = options.torch ?? CONFIG.torch ? await torchWindow(isQuick ? 0.3 : 1.0) : { windowMs: null, note: 'PyTorch skipped (--no-torch)' };
  const limit = await measureProcessLimit({
    model: { module: require.resolve('../../src/tutorial/index'), export: 'cnn', args: { normalization: 'batch' } },
    accumulationSteps: CONFIG.accumulationSteps,
    microBatchSize: CONFIG.microBatchSize,
    processes: 2,
    windows: isQuick ? 2 : 5,
    rounds: isQuick ? 1 : 3,
    warmupWindows: isQuick ? 1 : CONFIG.warmupWindows,
    backend: 'wasm',
  });
  const two = measurement.parallel.find((p) => p.workers === 2 && p.sync === 'window');
  const lines = [
    `## Parallel accumulation: CNN, ${CONFIG.accumulationSteps} micro-batches of ${CONFIG.microBatchSize} per window`,
    '',
    `backend ${env.backend}, ${availableParallelism()} cores, load average ${load.toFixed(2)} at the start; ${measurement.parameters} parameters; median of ${windows} windows, wall-clock.`,
    '',
    formatParallel(measurement, torch.windowMs, limit),
    '',
    `${torch.note}. Two independent processes: ${limit.processes} x ${limit.aloneMs.toFixed(1)} ms alone / ${limit.togetherMs.map((t) => t.toFixed(1)).join(' and ')} ms together.`,
    '',
    'Inside the workers (the busiest one, summed over the median window):',
    '',
    formatInWorker(measurement),
    '',
  ];
  const cost = formatWorkerCost(measurement);
  if (cost) {
    lines.push(
      "Where a worker's extra CPU goes: the median window's CPU time, thread by thread (each thread's own clock, /proc/self/task/*/schedstat), per micro-batch.",
      "The micro-step is the workers' own CPU time while computing; copies are their wall time reading weights and packing sums; the rest of their threads' time is messages and the event loop.",
      '',
      cost,
      '',
    );
  }
  if (two) {
    const share = two.speedup / limit.speedup;
    const met = two.speedup >= CONFIG.target || share >= CONFIG.targetOfLimit;
    const starved = two.coresUsed < 1.5;
    lines.push(
      `Target: 2 workers ≥ ${CONFIG.target}x one thread, or ≥ ${CONFIG.targetOfLimit * 100}% of two independent processes: ` +
        `${two.speedup.toFixed(2)}x, ${(share * 100).toFixed(0)}% of their ${limit.speedup.toFixed(2)}x; ${starved ? 'not judged' : met ? 'met' : 'not met'} in this run.`,
    );
    // With Linux's autogroup scheduling a busy machine shares CPU per session, not per thread:
    // then a second thread gets no second core, and the ratio says nothing about the code.
    if (starved) {
      lines.push(`The 2-worker windows got ${two.coresUsed.toFixed(2)} cores of CPU time per second: the machine did not give this run two cores.`);
      // A projection, not a measurement: the CPU work of a window split over two idle cores.
      lines.push(`CPU work per window: one thread ${measurement.singleThreadCpuMs.toFixed(1)} ms, 2 workers ${two.cpuMs.toFixed(1)} ms; on 2 idle cores that would project to ${((2 * measurement.singleThreadCpuMs) / two.cpuMs).toFixed(2)}x (perfect balance assumed).`);
    }
  }
  const recorded = parallelRunRecord(measurement, limit, {
    command: `node --import tsx scripts/bench/benchParallel.ts --record${isQuick ? ' --quick' : ''}`,
    recordedAt: startedAt,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    loadAverage: load,
    backend: env.backend,
    model: 'CNN with BatchNorm',
    torchMs: torch.windowMs,
  });
  return { text: lines.join('\n'), json: { config: CONFIG, load, backend: env.backend, measurement, torch, limit }, record: recorded };
}

async function main(): Promise<void> {
  const { text, json, record: run } = await benchParallel();
  console.log(text);
  mkdirSync(dirname(CONFIG.out), { recursive: true });
  writeFileSync(CONFIG.out, JSON.stringify(json, null, 2));
  if (record) {
    const refusal = recordRefusal(run);
    if (refusal) {
      console.error(`--record: not kept, ${refusal}.`);
      process.exit(2);
    }
    writeFileSync(RECORD_MODULE, recordModule(run));
    console.log(`--record: kept in ${RECORD_MODULE}`);
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
