import * as tf from '@tensorflow/tfjs';
import type { MicroBatch } from './data/synthetic';
import { argumentError, isPositiveFinite } from '../core/errors';
import { GradientAccumulator } from '../core/gradientAccumulator';

/**
 * Measuring what accumulation costs: time, bookkeeping and peak memory of a window of
 * micro-batches against one step on the whole batch. Used by `npm run bench` and by the
 * "Memory and speed" notebook, so both report the same quantities the same way.
 */

/** Options of {@link timeCall} and {@link timeCalls}. */
export interface TimeCallArgs {
  /** Seconds of timed calls after the warm-up (per function, for {@link timeCalls}). Default 1. */
  seconds?: number;
  /** Warm-up calls before timing (V8 and XNNPACK prepare on first calls). Default 3. */
  warmup?: number;
  /** Also keep warming up until this many seconds have passed. Default 0.5. */
  warmupSeconds?: number;
  /** Fewest timed calls. Default 3. */
  minReps?: number;
  /** A call slower than this (ms) in the warm-up is timed only once. Default 1,500. */
  slowCallMs?: number;
  /** {@link timeCalls} only: rounds in which the functions take turns. Default 5. */
  rounds?: number;
  /** The clock, ms. Default `performance.now`; a test passes one that only the timed functions move. */
  now?: () => number;
}

/** The result of {@link timeCall}: wall-clock statistics over the timed calls. */
export interface Timing {
  /** Median wall-clock time per call, ms: the number to compare. */
  ms: number;
  /** Fastest call, ms. */
  minMs: number;
  /** Slowest call, ms. */
  maxMs: number;
  /** Mean wall-clock time per call, ms. */
  wallMs: number;
  /** Process CPU time per call, ms (all threads added up, so above `wallMs` when several run). */
  cpuMs: number;
  /** Timed calls. */
  reps: number;
  /** Wall-clock time of each timed call, ms, in order. */
  samples: number[];
}

/** The median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Statistics of wall-clock samples (ms) and the process CPU time they took (ms). */
export function timingOf(samples: number[], cpuMs: number): Timing {
  const total = samples.reduce((a, b) => a + b, 0);
  return { ms: median(samples), minMs: Math.min(...samples), maxMs: Math.max(...samples), wallMs: total / samples.length, cpuMs: cpuMs / samples.length, reps: samples.length, samples };
}

const clockOf = (args: TimeCallArgs): (() => number) => args.now ?? (() => performance.now());

function checkTiming(owner: string, args: TimeCallArgs): void {
  if (args.seconds !== undefined && !(typeof args.seconds === 'number' && args.seconds >= 0)) throw argumentError(owner, 'seconds', 'a number ≥ 0', args.seconds);
  if (args.rounds !== undefined && !(Number.isInteger(args.rounds) && args.rounds >= 1)) throw argumentError(owner, 'rounds', 'an integer ≥ 1', args.rounds);
}

/** Warms `fn` up; returns the duration of its last warm-up call, ms. */
function warmUp(fn: () => void, args: TimeCallArgs): number {
  const warmup = args.warmup ?? 3;
  const warmupSeconds = args.warmupSeconds ?? 0.5;
  const slowCallMs = args.slowCallMs ?? 1500;
  const now = clockOf(args);
  let last = 0;
  const warmStart = now();
  for (let i = 0; i < warmup || (now() - warmStart) / 1000 < warmupSeconds; i++) {
    const t = now();
    fn();
    last = now() - t;
    if (last > slowCallMs || warmup === 0) break;
  }
  return last;
}

/** Calls `fn` for `seconds` (and at least `minReps` times), adding each call's wall time to `samples`; returns the CPU ms used. */
function sample(fn: () => void, seconds: number, minReps: number, samples: number[], now: () => number): number {
  const start = now();
  const cpuStart = process.cpuUsage();
  let reps = 0;
  do {
    const t = now();
    fn();
    samples.push(now() - t);
    reps++;
  } while (reps < minReps || (now() - start) / 1000 < seconds);
  const cpu = process.cpuUsage(cpuStart);
  return (cpu.user + cpu.system) / 1000;
}

