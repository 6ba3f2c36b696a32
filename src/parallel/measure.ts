import * as tf from '@tensorflow/tfjs';
import type { BackendPreference } from '../backend/selectBackend';
import { argumentError, isPositiveInteger } from '../core/errors';
import { singleThreadWindow, windowData } from './benchWindow';
import { TFJS_LOSS_NAMES } from './loss';
import { ParallelAccumulator } from './parallelAccumulator';
import type { WorkerTiming } from './protocol';
import { ThreadClock, clockSince, taskCpuNs, threadClock } from './threadClock';
import type { RoundReport } from './results';

/**
 * Measuring a parallel window against the single-thread accumulator, side by side: every timed
 * repetition runs one window of each contender in turn, so that a shared machine's load falls
 * on all of them alike, and the medians are compared. Used by `scripts/bench/benchParallel.ts` and the
 * "More cores" chapter.
 */

/** Options of {@link measureParallelWindow}. */
export interface MeasureParallelArgs {
  /** Builds a fresh copy of the model (each contender trains its own). Required. */
  model: () => tf.LayersModel;
  /** A `tf.losses` name, as `ParallelAccumulator` takes it. Default `"softmaxCrossEntropy"`. */
  loss?: (typeof TFJS_LOSS_NAMES)[number];
  /** Micro-batches per window. Default 8. */
  accumulationSteps?: number;
  /** Samples per micro-batch. Default 16. */
  microBatchSize?: number;
  /** Worker counts to measure. Default [2]. */
  workers?: number[];
  /** Also measure each worker count with a reduction after every round of one micro-batch per worker. Default true. */
  syncEveryRound?: boolean;
  /** Timed windows per contender (the median is reported). Default 5. */
  windows?: number;
  /**
   * Untimed windows first (tfjs and XNNPACK prepare on first calls, and V8 compiles the hot code).
   * A trainer with W workers gets W times as many, so that each worker's isolate, which compiles
   * its own code from only its share of the micro-batches, has run as many micro-batches as the
   * main thread before timing starts (with fewer, the workers' JIT compilation falls into the
   * timed windows, about a quarter of their CPU time after 2 windows). Default 2.
   */
  warmupWindows?: number;
  /** The backend of the workers; the main thread's is whatever is active. Default `"wasm"`. */
  backend?: BackendPreference;
}

/** One parallel configuration's result. */
export interface ParallelWindowTiming {
  workers: number;
  /** Reductions inside the window: `"window"` (once) or `"round"` (after every W micro-batches). */
  sync: 'window' | 'round';
  /** Median wall-clock time of a window, ms. */
  windowMs: number;
  /** singleThreadMs / windowMs. */
  speedup: number;
  /**
   * Process CPU time (every thread) over wall-clock time, for the median window: the cores the
   * run actually got. Two workers cannot beat one thread by more than this, whatever the code.
   */
  coresUsed: number;
  /** Process CPU time of the median window, ms: the work done, whatever the load (waiting costs none). */
  cpuMs: number;
  /**
   * The split of the median window: the slowest worker's compute; packing, summing and sharing
   * weights; the update; the rest (dispatch, waiting, scheduling). A worker that finishes first
   * packs while the slowest still computes, so on a loaded machine compute plus transfer can
   * exceed the window; then `otherMs` is 0.
   */
  split: { computeMs: number; transferMs: number; updateMs: number; otherMs: number };
  /** Bytes crossing threads per window. */
  bytes: { microBatches: number; gradients: number; weights: number; total: number };
  /**
   * The median window as the workers saw it, summed over its rounds, for the busiest worker
   * (by compute): its compute, idle waits for messages, GC pauses, weight reads, sum packing,
   * messages handled, and its compute per micro-batch. `computeInflation` is that per-micro-batch
   * compute over the single thread's window time per micro-batch: 1 when running beside the other
   * workers costs a micro-batch nothing, 2 when two workers take as long as one thread.
   * `cpuInflation` is the same ratio for the thread's own CPU time (Linux's scheduler clock):
   * above 1 when a micro-batch does more work in a worker, about 1 when it only waits longer for
   * a core (its `runQueueMs`).
   */
  /** The main thread's own CPU time and run-queue wait over the median window (dispatch, reduction, update), ms (Linux; 0 elsewhere). */
  mainThread: ThreadClock;
  /** The median window's CPU time by part, ms per window (Linux; null elsewhere). See {@link WorkerCost}. */
  cost: WorkerCost | null;
  /** The untimed warm-up windows (V8 compiling the workers' code): their count and the process CPU time they took, ms. */
  warmup: { windows: number; cpuMs: number };
  inWorker: WorkerTiming & { perMicroBatchMs: number; computeInflation: number; cpuPerMicroBatchMs: number; cpuInflation: number };
}

