/**
 * Where the time of a native window row goes when its every-core target is missed (issue 26,
 * "Where a target is missed"): the winning option of "Every core: which wins", taken apart.
 *
 * - **A worker option** (ParallelAccumulator): the window, from the library's own round report
 *   (median over the timed windows): the busiest worker's compute, then what the main thread does
 *   alone (adding the sums, the update, sending the weights), and the rest (messages, waiting).
 *   Then a worker's micro-batch, timed part by part with benchNative's `nativeBreakdown` in bench
 *   worker threads running the core's micro-step (breakdownWorker.ts): once alone, once as many
 *   at once as the option has workers, so that what the other cores cost each part shows.
 * - **A main-thread option** (one thread, or the BLAS at every core): the window profiled with
 *   `nativeBreakdown` at that option's BLAS threads.
 */
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import type { RoundReport, TransferableTensor } from '../../src/parallel/index';
import { median } from '../../src/tutorial/index';
import type { StepBreakdown } from './benchNative';
import type { BreakdownWorkerData } from './breakdownWorker';
import { fmt } from './benchReport';

/** A tensor's values and shape, copied out for a worker. */
export function packed(t: tf.Tensor): TransferableTensor {
  return { values: Float32Array.from(t.dataSync() as Float32Array), shape: [...t.shape] };
}

/** The library's round report of a worker option, medians over its timed windows (ms per window). */
export interface RoundMedians {
  windows: number;
  /** Compute of the busiest worker (the one with the most compute in that window). */
  computeMs: number;
  /** That worker's CPU time while computing, and its time waiting for a core. */
  workerCpuMs: number;
  runQueueMs: number;
  /** On the main thread alone: adding the workers' sums into the core's window, the update, sending weights. */
  reduceMs: number;
  updateMs: number;
  broadcastMs: number;
}

/** Medians of `rounds` (one report per window). */
export function roundMedians(rounds: RoundReport[]): RoundMedians | null {
  if (rounds.length === 0) return null;
  const busiest = rounds.map((r) => r.workers[r.timing.computeMs.indexOf(Math.max(...r.timing.computeMs))]);
  return {
    windows: rounds.length,
    computeMs: median(rounds.map((r) => Math.max(...r.timing.computeMs))),
    workerCpuMs: median(busiest.map((w) => w.cpuMs)),
    runQueueMs: median(busiest.map((w) => w.runQueueMs)),
    reduceMs: median(rounds.map((r) => r.timing.reduceMs)),
    updateMs: median(rounds.map((r) => r.timing.updateMs)),
    broadcastMs: median(rounds.map((r) => r.timing.broadcastMs)),
  };
}

/** Options of {@link profileWorkers}. */
export interface ProfileWorkersArgs {
  model: tf.LayersModel;
  /** The micro-batches a worker computes, in turn. */
  microBatches: { xs: TransferableTensor; ys: TransferableTensor }[];
  loss: BreakdownWorkerData['loss'];
  /** Bench workers timed at once (the option's workers). */
  workers: number;
  /** Profiled micro-batches per worker, after `warmup` untimed ones. */
  calls: number;
  warmup: number;
}

/** A worker's micro-batch profiled alone, and with `workers` profiled at once (one breakdown each). */
export interface WorkerProfiles {
  alone: StepBreakdown;
  together: StepBreakdown[];
}

/** Runs `count` bench workers at once and returns their breakdowns. */
async function runWorkers(args: ProfileWorkersArgs, count: number): Promise<StepBreakdown[]> {
  const barrier = new SharedArrayBuffer(12);
  new Int32Array(barrier)[0] = count;
  const weights = args.model.weights.map((w) => packed(w.read()));
  const script = join(__dirname, 'breakdownWorker.ts');
  const runs = Array.from({ length: count }, () => {
    const data: BreakdownWorkerData = {
      modelTopology: args.model.toJSON(null, false) as object,
      weights,
      loss: args.loss,
      microBatches: args.microBatches,
      warmup: args.warmup,
      calls: args.calls,
      barrier,
    };
    const worker = new Worker(`require('tsx/cjs'); require(${JSON.stringify(script)});`, { eval: true, workerData: data, execArgv: [] });
    return new Promise<StepBreakdown>((resolve, reject) => {
      worker.once('message', (m: StepBreakdown | { error: string } | null) => {
        void worker.terminate();
        if (m === null) reject(new Error('bench breakdown worker: the native addon is not available'));
        else if ('error' in m) reject(new Error(`bench breakdown worker: ${m.error}`));
        else resolve(m);
      });
      worker.once('error', reject);
    });
  });
  return Promise.all(runs);
}

/** Profiles the workers' micro-batch alone, then `args.workers` at once. */
export async function profileWorkers(args: ProfileWorkersArgs): Promise<WorkerProfiles> {
  const [alone] = await runWorkers(args, 1);
  const together = await runWorkers(args, args.workers);
  return { alone, together };
}

