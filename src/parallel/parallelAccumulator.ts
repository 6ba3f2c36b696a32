import * as tf from '@tensorflow/tfjs';
import { checkBoolean, checkOptions } from '../core/errors';
import { GradientAccumulator, NonFinitePolicy, StepResult } from '../core/gradientAccumulator';
import type { Averaging, SetStateArgs } from '../core/state';
import { ParallelAccumulatorArgs, checkParallelArgs } from './args';
import { AccumulatorDisposedError, WorkerExitedError, WorkerFailedError } from './errors';
import { checkMicroBatch, ParallelMicroBatch } from './microBatch';
import { FromWorker, PackedLayout, PartSums, WorkerTiming, packedLayout, readWeights, sharedFloat32 } from './protocol';
import type { ParallelStepResult, ParallelUpdateResult, RoundReport } from './results';
import { ParallelAccumulatorState, upgradeParallelState } from './state';
import { TrainableSync } from './trainable';
import { WorkerPool } from './workerPool';

const OWNER = 'ParallelAccumulator';
type Sums = Extract<FromWorker, { type: 'sums' }>;

/**
 * Data-parallel gradient accumulation across worker threads, on the core `GradientAccumulator`:
 * a window's micro-batches are spread over W workers, each summing its gradients locally with no
 * synchronization per micro-step; when the window is full the main thread adds the W sums and
 * counts and hands them to its `GradientAccumulator` with `addGradientSums`, which owns the one
 * window, the counters, the state, the option checks, the update (clipping, schedules, weight
 * decay, EMA, skipping large updates, the non-finite policy) and its rollback. Then it shares
 * the new weights. The update equals the single-thread accumulator's over the same micro-batches,
 * up to float32 rounding of the order of the sums.
 *
 * What is left here is transport: which worker holds which micro-batches not yet reduced.
 *
 * ```ts
 * const acc = await ParallelAccumulator.create({ model, optimizer: tf.train.sgd(0.1), accumulationSteps: 8, loss: 'softmaxCrossEntropy', workers: 2 });
 * for (const batch of microBatches) await acc.step(batch);
 * await acc.flush();
 * await acc.dispose();
 * ```
 */
export class ParallelAccumulator {
  /** The backend each worker runs on. */
  readonly workerBackends: readonly string[];
  /** Notices from `selectBackend` in the workers. */
  readonly notices: readonly string[];

  private readonly vars: tf.Variable[];
  private readonly layout: PackedLayout;
  private readonly weightView: Float32Array;
  private readonly sumViews: Float32Array[];
  private readonly lastViews: Float32Array[];
  /** Micro-batches sent to workers and not yet reduced, per worker; their bytes; the next worker to use. */
  private round = { perWorker: [] as number[], dispatched: 0, bytes: 0, next: 0 };
  private busy = false;
  private disposed = false;

  private constructor(
    private readonly model: tf.LayersModel,
    /** The one accumulator: window, counters, state and update. */
    private readonly inner: GradientAccumulator,
    private readonly pool: WorkerPool,
    private readonly syncEvery: number | null,
    private readonly trainable: TrainableSync,
    buffers: { weights: SharedArrayBuffer; sums: SharedArrayBuffer[]; last: SharedArrayBuffer[] },
    ready: { backend: string; notices: string[] }[],
  ) {
    this.vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
    this.layout = packedLayout(this.vars.map((v) => v.shape));
    this.weightView = new Float32Array(buffers.weights);
    this.sumViews = buffers.sums.map((b) => new Float32Array(b));
    this.lastViews = buffers.last.map((b) => new Float32Array(b));
    this.round.perWorker = ready.map(() => 0);
    this.workerBackends = ready.map((r) => r.backend);
    this.notices = ready.flatMap((r) => r.notices);
  }

