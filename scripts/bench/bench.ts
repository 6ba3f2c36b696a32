/**
 * Training speed of tfjs with this project's kernels next to PyTorch, at equal threads.
 *
 *     npm run bench             # installs the PyTorch peer if missing, then a few minutes
 *     npm run bench -- --quick  # smoke run: short timings, SimpleNet and the MLP only
 *     npm run bench -- --every-core-only  # only the native window rows and the parallel bench (the CNN by default)
 *
 * Length: about 620 lines, because it is one straight-through program (config, rows, timing in turns, main);
 * the command line is in benchArgs, the models and their data in benchModels;
 * the peer, the thread readings, the native path's peak and breakdown, the every-core options, the
 * one-thread core and the report tables are already in benchPeer/benchThreads/benchNative/everyCore/corePin/benchReport.
 *
 * What it measures (docs/benchmark.md explains each choice):
 * 1. Head to head, on each path (wasm + kernels; native, the cpu backend with its products in
 *    the system CBLAS, when its addon is built): each row (a plain SGD step, or an accumulation
 *    window) timed in rounds that alternate ours with PyTorch pinned to one thread and PyTorch at
 *    every core, so both see the same load; the native path runs at one thread and at every core. Wall-clock median, min and max per call; the threads that
 *    were busy on each side during the timing, read from /proc (the pinning, verified). Native
 *    windows also time the parallel trainer's workers, and workers x BLAS threads where the cores
 *    allow, in the same rounds, and the bench names which way of using every core wins (everyCore.ts).
 * 2. A roofline: useful GFLOP/s of each row (src/tutorial/measure.ts, stepFlops counts them), against the
 *    peak of a wasm SIMD multiply-add loop on this machine, PyTorch's GEMM peak and the addon's.
 *    For native rows that miss their target, where the step's time goes (benchNative.ts).
 * 3. The other backends (cpu + kernels, stock wasm and cpu, tfjs-node when it loads): step times.
 * 4. Accumulation's own cost and memory on the fast backends (measureAccumulation, src/tutorial/measure.ts),
 *    and its overhead read directly: the window against its parts by hand, beside PyTorch's same ratio.
 * Output: markdown on stdout, JSON in build/bench/bench.json.
 *
 * To add a row (e.g. a multi-core trainer), append a {@link BenchRow} to `rows()`: its `allCores`
 * contender is timed beside PyTorch at every core.
 */
import * as tf from '@tensorflow/tfjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { GradientAccumulator } from '../../src/index';
import { BackendPreference, describeEnvironment, loadNativeBlas, measureNativeGemmPeak, measureSimdPeak, selectBackend, setNativeThreads, SimdPeak } from '../../src/backend/index';
import { measureAccumulation, median, stepFlops, timeCall } from '../../src/tutorial/index';
import { BenchArgs, BenchArgsError, ModelName, parseBenchArgs } from './benchArgs';
import { batchOf, buildModel, flopsOf, lossFn, lossOf, MODEL_LABEL, trainable } from './benchModels';
import { PartsRatio, PeerCase, TorchPeer } from './benchPeer';
import { accumulationTable, backendTable, overheadTable, headToHeadTable, OtherEntry, Refusal, Report, rooflineTable, Stats } from './benchReport';
import { benchParallel } from './benchParallel';
import { breakdownTable, nativeBreakdown, StepBreakdown } from './benchNative';
import { busiestThreadNs, busyThreads, cpuPerWall, taskCpuNs } from './benchThreads';
import { coreSpeeds, onCore, pinOneThreadSides, Pinning, pinningLine } from './corePin';
import type { Contender } from './contender';
import { coresGiven, coresGivenLine, everyCoreEntrants, everyCoreTable, rowOptions, winner } from './everyCore';
import { EveryCoreBreakdown, everyCoreBreakdownTable, packed, profileWorkers } from './everyCoreBreakdown';