/**
 * Wall-clock time of `fn` after a warm-up: median, min and max over the timed calls.
 *
 * Note: the median of wall-clock times, not process CPU time. CPU time adds up every thread, so
 * it cannot compare a single-threaded tfjs with a multi-threaded BLAS; the median is what a user
 * waits for, and the spread (min, max) shows how much other processes on the machine disturbed it.
 */
export function timeCall(fn: () => void, args: TimeCallArgs = {}): Timing {
  checkTiming('timeCall', args);
  const last = warmUp(fn, args);
  const minReps = last > (args.slowCallMs ?? 1500) ? 1 : args.minReps ?? 3;
  const samples: number[] = [];
  const cpuMs = sample(fn, args.seconds ?? 1, minReps, samples, clockOf(args));
  return timingOf(samples, cpuMs);
}

/**
 * Times several functions in turns: `rounds` rounds, each giving every function
 * `seconds / rounds` of calls, so that a change of load on a shared machine falls on all of them
 * alike and their ratios stay fair. Returns one {@link Timing} per function, in order.
 */
export function timeCalls(fns: (() => void)[], args: TimeCallArgs = {}): Timing[] {
  checkTiming('timeCalls', args);
  const rounds = args.rounds ?? 5;
  const seconds = (args.seconds ?? 1) / rounds;
  const minReps = Math.max(1, Math.ceil((args.minReps ?? 3) / rounds));
  fns.forEach((fn) => warmUp(fn, args));
  const samples = fns.map(() => [] as number[]);
  const cpu = fns.map(() => 0);
  const now = clockOf(args);
  for (let r = 0; r < rounds; r++) fns.forEach((fn, i) => (cpu[i] += sample(fn, seconds, minReps, samples[i], now)));
  return fns.map((_, i) => timingOf(samples[i], cpu[i]));
}

/** Peak backend memory (bytes) that `fn` allocates above what was allocated before it ran. */
export async function peakBytesAbove(fn: () => void): Promise<number> {
  const before = tf.memory().numBytes;
  const profile = await tf.profile(() => {
    fn();
    return [];
  });
  return profile.peakBytes - before;
}

/** A batch of inputs and targets of any shape. */
type Batch = MicroBatch<tf.Tensor, tf.Tensor>;

/** Options of {@link measureAccumulation}. */
export interface MeasureAccumulationArgs {
  /** The model to train. Its weights change while it is measured. Required. */
  model: tf.LayersModel;
  /** Mean loss of a batch, `(ys, predictions) => scalar`. Required. */
  loss: (ys: tf.Tensor, predictions: tf.Tensor) => tf.Tensor;
  /** The micro-batches of one window, all of the same size. Required. */
  microBatches: Batch[];
  /** The same number of samples as one batch, for the plain step compared with. Required. */
  batch: Batch;
  /** Options of each timing. Default: those of {@link timeCalls}. */
  timing?: TimeCallArgs;
}