  /** Checks the arguments (the core's options by the core), starts the workers and waits until every replica is built. */
  static async create(args: ParallelAccumulatorArgs): Promise<ParallelAccumulator> {
    const { model, core, loss, workers, syncEvery, modules, backend, nativeThreads, checked } = checkParallelArgs(OWNER, args);
    const inner = new GradientAccumulator(core);
    const layout = packedLayout(model.trainableWeights.map((w) => w.shape as number[]));
    const perWorker = () => Array.from({ length: workers }, () => sharedFloat32(layout));
    const buffers = { weights: sharedFloat32(layout), sums: perWorker(), last: perWorker() };
    const weights = readWeights(model);
    let started: Awaited<ReturnType<typeof WorkerPool.start>>;
    try {
      started = await WorkerPool.start(workers, (i) => ({
        modelTopology: model.toJSON(null, false) as object,
        weights,
        loss,
        averaging: checked.averaging,
        backend,
        nativeThreads,
        modules,
        weightBuffer: buffers.weights,
        sumBuffer: buffers.sums[i],
        lastBuffer: buffers.last[i],
      }));
    } catch (error) {
      inner.dispose({ keepOptimizer: true });
      throw error;
    }
    return new ParallelAccumulator(model, inner, started.pool, syncEvery, TrainableSync.of(model, started.pool), buffers, started.ready);
  }

  /** Worker threads. */
  get workers(): number { return this.pool.size; }
  /** The averaging in use. */
  get averaging(): Averaging { return this.inner.averaging; }
  /** The non-finite policy in use. */
  get nonFinite(): NonFinitePolicy { return this.inner.nonFinite; }
  /** Micro-batches received by `step`, those still in the workers included. */
  get microStep(): number { return this.inner.microStep + this.round.dispatched; }
  get updateStep(): number { return this.inner.updateStep; }
  get epoch(): number { return this.inner.epoch; }
  get skippedMicroBatches(): number { return this.inner.skippedMicroBatches; }
  get skippedWindows(): number { return this.inner.skippedWindows; }
  get skippedLargeUpdates(): number { return this.inner.skippedLargeUpdates; }
  /** Micro-batches in the open window, reduced or still in the workers. */
  get pendingMicroBatches(): number { return this.inner.pendingMicroBatches + this.round.dispatched; }
  /** The optimizer that applies the updates. */
  get optimizer(): tf.Optimizer { return this.inner.optimizer; }

  /**
   * Sends one micro-batch to the next worker. Returns at once unless it completes the window (or
   * a `syncEvery` round): then the workers' sums are reduced into the window and, when it is
   * full, the update is applied before it resolves.
   *
   * @param batch `{ xs, ys }` as tensors (copied out) or `{ values, shape }` typed arrays, whose
   *   buffers are transferred (the caller's arrays are detached afterwards).
   * @throws On bad input (nothing sent); {@link WorkerFailedError} when a worker threw during the
   *   round (the round is discarded, nothing else changes); {@link WorkerExitedError} when a
   *   worker died (every worker is shut down); `NonFiniteGradientError` under `nonFinite: "error"`
   *   (the finite micro-batches stay in the window, the others are not counted); whatever the
   *   update throws (the window then holds every micro-batch but this one: step it again).
   */
  async step(batch: ParallelMicroBatch): Promise<ParallelStepResult> {
    return this.exclusive(async () => {
      const { xs, ys, transfer, bytes, samples } = checkMicroBatch(OWNER, batch, this.model);
      this.trainable.beforeMicroBatch(OWNER);
      const { size, scale } = this.inner.openWindow(this.averaging === 'per-sample' ? samples : 1); // fixed before a micro-batch leaves
      const last = this.pendingMicroBatches + 1 >= size;
      const worker = this.round.next;
      this.pool.post(worker, { type: 'micro-batch', index: this.microStep, xs, ys, last, scale }, transfer);
      this.round.next = (worker + 1) % this.pool.size;
      this.round.perWorker[worker] += 1;
      this.round.dispatched += 1;
      this.round.bytes += bytes;
      if (!last && (this.syncEvery === null || this.round.dispatched < this.syncEvery)) {
        return this.stepResult(null, null, size);
      }
      const { report, result } = await this.reduceRound();
      return this.stepResult(result, report, size);
    });
  }