/** The command line (benchArgs.ts); a bad option stops the run before anything is timed. */
const ARGS: BenchArgs = (() => {
  try {
    return parseBenchArgs(process.argv.slice(2), loadNativeBlas().available);
  } catch (e) {
    if (!(e instanceof BenchArgsError)) throw e;
    console.error(`${e.name}: ${e.message}`);
    process.exit(2);
  }
})();
const quick = ARGS.quick;
const onlyModels = ARGS.models;
const onlyBackends = ARGS.backends;
const onlyPaths = ARGS.paths;
/** `--every-core-only`: the native window rows and the parallel bench, nothing else; the CNN's rows unless --models says otherwise. */
const everyCoreOnly = ARGS.everyCoreOnly;

/** A head-to-head path: what ours runs on, and whether it has an every-core contender. */
interface Path {
  id: 'wasm' | 'native';
  label: string;
  preference: BackendPreference;
  /** Threads of its every-core contender (null: one thread only). */
  allThreads: number | null;
}
const CONFIG = {
  /** Where the JSON goes. */
  out: process.env.BENCH_OUT ?? join(__dirname, '..', '..', 'build', 'bench', 'bench.json'),
  /** Seconds of timed calls per contender and row, split over `rounds`. */
  seconds: quick ? 0.3 : 2.5,
  /** Rounds in which ours and each PyTorch take turns. */
  rounds: ARGS.rounds ?? (quick ? 2 : 5),
  /** Warm-up calls before the first round (V8, XNNPACK and PyTorch's allocator prepare on first calls). */
  warmup: quick ? 1 : 5,
  /** Seconds of untimed windows of a worker option once its workers start: V8 optimizes their code for seconds (everyCore.ts). */
  workerWarmupSeconds: quick ? 0 : 6,
  /** Seconds of timing per step on the other backends. */
  backendSeconds: quick ? 0.15 : 1.0,
  /** A step slower than this (ms) is timed once after one warm-up (the stock cpu CNN). */
  slowStepMs: 1500,
  accumulationSteps: 4,
  microBatchSize: 16,
  /** Plain steps: model and batch. */
  steps: ((quick ? [['simpleNet', 64], ['mlp', 64]] : [['simpleNet', 64], ['mlp', 64], ['cnn', 16], ['cnn', 64]]) as [ModelName, number][]).filter(([m]) => !everyCoreOnly && (!onlyModels || onlyModels.includes(m))),
  /** Models whose accumulation window (4 x 16) is a row and is measured for cost and memory. */
  windowModels: everyCoreOnly && !onlyModels ? (['cnn'] as ModelName[]) : ((quick ? ['simpleNet', 'mlp'] : ['mlp', 'cnn']) as ModelName[]).filter((m) => !onlyModels || onlyModels.includes(m)),
  /**
   * Targets, ours / PyTorch at equal threads, per row id: issue 11's for wasm at one thread,
   * issue 26's for native at one thread (`ratio`) and at every core (`ratioAll`), issue 35's for
   * the native windows at one thread; and issue 35's bookkeeping shares, per model on every backend.
   */
  targets: {
    ratio: {
      'mlp-64': 2.5,
      'cnn-16': 1.6,
      'cnn-64': 1.3,
      'mlp-64-native': 1.5,
      'cnn-16-native': 1.5,
      'cnn-64-native': 1.2,
      'mlp-window-4x16-native': 1.6,
      'cnn-window-4x16-native': 1.15,
    } as Record<string, number>,
    ratioAll: { 'mlp-64-native': 1.3, 'cnn-window-4x16-native': 1.3 } as Record<string, number>,
    bookkeepingShare: { mlp: 0.03, cnn: 0.01 } as Record<string, number>,
    /** Issue 35: a window at most this many times its parts by hand (window / parts), every model and backend. */
    partsRatio: 1.05,
  },
  torch: ARGS.torch,
  /** Issue 14's row: a CNN window of 8 x 16 on 2 workers against one thread (scripts/bench/benchParallel.ts); needs the CNN. */
  parallel: ARGS.parallel && !quick && (!onlyModels || onlyModels.includes('cnn')),
  python: '/usr/bin/python3',
  /** The paths of the head-to-head rows, each row once per path. */
  paths: ([
    { id: 'wasm', label: 'wasm + kernels', preference: 'wasm', allThreads: null },
    { id: 'native', label: 'native (CBLAS)', preference: 'native', allThreads: cpus().length },
  ] as Path[]).filter((p) => (!onlyPaths || onlyPaths.includes(p.id)) && (p.id !== 'native' || loadNativeBlas().available) && (!everyCoreOnly || p.id === 'native')),
  /** Step times only; the stock ones are slow. */
  otherBackends: [
    { label: 'tfjs-node', preference: 'tensorflow', full: true },
    { label: 'cpu + kernels', preference: 'cpu', full: true },
    // The native products on the cpu backend instead of wasm: what the rest of a step costs there.
    ...(loadNativeBlas().available ? [{ label: 'native-cpu (CBLAS on cpu)', preference: 'native-cpu', full: true }] : []),
    { label: 'wasm (stock)', preference: 'wasm-stock', full: false },
    { label: 'cpu (stock)', preference: 'cpu-stock', full: false },
  ].filter((b) => !everyCoreOnly && (!onlyBackends || onlyBackends.includes(b.preference))) as { label: string; preference: BackendPreference; full: boolean }[],
  /** Matrix size of PyTorch's GEMM peak. */
  gemmSize: 512,
};