/** What {@link measureAccumulation} found. */
export interface AccumulationMeasurement {
  /** Median wall-clock time of one window: `accumulationSteps` micro-steps and the update, ms. */
  windowMs: number;
  /** Median wall-clock time of one plain SGD step on the whole batch, ms (timed in turns with the window). */
  stepMs: number;
  /** The window's timing: min, max and samples beside the median. */
  window: Timing;
  /** The step's timing. */
  step: Timing;
  /** windowMs / stepMs. */
  timeRatio: number;
  /**
   * Median wall-clock time of the window's parts done by hand, ms: each micro-batch's
   * `tf.variableGrads` with its loss read back, then one `optimizer.applyGradients` (timed in
   * turns with the window and the step). What a window would cost if the accumulator cost nothing.
   */
  partsMs: number;
  /** The parts' timing. */
  parts: Timing;
  /** windowMs / partsMs: 1 when the accumulator adds nothing to its parts, 1.26 when it adds 26%. */
  partsRatio: number;
  /**
   * Time per window of the accumulator's own work (adding, checking, averaging), ms: a window
   * of `addGradients` on fixed gradients minus the `applyGradients` a plain step also pays.
   */
  bookkeepingMs: number;
  /**
   * The bookkeeping's share of a window, in process CPU time: (CPU time of the adds − of the
   * applies) / CPU time of the window. Note: CPU time rather than the wall-clock medians, because
   * the window and the bookkeeping are timed at different moments and other processes on the
   * machine stretch their wall times differently; the training here runs on one thread, so the
   * CPU times of both are the work itself.
   */
  bookkeepingShare: number;
  /** Peak bytes above the baseline: of a window, of a plain step on the batch, of one on a micro-batch. */
  peakBytes: { window: number; step: number; microStep: number };
  /** peakBytes.window / peakBytes.step. */
  memoryRatio: number;
  /**
   * The ratio expected: (peak of a plain micro-batch step + 2 × parameter bytes) / peak of a
   * plain step on the whole batch. A window holds one micro-batch's activations and gradients
   * at a time, plus two parameter-sized buffers: the accumulators and the new running sums while
   * a micro-step is added in. It is an upper bound: the sums can reuse freed gradient memory.
   */
  memoryRatioTheory: number;
  /** Bytes of the trainable parameters. */
  parameterBytes: number;
}

/**
 * Measures a window of micro-batches through `GradientAccumulator` against one plain SGD step
 * on the whole batch and against the window's parts done by hand: time, bookkeeping and peak
 * memory, on the active backend.
 */
export async function measureAccumulation(args: MeasureAccumulationArgs): Promise<AccumulationMeasurement> {
  const owner = 'measureAccumulation';
  const { model, loss, microBatches, batch } = args ?? ({} as MeasureAccumulationArgs);
  if (!(model instanceof tf.LayersModel)) throw argumentError(owner, 'model', 'a tf.LayersModel', model);
  if (typeof loss !== 'function') throw argumentError(owner, 'loss', 'a function (ys, predictions) => scalar', loss);
  if (!Array.isArray(microBatches) || microBatches.length === 0) {
    throw argumentError(owner, 'microBatches', 'a non-empty array of { xs, ys }', microBatches);
  }
  const microBatchSize = microBatches[0].xs.shape[0];
  if (microBatches.some((m) => m.xs.shape[0] !== microBatchSize)) {
    throw argumentError(owner, 'microBatches', 'micro-batches of one size', microBatches.map((m) => m.xs.shape[0]));
  }
  if (!batch || batch.xs?.shape[0] !== microBatchSize * microBatches.length) {
    throw argumentError(owner, 'batch', `a batch of ${microBatchSize * microBatches.length} samples, as many as the micro-batches hold`, batch?.xs);
  }
  const timing = args.timing ?? {};
  if (timing.seconds !== undefined && !isPositiveFinite(timing.seconds)) {
    throw argumentError(owner, 'timing.seconds', 'a finite number > 0', timing.seconds);
  }

  const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
  const lossOf = (data: Batch) => () => loss(data.ys, model.apply(data.xs, { training: true }) as tf.Tensor) as tf.Scalar;
  const plainStep = (optimizer: tf.Optimizer, data: Batch) => () => {
    const { value, grads } = tf.variableGrads(lossOf(data), vars);
    optimizer.applyGradients(grads);
    tf.dispose(grads);
    value.dataSync();
    value.dispose();
  };
  const optimizer = tf.train.sgd(0.01);
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: microBatches.length, varList: vars });
  const window = () => {
    for (const m of microBatches) accumulator.step(lossOf(m), { sampleCount: microBatchSize });
  };
  // The window without the accumulator: the same gradients and one update, nothing summed.
  const parts = () => {
    microBatches.forEach((m, i) => {
      const { value, grads } = tf.variableGrads(lossOf(m), vars);
      value.dataSync();
      value.dispose();
      if (i === microBatches.length - 1) optimizer.applyGradients(grads);
      tf.dispose(grads);
    });
  };
  try {
    // In turns, so that the ratios window / step and window / parts share the machine's load.
    const [windowTime, stepTime, partsTime] = timeCalls([window, plainStep(optimizer, batch), parts], timing);

    // `step` folds the micro-batch size into the loss, so its gradients arrive weighted: time
    // addGradients without a sampleCount, as step pays it.
    const { value, grads } = tf.variableGrads(lossOf(microBatches[0]), vars);
    value.dispose();
    let bookkeepingMs: number;
    let bookkeepingCpuMs: number;
    try {
      const [adding, applying] = timeCalls(
        [
          () => {
            for (let i = 0; i < microBatches.length; i++) accumulator.addGradients(grads);
          },
          () => optimizer.applyGradients(grads),
        ],
        timing,
      );
      bookkeepingMs = Math.max(0, adding.ms - applying.ms);
      bookkeepingCpuMs = Math.max(0, adding.cpuMs - applying.cpuMs);
    } finally {
      tf.dispose(grads);
    }

    // Memory: a fresh accumulator, so that creating its buffers counts.
    const microStepPeak = await peakBytesAbove(plainStep(optimizer, microBatches[0]));
    const stepPeak = await peakBytesAbove(plainStep(optimizer, batch));
    const fresh = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: microBatches.length, varList: vars });
    const windowPeak = await peakBytesAbove(() => {
      for (const m of microBatches) fresh.step(lossOf(m), { sampleCount: microBatchSize });
    });
    fresh.dispose();
    const parameterBytes = vars.reduce((s, v) => s + v.size * 4, 0);
    return {
      windowMs: windowTime.ms,
      stepMs: stepTime.ms,
      window: windowTime,
      step: stepTime,
      timeRatio: windowTime.ms / stepTime.ms,
      partsMs: partsTime.ms,
      parts: partsTime,
      partsRatio: windowTime.ms / partsTime.ms,
      bookkeepingMs,
      bookkeepingShare: bookkeepingCpuMs / windowTime.cpuMs,
      peakBytes: { window: windowPeak, step: stepPeak, microStep: microStepPeak },
      memoryRatio: windowPeak / stepPeak,
      memoryRatioTheory: (microStepPeak + 2 * parameterBytes) / stepPeak,
      parameterBytes,
    };
  } finally {
    accumulator.dispose();
    optimizer.dispose();
  }
}