/**
 * Where a window's CPU time goes, thread by thread, ms per window (from each thread's own
 * scheduler clock, /proc/self/task/<tid>/schedstat). For the single thread, `microStepMs` is the
 * main thread's whole time (its micro-steps and the update) and the worker parts are 0.
 */
export interface WorkerCost {
  /** The workers' micro-steps: forward, backward, adding into their sums (their own CPU time). */
  microStepMs: number;
  /** The workers' copies: reading new weights into the replica, packing the sums for the reduce (their wall time). */
  copiesMs: number;
  /** The rest of the workers' threads: receiving and decoding messages, their event loop, GC outside a micro-step. */
  messagesMs: number;
  /** The main thread: sending micro-batches, adding the workers' sums, the update, sending weights. */
  mainThreadMs: number;
  /** Every other thread of the process: V8's compiler and GC helper threads, libuv's. */
  otherThreadsMs: number;
  /** All of them: the process's CPU time in the window. */
  totalMs: number;
}

/** What {@link measureParallelWindow} found. */
export interface ParallelMeasurement {
  accumulationSteps: number;
  microBatchSize: number;
  /** Float32 parameters of the model. */
  parameters: number;
  /** Median wall-clock time of the single-thread accumulator's window, ms. */
  singleThreadMs: number;
  /** Process CPU time over wall-clock time of the single-thread window (at most about 1). */
  singleThreadCoresUsed: number;
  /** Process CPU time of the single-thread window, ms. */
  singleThreadCpuMs: number;
  /** The main thread's own CPU time and run-queue wait per micro-batch of the median single-thread window, ms (Linux; 0 elsewhere). */
  singleThreadPerMicroBatch: ThreadClock;
  /** The single thread's median window by thread, ms per window (Linux; null elsewhere). */
  singleThreadCost: WorkerCost | null;
  /** The single thread's untimed warm-up windows and their process CPU time, ms. */
  singleThreadWarmup: { windows: number; cpuMs: number };
  parallel: ParallelWindowTiming[];
}

/**
 * Times a window of `accumulationSteps` micro-batches with the single-thread `GradientAccumulator`
 * and with `ParallelAccumulator` for each worker count.
 *
 * Note: times are wall-clock, not process CPU time as in `timeCall`: the process's CPU time adds
 * up every thread's, which is exactly what parallelism does not shorten.
 */