export type { Contender };

/** One line of the head-to-head tables. */
export interface BenchRow {
  id: string;
  label: string;
  /** Useful FLOPs of one call (see src/tutorial/measure.ts, stepFlops). */
  flops: number;
  /** What PyTorch runs for the same call. */
  peer: PeerCase;
  /** Ours on one thread. */
  oneThread(): Promise<Contender>;
  /** Ours at every core; left out while ours has no multi-core path (the table then says so). */
  allCores?(): Promise<Contender>;
  /** More of ours timed in the same rounds, or refused with the reason (the native windows' worker options, everyCore.ts). */
  others?(): Promise<(Contender | Refusal)[]>;
}

/** Activates a path's backend (idempotent) at `threads` BLAS threads for native. */
async function usePath(path: Path, threads: number): Promise<void> {
  await selectBackend(path.preference, { strict: true, nativeThreads: threads, onNotice: (m) => console.error(m) });
}

/** The label of ours on a path at `threads`. */
const pathLabel = (path: Path, threads: number): string => (path.id === 'native' ? `${path.label}, ${threads} thread${threads === 1 ? '' : 's'}` : path.label);

/** Before each call: the BLAS threads of this contender (its twin at the other count shares the backend). */
const threadsFor = (path: Path, threads: number) => (path.id === 'native' ? () => setNativeThreads(threads) : () => {});

/** The function of one plain SGD step: gradients, update, read the loss (as PyTorch's loss.item()). */
function stepCall(name: ModelName, model: tf.LayersModel, data: { xs: tf.Tensor; ys: tf.Tensor }, optimizer: tf.Optimizer): () => void {
  const vars = trainable(model);
  return () => {
    const { value, grads } = tf.variableGrads(lossFn(name, model, data), vars);
    optimizer.applyGradients(grads);
    tf.dispose(grads);
    value.dataSync();
    value.dispose();
  };
}

/** A plain SGD step of ours on a path. */
async function plainStep(name: ModelName, batch: number, path: Path, threads: number): Promise<Contender> {
  await usePath(path, threads);
  const model = buildModel(name);
  const data = batchOf(name, batch, 3);
  const optimizer = tf.train.sgd(0.01);
  const step = stepCall(name, model, data, optimizer);
  const setThreads = threadsFor(path, threads);
  return {
    label: pathLabel(path, threads),
    threads,
    call: () => {
      setThreads();
      step();
    },
    dispose: () => {
      tf.dispose([data.xs, data.ys]);
      optimizer.dispose();
      model.dispose();
    },
  };
}

/** A window of ours on a path: `steps` micro-steps of `micro` samples through GradientAccumulator, one update. */
async function accumulationWindow(name: ModelName, steps: number, micro: number, path: Path, threads: number): Promise<Contender> {
  await usePath(path, threads);
  const model = buildModel(name);
  const microBatches = Array.from({ length: steps }, (_, i) => batchOf(name, micro, 10 + i));
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: steps, varList: trainable(model) });
  const setThreads = threadsFor(path, threads);
  return {
    label: `${pathLabel(path, threads)}, GradientAccumulator`,
    threads,
    call: () => {
      setThreads();
      for (const m of microBatches) accumulator.step(lossFn(name, model, m), { sampleCount: micro });
    },
    dispose: () => {
      accumulator.dispose();
      tf.dispose(microBatches.flatMap((m) => [m.xs, m.ys]));
      model.dispose();
    },
  };
}