/**
 * The FLOPs of one training step, counted the same way for both peers so that GFLOP/s compare.
 *
 * Every dense and convolution layer does `positions × kernel size` multiply-adds per sample in
 * the forward pass (positions: 1 for a dense layer, output height × width for a convolution;
 * kernel size: inputs × outputs × filter area), 2 FLOPs each. Backpropagation does the same
 * again for the weight gradient, and again for the input gradient, except in the first such
 * layer: its input is the data, whose gradient nothing needs (PyTorch's autograd skips it).
 * So a step costs 2 × MACs × (3 − first layer's share). Elementwise work (bias, ReLU,
 * normalization, pooling, the loss, the update) is left out: it is O(activations), not
 * O(activations × fan-in), and a few percent of the arithmetic in these models.
 */
export interface StepFlops {
  /** Multiply-adds of the forward pass per sample. */
  forwardMacsPerSample: number;
  /** Of which the first weighted layer's. */
  firstLayerMacsPerSample: number;
  /** FLOPs of a training step (forward + backward) on `batch` samples. */
  trainingFlops: number;
}

/** Counts {@link StepFlops} from a built model's layer shapes. */
export function stepFlops(model: tf.LayersModel, batch: number): StepFlops {
  const perLayer: number[] = [];
  for (const layer of model.layers) {
    const kernel = layer.getWeights().find((w) => w.rank >= 2);
    if (!kernel) continue;
    const out = layer.outputShape as number[];
    const positions = out.slice(1, -1).reduce((a, b) => a * b, 1);
    perLayer.push(positions * kernel.size);
  }
  const forward = perLayer.reduce((a, b) => a + b, 0);
  const first = perLayer[0] ?? 0;
  return { forwardMacsPerSample: forward, firstLayerMacsPerSample: first, trainingFlops: 2 * batch * (3 * forward - first) };
}