export async function measureParallelWindow(args: MeasureParallelArgs): Promise<ParallelMeasurement> {
  const owner = 'measureParallelWindow';
  if (typeof args?.model !== 'function') throw argumentError(owner, 'model', 'a function that builds the model', args?.model);
  const loss = args.loss ?? 'softmaxCrossEntropy';
  const steps = args.accumulationSteps ?? 8;
  const size = args.microBatchSize ?? 16;
  const workerCounts = args.workers ?? [2];
  const windows = args.windows ?? 5;
  const warmup = args.warmupWindows ?? 2;
  for (const [name, value] of [['accumulationSteps', steps], ['microBatchSize', size], ['windows', windows]] as const) {
    if (!isPositiveInteger(value)) throw argumentError(owner, name, 'a positive integer', value);
  }
  if (!Array.isArray(workerCounts) || !workerCounts.every(isPositiveInteger)) throw argumentError(owner, 'workers', 'an array of positive integers', workerCounts);

  const single = args.model();
  const window = windowData(single, steps, size);
  const { xsShape, ysShape } = window;
  const singleRun = singleThreadWindow(single, window, loss);
  let singleClock: ThreadClock = { cpuMs: 0, runQueueMs: 0 };
  const singleWindow = async () => {
    const clock = threadClock();
    singleRun.run();
    singleClock = clockSince(clock);
  };

  // Each trainer's threads are the ones that appear while it starts: its workers.
  const known = new Set(threadCpuMs()?.keys() ?? []);
  const trainerThreads: Set<string>[] = [];
  const configs = workerCounts.flatMap((w) => (args.syncEveryRound === false ? [{ w, sync: 'window' as const }] : [{ w, sync: 'window' as const }, { w, sync: 'round' as const }]));
  const models = configs.map(() => args.model());
  const parallel: ParallelAccumulator[] = [];
  try {
    for (const [i, c] of configs.entries()) {
      parallel.push(
        await ParallelAccumulator.create({
          model: models[i],
          optimizer: tf.train.sgd(0.01),
          accumulationSteps: steps,
          loss,
          workers: c.w,
          backend: args.backend ?? 'wasm',
          syncEvery: c.sync === 'round' ? c.w : undefined,
        }),
      );
      const started = [...(threadCpuMs()?.keys() ?? [])].filter((tid) => !known.has(tid));
      started.forEach((tid) => known.add(tid));
      trainerThreads.push(new Set(started));
    }
    type WindowSplit = { computeMs: number; transferMs: number; updateMs: number; bytes: RoundReport['bytes']; workers: WorkerTiming[]; mainThread: ThreadClock };
    const parallelWindow = async (acc: ParallelAccumulator): Promise<WindowSplit> => {
      // Fresh copies of the arrays (a caller transferring its data makes them anyway); cheap next to training.
      const batches = window.batches.map((d) => ({ xs: { values: d.xs.slice(), shape: xsShape }, ys: { values: d.ys.slice(), shape: ysShape } }));
      const split: WindowSplit = { computeMs: 0, transferMs: 0, updateMs: 0, bytes: { microBatches: 0, gradients: 0, weights: 0 }, workers: acc.workerBackends.map(() => ({ computeMs: 0, unpackMs: 0, packMs: 0, idleMs: 0, gcMs: 0, messages: 0, microBatches: 0, cpuMs: 0, runQueueMs: 0 })), mainThread: { cpuMs: 0, runQueueMs: 0 } };
      const mainClock = threadClock();
      for (const b of batches) {
        const { round } = await acc.step(b);
        if (round === null) continue;
        const t = round.timing;
        // Workers compute side by side: a round costs its slowest worker's compute.
        split.computeMs += Math.max(...t.computeMs);
        split.transferMs += t.packMs + t.unpackMs + t.reduceMs + t.broadcastMs;
        split.updateMs += t.updateMs;
        split.bytes.microBatches += round.bytes.microBatches;
        split.bytes.gradients += round.bytes.gradients;
        split.bytes.weights += round.bytes.weights;
        round.workers.forEach((w, i) => {
          const total = split.workers[i];
          for (const key of Object.keys(total) as (keyof WorkerTiming)[]) total[key] += w[key];
        });
      }
      split.mainThread = clockSince(mainClock);
      return split;
    };
    type Threads = Map<string, number> | null;
    const singleTimes: { ms: number; cores: number; clock: ThreadClock; threads: Threads }[] = [];
    const parallelTimes: { ms: number; cores: number; report: WindowSplit; threads: Threads }[][] = configs.map(() => []);
    const clock = () => ({ wall: performance.now(), cpu: process.cpuUsage() });
    const since = (t: ReturnType<typeof clock>) => {
      const ms = performance.now() - t.wall;
      const cpu = process.cpuUsage(t.cpu);
      return { ms, cores: (cpu.user + cpu.system) / 1000 / ms };
    };
    // Warm-up: the main thread's windows, and each trainer's times its workers (see warmupWindows).
    // Their CPU time is kept: a worker pays its warm-up once per start, which a short run feels.
    const cpuOf = async (n: number, run: () => Promise<unknown>) => {
      const t = clock();
      for (let rep = 0; rep < n; rep++) await run();
      const used = since(t);
      return { windows: n, cpuMs: used.cores * used.ms };
    };
    const singleThreadWarmup = await cpuOf(warmup, singleWindow);
    const warmups: { windows: number; cpuMs: number }[] = [];
    for (const [i, acc] of parallel.entries()) warmups.push(await cpuOf(warmup * configs[i].w, () => parallelWindow(acc)));
    for (let rep = 0; rep < windows; rep++) {
      let threads = threadCpuMs();
      let start = clock();
      await singleWindow();
      singleTimes.push({ ...since(start), clock: singleClock, threads: threadCpuSince(threads) });
      for (const [i, acc] of parallel.entries()) {
        threads = threadCpuMs();
        start = clock();
        const report = await parallelWindow(acc);
        parallelTimes[i].push({ ...since(start), report, threads: threadCpuSince(threads) });
      }
    }
    const singleSorted = [...singleTimes].sort((a, b) => a.ms - b.ms);
    const { ms: singleThreadMs, cores: singleThreadCoresUsed, clock: singleMedian, threads: singleThreads } = singleSorted[Math.floor(singleSorted.length / 2)];
    const singleThreadPerMicroBatch = { cpuMs: singleMedian.cpuMs / steps, runQueueMs: singleMedian.runQueueMs / steps };
    const results = configs.map((c, i): ParallelWindowTiming => {
      const sorted = [...parallelTimes[i]].sort((a, b) => a.ms - b.ms);
      const { ms, cores, report, threads } = sorted[Math.floor(sorted.length / 2)];
      return {
        workers: c.w,
        sync: c.sync,
        windowMs: ms,
        speedup: singleThreadMs / ms,
        coresUsed: cores,
        cpuMs: cores * ms,
        split: {
          computeMs: report.computeMs,
          transferMs: report.transferMs,
          updateMs: report.updateMs,
          otherMs: Math.max(0, ms - report.computeMs - report.transferMs - report.updateMs),
        },
        bytes: { ...report.bytes, total: report.bytes.microBatches + report.bytes.gradients + report.bytes.weights },
        mainThread: report.mainThread,
        cost: costOf(threads, trainerThreads[i], report.workers),
        warmup: warmups[i],
        inWorker: busiestWorker(report.workers, singleThreadMs / steps, singleThreadPerMicroBatch.cpuMs),
      };
    });
    const parameters = single.trainableWeights.reduce((n, w) => n + w.shape.reduce((a, b) => (a as number) * (b as number), 1)!, 0);
    return { accumulationSteps: steps, microBatchSize: size, parameters, singleThreadMs, singleThreadCoresUsed, singleThreadCpuMs: singleThreadMs * singleThreadCoresUsed, singleThreadPerMicroBatch, singleThreadCost: costOf(singleThreads, new Set(), null), singleThreadWarmup, parallel: results };
  } finally {
    await Promise.all(parallel.map((p) => p.dispose()));
    singleRun.dispose();
    for (const m of [single, ...models]) m.dispose();
  }
}