/** The head-to-head rows, once per path (native rows' ids end in "-native"). Append here to compare more. */
function rows(): BenchRow[] {
  const { accumulationSteps: k, microBatchSize: b } = CONFIG;
  return CONFIG.paths.flatMap((path) => {
    const suffix = path.id === 'wasm' ? '' : `-${path.id}`;
    const all = path.allThreads;
    return [
      ...CONFIG.steps.map(([name, batch]): BenchRow => ({
        id: `${name}-${batch}${suffix}`,
        label: `${MODEL_LABEL[name]}, step of ${batch}${suffix ? `, ${path.id}` : ''}`,
        flops: flopsOf(name, batch),
        peer: { kind: 'step', model: name, batch },
        oneThread: () => plainStep(name, batch, path, 1),
        allCores: all === null ? undefined : () => plainStep(name, batch, path, all),
      })),
      ...CONFIG.windowModels.map((name): BenchRow => ({
        id: `${name}-window-${k}x${b}${suffix}`,
        label: `${MODEL_LABEL[name]}, window of ${k} x ${b}${suffix ? `, ${path.id}` : ''}`,
        flops: flopsOf(name, b) * k,
        peer: { kind: 'window', model: name, steps: k, micro: b },
        oneThread: () => accumulationWindow(name, k, b, path, 1),
        allCores: all === null ? undefined : () => accumulationWindow(name, k, b, path, all),
        others: all === null ? undefined : () => everyCoreEntrants({ model: () => buildModel(name), microBatches: Array.from({ length: k }, (_, i) => batchOf(name, b, 10 + i)), loss: name === 'simpleNet' ? 'meanSquaredError' : 'softmaxCrossEntropy', cores: all, warmupSeconds: CONFIG.workerWarmupSeconds }),
      })),
    ];
  });
}

/** For each native step row that missed its one-thread target: where its time goes. */
async function breakdowns(rowsDone: Report['rows']): Promise<{ id: string; label: string; breakdown: StepBreakdown }[]> {
  const out = [];
  for (const r of rowsDone) {
    const target = CONFIG.targets.ratio[r.id];
    const step = CONFIG.steps.find(([name, batch]) => r.id === `${name}-${batch}-native`);
    if (!step || target === undefined || !r.torch1 || r.ours1.ms / r.torch1.ms <= target) continue;
    const [name, batch] = step;
    await usePath(CONFIG.paths.find((p) => p.id === 'native') as Path, 1);
    const model = buildModel(name);
    const data = batchOf(name, batch, 3);
    const optimizer = tf.train.sgd(0.01);
    try {
      const breakdown = nativeBreakdown(stepCall(name, model, data, optimizer), r.ours1.ms, quick ? 2 : 10);
      if (breakdown) out.push({ id: r.id, label: r.label, breakdown });
    } finally {
      tf.dispose([data.xs, data.ys]);
      optimizer.dispose();
      model.dispose();
    }
  }
  return out;
}

/**
 * For each native window row that missed its every-core target: its winning option taken apart
 * (everyCoreBreakdown.ts): a worker option by its round report and its workers' micro-batch
 * profiled alone and side by side, a main-thread option by profiling its window.
 */
