/**
 * A worker thread of the bench's every-core breakdown (everyCoreBreakdown.ts): it rebuilds the
 * model from its JSON and weights, as a `ParallelAccumulator` worker does, and runs the core's
 * micro-step on the native backend at one BLAS thread (`GradientAccumulator.step`: the core's
 * `microBatchGradients` and `addChecked`, which a worker's replica runs per micro-batch too). It
 * waits at a barrier until every worker of the run is ready, times its calls, meets the others
 * again, then times as many calls part by part with benchNative's `nativeBreakdown`, and posts
 * the breakdown.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { GradientAccumulator } from '../../src/index';
import { selectBackend } from '../../src/backend/index';
import type { TransferableTensor } from '../../src/parallel/index';
import { nativeBreakdown } from './benchNative';

/** What the main thread sends. */
export interface BreakdownWorkerData {
  /** `model.toJSON(null, false)`, and every weight in `model.weights` order. */
  modelTopology: object;
  weights: TransferableTensor[];
  /** A `tf.losses` name called as (labels, predictions). */
  loss: 'softmaxCrossEntropy' | 'meanSquaredError';
  microBatches: { xs: TransferableTensor; ys: TransferableTensor }[];
  /** Untimed calls first (the code compiles on its first calls). */
  warmup: number;
  /** Timed calls, once plain and once part by part. */
  calls: number;
  /**
   * An Int32Array's buffer: [workers of the run, ready to time, ready to time by part]; each
   * worker adds one to a count and waits until it reaches the first, so that all run at once.
   */
  barrier: SharedArrayBuffer;
}

async function main(): Promise<void> {
  const data = workerData as BreakdownWorkerData;
  await selectBackend('native', { strict: true, nativeThreads: 1 });
  const model = await tf.models.modelFromJSON({ modelTopology: data.modelTopology } as tf.io.ModelJSON);
  const initial = data.weights.map((w) => tf.tensor(w.values, w.shape));
  model.setWeights(initial);
  tf.dispose(initial);
  const loss = tf.losses[data.loss];
  const varList = model.trainableWeights.map((w) => w.read() as tf.Variable);
  // A window longer than the run: every call is a micro-step that adds into the sums, none updates.
  const total = data.warmup + 2 * data.calls + 1;
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: total, varList });
  let next = 0;
  const call = (): void => {
    const b = data.microBatches[next++ % data.microBatches.length];
    // As in a worker: the micro-batch arrives as arrays and becomes tensors for its step.
    const xs = tf.tensor(b.xs.values, b.xs.shape);
    const ys = tf.tensor(b.ys.values, b.ys.shape);
    try {
      accumulator.step(() => loss(ys, model.apply(xs, { training: true }) as tf.Tensor) as tf.Scalar, { sampleCount: b.xs.shape[0] });
    } finally {
      tf.dispose([xs, ys]);
    }
  };
  for (let i = 0; i < data.warmup; i++) call();
  const barrier = new Int32Array(data.barrier);
  const meet = (slot: 1 | 2): void => {
    Atomics.add(barrier, slot, 1);
    Atomics.notify(barrier, slot);
    for (let seen = Atomics.load(barrier, slot); seen < barrier[0]; seen = Atomics.load(barrier, slot)) Atomics.wait(barrier, slot, seen, 1000);
  };
  // Without the kernel timers first, to show what they cost.
  meet(1);
  const start = performance.now();
  for (let i = 0; i < data.calls; i++) call();
  const plainMs = (performance.now() - start) / data.calls;
  meet(2);
  const breakdown = nativeBreakdown(call, plainMs, data.calls);
  accumulator.dispose();
  model.dispose();
  parentPort?.postMessage(breakdown);
}

main().catch((e) => {
  parentPort?.postMessage({ error: e instanceof Error ? e.stack ?? e.message : String(e) });
});