/** The worker with the most compute in a window, with its per-micro-batch compute against the single thread's. */
function busiestWorker(workers: WorkerTiming[], singlePerMicroBatchMs: number, singleCpuPerMicroBatchMs: number): ParallelWindowTiming['inWorker'] {
  const w = workers.reduce((a, b) => (b.computeMs > a.computeMs ? b : a));
  const perMicroBatchMs = w.computeMs / Math.max(1, w.microBatches);
  const cpuPerMicroBatchMs = w.cpuMs / Math.max(1, w.microBatches);
  return { ...w, perMicroBatchMs, computeInflation: perMicroBatchMs / singlePerMicroBatchMs, cpuPerMicroBatchMs, cpuInflation: singleCpuPerMicroBatchMs > 0 ? cpuPerMicroBatchMs / singleCpuPerMicroBatchMs : 0 };
}

/** Each thread's CPU time so far, ms, by thread id (Linux; null where /proc is missing). */
function threadCpuMs(): Map<string, number> | null {
  const ns = taskCpuNs();
  return ns && new Map([...ns].map(([tid, t]) => [tid, t / 1e6]));
}

/** Each thread's CPU ms since `before` (a thread started since counts from 0). */
function threadCpuSince(before: Map<string, number> | null): Map<string, number> | null {
  const after = threadCpuMs();
  if (before === null || after === null) return null;
  return new Map([...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)]));
}

/**
 * A window's CPU time by part (see {@link WorkerCost}): the main thread is the one whose id is
 * the process's, the workers' threads are `workerThreads`, every other thread is "other".
 * `workers` null: the single thread, whose main thread does all the training.
 */
function costOf(threads: Map<string, number> | null, workerThreads: Set<string>, workers: WorkerTiming[] | null): WorkerCost | null {
  if (threads === null) return null;
  let main = 0;
  let own = 0;
  let other = 0;
  for (const [tid, ms] of threads) {
    if (tid === String(process.pid)) main += ms;
    else if (workerThreads.has(tid)) own += ms;
    else other += ms;
  }
  if (workers === null) return { microStepMs: main, copiesMs: 0, messagesMs: 0, mainThreadMs: 0, otherThreadsMs: other, totalMs: main + other };
  const microStepMs = workers.reduce((sum, w) => sum + w.cpuMs, 0);
  const copiesMs = workers.reduce((sum, w) => sum + w.unpackMs + w.packMs, 0);
  // The copies are wall time measured inside the worker: on a loaded machine they can include a wait, hence the floor.
  return { microStepMs, copiesMs, messagesMs: Math.max(0, own - microStepMs - copiesMs), mainThreadMs: main, otherThreadsMs: other, totalMs: main + own + other };
}