async function everyCoreBreakdowns(rowsDone: Report['rows']): Promise<EveryCoreBreakdown[]> {
  const { accumulationSteps: k, microBatchSize: b } = CONFIG;
  const out: EveryCoreBreakdown[] = [];
  const native = CONFIG.paths.find((p) => p.id === 'native');
  for (const r of rowsDone) {
    const target = CONFIG.targets.ratioAll[r.id];
    const name = CONFIG.windowModels.find((m) => r.id === `${m}-window-${k}x${b}-native`);
    const best = r.others ? winner(rowOptions(r)) : null;
    if (!native || !name || target === undefined || !r.torchAll || !best || (best.ms as number) / r.torchAll.ms <= target) continue;
    const base = { id: r.id, label: r.label, option: best.label, windowMs: best.ms as number, torchMs: r.torchAll.ms, target };
    const entry = (r.others ?? []).find((o) => o.label === best.label);
    const calls = quick ? 3 : 20;
    // The bench workers warm up longer than the calls they time: with fewer (3), V8's background
    // compilers still ran beside two workers and a micro-batch took 1.94 x its time alone.
    if (entry && !('refused' in entry) && entry.workers && entry.round) {
      const model = buildModel(name);
      const microBatches = Array.from({ length: k }, (_, i) => batchOf(name, b, 10 + i));
      const arrays = microBatches.map((m) => ({ xs: packed(m.xs), ys: packed(m.ys) }));
      tf.dispose(microBatches.flatMap((m) => [m.xs, m.ys]));
      try {
        const workers = await profileWorkers({ model, microBatches: arrays, loss: name === 'simpleNet' ? 'meanSquaredError' : 'softmaxCrossEntropy', workers: entry.workers, calls, warmup: quick ? 3 : 400 });
        out.push({ ...base, round: entry.round, workers, perWorker: Math.ceil(k / entry.workers) });
      } finally {
        model.dispose();
      }
    } else {
      const window = await accumulationWindow(name, k, b, native, best.threads);
      try {
        const profiled = nativeBreakdown(() => void window.call(), best.ms as number, calls);
        if (profiled) out.push({ ...base, window: profiled });
      } finally {
        await window.dispose();
      }
    }
  }
  return out;
}

/** Timed calls of one contender in one round, and the threads that were busy meanwhile. */
interface Block {
  ms: number[];
  busyThreads: number | null;
  cpuPerWall: number | null;
  /** CPU ms per call of the busiest thread. */
  threadCpuMs: number | null;
  /** CPU ms per call of the whole process (worker and BLAS threads included). */
  cpuMs?: number | null;
  /** Minor page faults of the process per call. */
  faultsPerCall?: number | null;
}

async function oursBlock(contender: Contender, seconds: number, minReps: number): Promise<Block> {
  const ms: number[] = [];
  const faults = process.resourceUsage().minorPageFault;
  const before = taskCpuNs();
  const start = performance.now();
  do {
    const t = performance.now();
    await contender.call();
    ms.push(performance.now() - t);
  } while (ms.length < minReps || (performance.now() - start) / 1000 < seconds);
  const after = taskCpuNs();
  const wallNs = (performance.now() - start) * 1e6;
  const faultsPerCall = (process.resourceUsage().minorPageFault - faults) / ms.length;
  const busiest = busiestThreadNs(before, after);
  const perWall = cpuPerWall(before, after, wallNs);
  return { ms, busyThreads: busyThreads(before, after), cpuPerWall: perWall, threadCpuMs: busiest === null ? null : busiest / 1e6 / ms.length, cpuMs: perWall === null ? null : (perWall * wallNs) / 1e6 / ms.length, faultsPerCall };
}

function statsOf(blocks: Block[]): Stats {
  const ms = blocks.flatMap((b) => b.ms);
  const busy = blocks.map((b) => b.busyThreads).filter((n): n is number => n !== null);
  const cpu = blocks.map((b) => b.cpuPerWall).filter((n): n is number => n !== null);
  const threadCpu = blocks.map((b) => b.threadCpuMs).filter((n): n is number => n !== null);
  const processCpu = blocks.map((b) => b.cpuMs ?? null).filter((n): n is number => n !== null);
  const faults = blocks.map((b) => b.faultsPerCall ?? null).filter((n): n is number => n !== null);
  return {
    ms: median(ms),
    minMs: Math.min(...ms),
    maxMs: Math.max(...ms),
    calls: ms.length,
    // The most threads any round kept busy: pinning holds only if it held in every round.
    busyThreads: busy.length ? Math.max(...busy) : null,
    cpuPerWall: cpu.length ? median(cpu) : null,
    threadCpuMs: threadCpu.length ? median(threadCpu) : null,
    ...(processCpu.length ? { cpuMs: median(processCpu) } : {}),
    ...(faults.length ? { faultsPerCall: median(faults) } : {}),
  };
}

/** Where the one-thread sides run (corePin.ts); set in main before any row. */
let PINNING: Pinning = { core: null, reason: 'not set up yet' };