  /** Applies the open window now, short or not (reducing what the workers hold first). Does nothing on an empty window. */
  async flush(): Promise<ParallelUpdateResult> {
    return this.exclusive(async () => {
      const report = this.round.dispatched > 0 ? (await this.reduceRound()).report : null;
      return this.afterUpdate(() => this.inner.flush(), report);
    });
  }

  /** Ends an epoch as `GradientAccumulator.endEpoch` does: flushes the open window (unless `flush: false`) and advances the epoch counter. */
  async endEpoch(options?: { flush?: boolean }): Promise<ParallelUpdateResult | null> {
    return this.exclusive(async () => {
      const { flush } = checkOptions<{ flush?: boolean }>(`${OWNER}.endEpoch`, 'options', options, ['flush']);
      checkBoolean(`${OWNER}.endEpoch`, 'flush', flush);
      // A window carried into the next epoch stays in the workers (it keeps its size); one to flush is reduced first.
      if (flush === false) return this.inner.endEpoch(options) as null;
      const report = this.round.dispatched > 0 ? (await this.reduceRound()).report : null;
      return this.afterUpdate(() => this.inner.endEpoch(options) as ParallelUpdateResult, report);
    });
  }

  /**
   * The core's `AccumulatorState`, to resume from in a `GradientAccumulator` or a
   * `ParallelAccumulator` with any number of workers: the workers' unreduced micro-batches are
   * reduced into the window first. Save the model's weights separately.
   */
  async getState(options?: { includeOptimizer?: boolean }): Promise<ParallelAccumulatorState> {
    return this.exclusive(async () => {
      // After a worker died, the micro-batches it and the others held are lost: forget them.
      if (this.round.dispatched > 0) {
        if (this.pool.failed === null) await this.reduceRound();
        else this.resetRound();
      }
      return this.inner.getState(options);
    }, true);
  }

  /**
   * Restores a state from `getState` of either trainer (or the older parallel format, upgraded),
   * e.g. in a new process after loading the model's weights, and sends every weight of the model
   * to the workers. The core checks everything before anything changes.
   */
  async setState(state: ParallelAccumulatorState, args?: SetStateArgs): Promise<void> {
    return this.exclusive(async () => {
      await this.inner.setState(upgradeParallelState(`${OWNER}.setState`, state) as ParallelAccumulatorState, args);
      await this.discardRound();
      this.syncAllWeights();
    });
  }