/** One row's every-core breakdown, as the report keeps it. */
export interface EveryCoreBreakdown {
  id: string;
  label: string;
  /** The winning option's label, its median window ms, and PyTorch's at every core. */
  option: string;
  windowMs: number;
  torchMs: number;
  target: number;
  /** For a worker option: its round medians and the profiled micro-batches. */
  round?: RoundMedians;
  workers?: WorkerProfiles;
  /** Micro-batches per worker in a window (the window's size over the workers). */
  perWorker?: number;
  /** For a main-thread option: the window profiled at its BLAS threads. */
  window?: StepBreakdown;
}

const share = (ms: number, of: number): string => `${fmt(ms)} (${((100 * ms) / of).toFixed(0)}%)`;

/** The parts of a breakdown, as cells: ms without and with the kernel timers, then BLAS, other products, elementwise, dispatch as shares of the latter. */
function parts(b: StepBreakdown): string {
  return `${fmt(b.rowMs)} | ${fmt(b.wallMs)} | ${share(b.blasMs, b.wallMs)} | ${share(b.copiesMs, b.wallMs)} | ${share(b.elementwiseMs, b.wallMs)} | ${share(b.dispatchMs, b.wallMs)}`;
}

/** Means of several breakdowns, part by part. */
export function meanBreakdown(bs: StepBreakdown[]): StepBreakdown {
  const mean = (f: (b: StepBreakdown) => number) => bs.reduce((s, b) => s + f(b), 0) / bs.length;
  return { wallMs: mean((b) => b.wallMs), rowMs: mean((b) => b.rowMs), blasMs: mean((b) => b.blasMs), copiesMs: mean((b) => b.copiesMs), elementwiseMs: mean((b) => b.elementwiseMs), dispatchMs: mean((b) => b.dispatchMs), topKernels: bs[0]?.topKernels ?? [] };
}

/** The tables of every row's every-core breakdown; empty when no every-core target was missed. */
export function everyCoreBreakdownTable(report: { everyCoreBreakdowns?: EveryCoreBreakdown[] }): string[] {
  const lines: string[] = [];
  for (const b of report.everyCoreBreakdowns ?? []) {
    const gap = b.windowMs - b.target * b.torchMs;
    lines.push(
      '',
      `Every core, where the time goes: ${b.label}. The winning option, ${b.option}, takes ${fmt(b.windowMs)} ms per window against PyTorch's ${fmt(b.torchMs)} at every core`,
      `(${fmt(b.windowMs / b.torchMs)} x; the target ≤ ${b.target} x needs ${fmt(gap)} ms less).`,
    );
    if (b.round && b.workers && b.perWorker !== undefined) {
      const r = b.round;
      const mainMs = r.reduceMs + r.updateMs + r.broadcastMs;
      const rest = Math.max(0, b.windowMs - r.computeMs - mainMs);
      lines.push(
        `The window, from the library's round report (median of ${r.windows} windows): the busiest worker computes ${b.perWorker} micro-batches; then the main thread alone adds the sums,`,
        'updates and sends the weights; the rest is messages and waiting (the window median minus both).',
        '',
        "| window ms | busiest worker's compute | its CPU, waiting for a core | main thread: add sums | update | send weights | messages and waiting |",
        '|---|---|---|---|---|---|---|',
        `| ${fmt(b.windowMs)} | ${share(r.computeMs, b.windowMs)} | ${fmt(r.workerCpuMs)}, ${fmt(r.runQueueMs)} | ${share(r.reduceMs, b.windowMs)} | ${share(r.updateMs, b.windowMs)} | ${share(r.broadcastMs, b.windowMs)} | ${share(rest, b.windowMs)} |`,
        '',
        "A worker's micro-batch: the core's micro-step (GradientAccumulator.step, whose microBatchGradients and addChecked a worker runs per micro-batch) on a",
        'model rebuilt from its JSON in bench worker threads, alone and as many at once as the option has workers,',
        'timed, then timed again with every kernel timed by name (ms; shares of the latter). BLAS: inside cblas_sgemm; other products: im2col, col2im, copies;',
        "elementwise: every other kernel; dispatch: the rest, tfjs's engine and JS between ops.",
        '',
        '| run | ms | ms, kernels timed | BLAS | other products | elementwise | dispatch |',
        '|---|---|---|---|---|---|---|',
        `| one worker alone | ${parts(b.workers.alone)} |`,
        `| ${b.workers.together.length} workers at once (mean) | ${parts(meanBreakdown(b.workers.together))} |`,
      );
      const { alone } = b.workers;
      const together = meanBreakdown(b.workers.together);
      const stretch = (f: (x: StepBreakdown) => number) => fmt(f(together) / Math.max(1e-9, f(alone)));
      lines.push(
        '',
        `With ${b.workers.together.length} at once a micro-batch takes ${stretch((x) => x.wallMs)} x its time alone: BLAS ${stretch((x) => x.blasMs)} x, other products ${stretch((x) => x.copiesMs)} x, ` +
          `elementwise ${stretch((x) => x.elementwiseMs)} x, dispatch ${stretch((x) => x.dispatchMs)} x.`,
      );
    } else if (b.window) {
      lines.push('', '| the window | ms | ms, kernels timed | BLAS | other products | elementwise | dispatch |', '|---|---|---|---|---|---|---|', `| ${b.option} | ${parts(b.window)} |`);
    }
  }
  return lines;
}