/** Runs `fn` with ours' main thread on the one-thread core, when there is one. */
const oneThreadCore = <T>(fn: () => Promise<T> | T): Promise<T> => (PINNING.core === null ? Promise.resolve(fn()) : onCore(PINNING.core, fn));

/** Times one row: ours and each peer take turns, round after round. */
async function runRow(row: BenchRow, peers: { one: TorchPeer | null; all: TorchPeer | null }): Promise<Report['rows'][number]> {
  const perBlock = CONFIG.seconds / CONFIG.rounds;
  const ours1 = await row.oneThread();
  const oursAll = row.allCores ? await row.allCores() : null;
  const entrants = row.others ? await row.others() : [];
  const others = entrants.filter((e): e is Contender => !('refused' in e));
  const blocks: Record<'ours1' | 'oursAll' | 'torch1' | 'torchAll', Block[]> = { ours1: [], oursAll: [], torch1: [], torchAll: [] };
  const otherBlocks: Block[][] = others.map(() => []);
  const load = [loadavg()[0]];
  try {
    for (const c of [ours1, oursAll, ...others]) for (let i = 0; c && i < CONFIG.warmup; i++) await c.call();
    for (let r = 0; r < CONFIG.rounds; r++) {
      blocks.ours1.push(await oneThreadCore(() => oursBlock(ours1, perBlock, 1)));
      if (peers.one) blocks.torch1.push(await peers.one.time(row.peer, perBlock, r === 0 ? CONFIG.warmup : 0));
      if (oursAll) blocks.oursAll.push(await oursBlock(oursAll, perBlock, 1));
      for (const [i, c] of others.entries()) otherBlocks[i].push(await oursBlock(c, perBlock, 1));
      if (peers.all) blocks.torchAll.push(await peers.all.time(row.peer, perBlock, r === 0 ? CONFIG.warmup : 0));
    }
  } finally {
    await ours1.dispose();
    await oursAll?.dispose();
    for (const c of others) await c.dispose();
  }
  load.push(loadavg()[0]);
  const stats = (b: Block[]) => (b.length ? statsOf(b) : null);
  return {
    id: row.id,
    label: row.label,
    flops: row.flops,
    ours1: { label: ours1.label, threads: ours1.threads, ...statsOf(blocks.ours1) },
    oursAll: oursAll ? { label: oursAll.label, threads: oursAll.threads, ...statsOf(blocks.oursAll) } : null,
    ...(row.others ? { others: entrants.map((e): OtherEntry => ('refused' in e ? e : { label: e.label, threads: e.threads, ...statsOf(otherBlocks[others.indexOf(e)]), ...(e.workers ? { workers: e.workers, warmupCurve: e.warmupCurve, round: e.rounds?.() ?? null } : {}) })) } : {}),
    torch1: stats(blocks.torch1),
    torchAll: stats(blocks.torchAll),
    loadAverage: load,
  };
}