  /** Runs `fn` with the model's weights replaced by their EMA (see the `ema` option), as `GradientAccumulator.withAveragedWeights`. */
  async withAveragedWeights<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.exclusive(() => this.inner.withAveragedWeights(fn));
  }

  /** Sends every weight of the model (trainable or not) to the workers: call it after changing the model's weights yourself. */
  async syncWeights(): Promise<void> {
    return this.exclusive(async () => this.syncAllWeights());
  }

  /** The number of live tensors in each worker (for leak checks). */
  async workerTensorCounts(): Promise<number[]> {
    return this.exclusive(async () => {
      const replies = await Promise.all(Array.from({ length: this.pool.size }, (_, i) => this.pool.request(i, { type: 'memory', id: 0 })));
      return replies.map((r) => (r as Extract<FromWorker, { type: 'memory' }>).numTensors);
    });
  }

  /**
   * Terminates the workers (waiting until their threads are gone) and disposes the accumulator
   * and, unless `keepOptimizer`, the optimizer. A call still waiting for the workers rejects with
   * {@link AccumulatorDisposedError}.
   */
  async dispose(options?: { keepOptimizer?: boolean }): Promise<void> {
    if (this.disposed) return;
    this.inner.dispose(options); // checks the options first
    this.disposed = true;
    await this.pool.terminate();
  }

  /** Runs one public operation at a time, checking that the accumulator is usable. */
  private async exclusive<T>(fn: () => Promise<T>, allowAfterFailure = false): Promise<T> {
    if (this.disposed) throw new AccumulatorDisposedError(`${OWNER}: this accumulator was disposed; create a new one.`);
    if (this.pool.failed && !allowAfterFailure) throw this.pool.failed;
    if (this.busy) throw new Error(`${OWNER}: a previous call has not finished; await every step, flush, getState and setState before the next call.`);
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }

  /**
   * Asks every worker that received micro-batches this round for its sums and adds them to the
   * core's window: first every worker's running sums as one contribution, then the non-finite
   * micro-batches (the core's policy), then the window's last micro-batch, which may apply the
   * update. On a worker's failure the round is discarded everywhere and nothing else changes.
   */
  private async reduceRound(): Promise<{ report: RoundReport; result: StepResult | null }> {
    this.trainable.requireOne(OWNER);
    const start = performance.now();
    const active = this.round.perWorker.flatMap((n, i) => (n > 0 ? [i] : []));
    const bytes = { microBatches: this.round.bytes, gradients: active.length * this.layout.length * 4, weights: 0 };
    const settled = await Promise.allSettled(active.map((i) => this.pool.request(i, { type: 'reduce', id: 0 })));
    const waitMs = performance.now() - start;
    this.resetRound();
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure) throw this.pool.failed ?? failure.reason;
    const replies = settled.map((s) => (s as PromiseFulfilledResult<FromWorker>).value as Sums);
    const reports = replies.flatMap((r) => r.reports).sort((a, b) => a.index - b.index);
    const finite = reports.filter((r) => r.finite);
    const counted = finite.reduce((n, r) => n + r.count, 0);
    const timings = this.round.perWorker.map((_, i): WorkerTiming => replies[active.indexOf(i)]?.timing ?? { computeMs: 0, unpackMs: 0, packMs: 0, idleMs: 0, gcMs: 0, messages: 0, microBatches: 0, cpuMs: 0, runQueueMs: 0 });
    const report: RoundReport = {
      losses: reports.map((r) => r.loss),
      meanLoss: counted > 0 ? finite.reduce((s, r) => s + r.loss * r.count, 0) / counted : Number.NaN,
      timing: {
        computeMs: timings.map((t) => t.computeMs),
        waitMs,
        packMs: Math.max(0, ...timings.map((t) => t.packMs)),
        unpackMs: Math.max(0, ...timings.map((t) => t.unpackMs)),
        reduceMs: 0,
        updateMs: 0,
        broadcastMs: 0,
      },
      bytes,
      workers: timings,
    };
    const reduceStart = performance.now();
    let result: StepResult | null = this.addPart(replies.map((r) => r.sums), active.map((i) => this.sumViews[i]));
    report.timing.reduceMs = performance.now() - reduceStart;
    let deferred: unknown = null;
    const bad = reports.filter((r) => !r.finite);
    const badBefore = bad.filter((r) => !r.last);
    let skippedBefore: StepResult['skipped'] = null;
    if (badBefore.length > 0) {
      try {
        result = this.inner.addNonFinite(badBefore.length, badBefore[0].loss);
        skippedBefore = result.skipped;
      } catch (error) {
        // Under "error": the finite micro-batches stay; the last one is still added below.
        deferred = error;
      }
    }
    const k = replies.findIndex((r) => r.last !== null);
    const badLast = bad.find((r) => r.last);
    if (k >= 0 || (badLast && deferred === null)) {
      const updated = this.afterUpdate(() => (k >= 0 ? this.addPart([replies[k].last as PartSums], [this.lastViews[active[k]]]) : this.inner.addNonFinite(1, (badLast as { loss: number }).loss)) as StepResult, report);
      // A micro-batch skipped earlier in the round is reported unless the window's end says more.
      result = { ...updated, skipped: updated.skipped ?? skippedBefore };
    }
    if (deferred !== null) throw deferred;
    return { report, result };
  }

  /**
   * Adds the parts of several workers to the core's window as one contribution: their sums
   * added element by element in float32 (the reduction) and their counts, without the sums of a
   * variable frozen since (see trainable.ts). Null when they hold no micro-batch.
   */
  private addPart(parts: PartSums[], views: Float32Array[]): StepResult | null {
    const used = parts.flatMap((p, i) => (p.microBatches > 0 ? [i] : []));
    if (used.length === 0) return null;
    const { offsets, sizes, length } = this.layout;
    const total = views[used[0]].slice(0, length);
    for (const i of used.slice(1)) {
      const view = views[i];
      for (let j = 0; j < length; j++) total[j] += view[j];
    }
    const chosen = used.map((i) => parts[i]);
    const sums: tf.NamedTensorMap = {};
    this.vars.forEach((v, i) => {
      if (v.trainable && chosen.some((p) => p.touched[i])) sums[v.name] = tf.tensor(total.subarray(offsets[i], offsets[i] + sizes[i]), v.shape);
    });
    try {
      return this.inner.addGradientSums(sums, {
        // The workers summed at the open window's scale, sent with each micro-batch.
        scale: this.inner.state.window.scale,
        count: chosen.reduce((n, p) => n + p.count, 0),
        microBatches: chosen.reduce((n, p) => n + p.microBatches, 0),
        unit: chosen.some((p) => p.unit === 'counts') ? 'counts' : chosen[0].unit,
        lossSum: chosen.reduce((n, p) => n + p.lossSum, 0),
      });
    } finally {
      tf.dispose(Object.values(sums));
    }
  }

  /** Runs a core call that may update the weights, timing it, and shares the weights when it did. */
  private afterUpdate<R extends { updateStep: number }>(call: () => R, report: RoundReport | null): R & { round: RoundReport | null } {
    const before = this.inner.updateStep;
    const start = performance.now();
    const result = call();
    if (report) report.timing.updateMs = performance.now() - start;
    if (this.inner.updateStep !== before) {
      const broadcastStart = performance.now();
      this.broadcastTrainableWeights();
      if (report) {
        report.timing.broadcastMs = performance.now() - broadcastStart;
        report.bytes.weights = this.pool.size * this.layout.length * 4;
      }
    }
    return { ...result, round: report };
  }

  /** Writes the trainable weights into the shared buffer and tells every worker to load them. */
  private broadcastTrainableWeights(): void {
    const { offsets } = this.layout;
    this.vars.forEach((v, i) => this.weightView.set(v.dataSync() as Float32Array, offsets[i]));
    for (let w = 0; w < this.pool.size; w++) this.pool.post(w, { type: 'trainable-weights' });
  }

  private syncAllWeights(): void {
    const weights = readWeights(this.model);
    for (let w = 0; w < this.pool.size; w++) this.pool.post(w, { type: 'all-weights', weights });
  }

  private async discardRound(): Promise<void> {
    if (this.round.dispatched === 0) return;
    const active = this.round.perWorker.flatMap((n, i) => (n > 0 ? [i] : []));
    this.resetRound();
    await Promise.all(active.map((i) => this.pool.request(i, { type: 'discard', id: 0 })));
  }

  /** Forgets the micro-batches in flight (the workers dropped or will drop them). */
  private resetRound(): void {
    this.round = { perWorker: this.round.perWorker.map(() => 0), dispatched: 0, bytes: 0, next: this.round.next };
  }

  /** A micro-step's result: the core's counters, and what the core call that ended the round did. */
  private stepResult(result: StepResult | null, round: RoundReport | null, size: number): ParallelStepResult {
    const { updateStep, epoch } = this.inner;
    const closed = result !== null && result.windowPosition >= size;
    return {
      applied: result?.applied ?? false,
      skipped: result?.skipped ?? null,
      microStep: this.microStep,
      updateStep,
      epoch,
      windowPosition: closed ? size : this.pendingMicroBatches,
      accumulationSteps: size,
      gradientNorm: result?.gradientNorm ?? null,
      round,
    };
  }
}

export { AccumulatorDisposedError, WorkerExitedError, WorkerFailedError };