async function startPeers(): Promise<{ one: TorchPeer | null; all: TorchPeer | null; note: string }> {
  if (!CONFIG.torch) return { one: null, all: null, note: 'disabled by --no-torch' };
  try {
    const one = await TorchPeer.start(CONFIG.python, 1);
    if (!one.hello.available) {
      one.close();
      return { one: null, all: null, note: one.hello.reason ?? 'unavailable' };
    }
    return { one, all: await TorchPeer.start(CONFIG.python, cpus().length), note: '' };
  } catch (e) {
    return { one: null, all: null, note: `${CONFIG.python} failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Step times of ours on another backend (no peer: the head-to-head rows hold the comparison). */
function backendSteps(label: string, full: boolean): Report['backends'] {
  return CONFIG.steps.map(([name, batch]) => {
    const model = buildModel(name);
    const data = batchOf(name, batch, 3);
    const optimizer = tf.train.sgd(0.01);
    const vars = trainable(model);
    try {
      const before = taskCpuNs();
      const start = performance.now();
      const t = timeCall(
        () => {
          const { value, grads } = tf.variableGrads(lossFn(name, model, data), vars);
          optimizer.applyGradients(grads);
          tf.dispose(grads);
          value.dataSync();
          value.dispose();
        },
        { seconds: full ? CONFIG.backendSeconds : 0, warmup: full ? CONFIG.warmup : 1, warmupSeconds: full ? 0.3 : 0, minReps: full ? 3 : 1, slowCallMs: CONFIG.slowStepMs },
      );
      const after = taskCpuNs();
      const wallNs = (performance.now() - start) * 1e6;
      return {
        backend: label,
        id: `${name}-${batch}`,
        flops: stepFlops(model, batch).trainingFlops,
        ms: t.ms,
        minMs: t.minMs,
        maxMs: t.maxMs,
        calls: t.reps,
        busyThreads: busyThreads(before, after),
        cpuPerWall: cpuPerWall(before, after, wallNs),
      };
    } catch (e) {
      return { backend: label, id: `${name}-${batch}`, flops: 0, ms: null, error: (e instanceof Error ? e.message : String(e)).split('\n')[0] };
    } finally {
      tf.dispose([data.xs, data.ys]);
      optimizer.dispose();
      model.dispose();
    }
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadStart = loadavg();
  const peers = await startPeers();
  PINNING = await pinOneThreadSides(peers.one?.pid ?? null);
  const report: Report = {
    date: new Date().toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    quick,
    everyCoreOnly,
    config: CONFIG,
    cpus: { count: cpus().length, model: cpus()[0]?.model ?? 'unknown' },
    loadAverage: { start: loadStart, end: [] },
    torch: peers.one ? { one: peers.one.hello, all: peers.all?.hello ?? null } : { unavailable: peers.note },
    pinning: PINNING,
    environments: {},
    rows: [],
    roofline: { wasmSimd: null, torchGemm: null, nativeGemm: null },
    breakdowns: [],
    backends: [],
    accumulation: [],
  };
  try {
    for (const path of CONFIG.paths) {
      report.environments[path.label] = describeEnvironment(await selectBackend(path.preference, { strict: true, onNotice: (m) => console.error(m) }));
    }
    if (!loadNativeBlas().available) report.environments['native (CBLAS)'] = `not run: the native addon ${(loadNativeBlas() as { reason: string }).reason}`;
    for (const row of rows()) {
      console.error(`bench: ${row.label}`);
      report.rows.push(await runRow(row, peers));
    }
    report.coresGiven = coresGiven(report);
    if (!everyCoreOnly) await afterRows(report, peers);
  } finally {
    peers.one?.close();
    peers.all?.close();
  }
  for (const backend of CONFIG.otherBackends) {
    const strict = backend.preference === 'tensorflow';
    const environment = await selectBackend(backend.preference, { strict, onNotice: strict ? () => {} : (m) => console.error(m) }).catch(() => null);
    if (!environment) continue; // tfjs-node does not load here
    report.environments[backend.label] = describeEnvironment(environment);
    console.error(`bench: ${backend.label}`);
    report.backends.push(...backendSteps(backend.label, backend.full));
    if (backend.full && backend.preference === 'cpu') for (const name of CONFIG.windowModels) report.accumulation.push(await accumulationCost(backend.label, name));
  }
  // Last: it switches this thread to wasm and starts worker threads of its own.
  const parallel = CONFIG.parallel ? await benchParallel({ quick, torch: CONFIG.torch }) : null;
  report.loadAverage.end = loadavg();
  if (PINNING.speeds) PINNING.speeds.endMs = await coreSpeeds(PINNING.speeds.cores);

  const head = [
    `Command: \`${report.command}\` on ${report.cpus.count} x ${report.cpus.model}, ${report.date}.`,
    `Load average (1, 5, 15 min): ${loadStart.map((l) => l.toFixed(2)).join(', ')} at start, ${report.loadAverage.end.map((l) => l.toFixed(2)).join(', ')} at end.`,
    pinningLine(PINNING, peers.one !== null),
    '',
    ...headToHeadTable(report),
  ];
  // Only the rows that use every core, and whether the machine gave them its cores.
  const everyCoreLines = [...head, '', ...everyCoreTable(report), '', coresGivenLine(report), ...(parallel ? ['', parallel.text] : [])];
  const lines = everyCoreOnly ? everyCoreLines : [
    ...head,
    '',
    ...rooflineTable(report),
    ...breakdownTable(report),
    '',
    ...everyCoreTable(report),
    ...(report.rows.some((r) => r.others) ? ['', coresGivenLine(report)] : []),
    ...everyCoreBreakdownTable(report),
    '',
    ...accumulationTable(report),
    '',
    ...overheadTable(report),
    '',
    ...backendTable(report),
    ...(parallel ? ['', parallel.text] : []),
  ];
  console.log(lines.join('\n'));
  mkdirSync(dirname(CONFIG.out), { recursive: true });
  writeFileSync(CONFIG.out, JSON.stringify({ ...report, parallel: parallel?.json ?? null, seconds: (Date.now() - started) / 1000 }, null, 2));
  console.error(`bench: wrote ${CONFIG.out} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** What follows the head-to-head rows while the peers run: the roofline, the breakdowns, the accumulation's cost and overhead. */
async function afterRows(report: Report, peers: { one: TorchPeer | null; all: TorchPeer | null }): Promise<void> {
  const peak: SimdPeak | null = measureSimdPeak({ runs: quick ? 10 : 60 });
  report.roofline.wasmSimd = peak;
  if (peers.one) {
    const seconds = quick ? 0.2 : 1;
    const one = await peers.one.gemm(CONFIG.gemmSize, seconds);
    const all = peers.all ? await peers.all.gemm(CONFIG.gemmSize, seconds) : null;
    report.roofline.torchGemm = { size: CONFIG.gemmSize, one: Math.max(...one.gflops), all: all ? Math.max(...all.gflops) : null, busyThreads: { one: one.busyThreads, all: all?.busyThreads ?? null } };
  }
  if (CONFIG.paths.some((p) => p.id === 'native')) {
    const seconds = quick ? 0.2 : 1;
    const one = measureNativeGemmPeak({ size: CONFIG.gemmSize, seconds, threads: 1 });
    const all = measureNativeGemmPeak({ size: CONFIG.gemmSize, seconds, threads: 'all' });
    if (one) report.roofline.nativeGemm = { size: CONFIG.gemmSize, one: one.gflops, all: all?.gflops ?? null, threads: { one: one.threads, all: all?.threads ?? null } };
    report.breakdowns = await breakdowns(report.rows);
    report.everyCoreBreakdowns = await everyCoreBreakdowns(report.rows);
  }
  // PyTorch's window against its parts once per model: its ratio does not depend on our backend.
  if (peers.one) {
    const { accumulationSteps: k, microBatchSize: b } = CONFIG;
    for (const name of CONFIG.windowModels) torchParts.set(name, await peers.one.windowOverParts(name, k, b, CONFIG.seconds, CONFIG.rounds, CONFIG.warmup));
  }
  for (const path of CONFIG.paths) {
    await usePath(path, 1);
    for (const name of CONFIG.windowModels) {
      console.error(`bench: accumulation cost of ${name} on ${path.label}`);
      report.accumulation.push(await oneThreadCore(() => accumulationCost(path.label, name)));
    }
  }
}

/** PyTorch's window against its parts, per window model, when the peer runs (see main). */
const torchParts = new Map<ModelName, PartsRatio>();

/** The accumulator's own cost, its overhead over its parts by hand and the window's memory (src/tutorial/measure.ts), on the active backend. */
async function accumulationCost(backend: string, name: ModelName): Promise<Report['accumulation'][number]> {
  const { accumulationSteps: k, microBatchSize: b } = CONFIG;
  const model = buildModel(name);
  const microBatches = Array.from({ length: k }, (_, i) => batchOf(name, b, 10 + i));
  const batch = batchOf(name, k * b, 20);
  try {
    const m = await measureAccumulation({
      model,
      loss: lossOf(name),
      microBatches,
      batch,
      timing: { seconds: quick ? 0.3 : 1.5, warmup: CONFIG.warmup, warmupSeconds: 0.3, slowCallMs: CONFIG.slowStepMs },
    });
    const { window, step, parts, ...rest } = m;
    return { backend, model: name, ...rest, windowSpread: [window.minMs, window.maxMs], stepSpread: [step.minMs, step.maxMs], partsSpread: [parts.minMs, parts.maxMs], torchParts: torchParts.get(name) ?? null };
  } finally {
    tf.dispose([...microBatches.flatMap((d) => [d.xs, d.ys]), batch.xs, batch.ys]);
    model.dispose();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
