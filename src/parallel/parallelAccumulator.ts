import * as tf from '@tensorflow/tfjs';
import { argumentError } from '../core/errors';
import { GradientAccumulator, NonFiniteGradientError, NonFinitePolicy } from '../core/gradientAccumulator';
import { AccumulationSchedule, resolveAccumulationSteps } from '../core/schedule';
import type { SetStateArgs } from '../core/state';
import { ParallelAccumulatorArgs, checkParallelArgs } from './args';
import { WorkerExitedError, WorkerFailedError } from './errors';
import { checkMicroBatch, ParallelMicroBatch } from './microBatch';
import { FromWorker, MicroBatchReport, PackedLayout, packedLayout, readWeights, sharedFloat32 } from './protocol';
import type { ParallelStepResult, ParallelUpdateResult, RoundReport } from './results';
import { Averaging, PARALLEL_STATE_FORMAT, ParallelAccumulatorState, ParallelCounters, ParallelWindow, checkParallelState } from './state';
import { addSummedGradients } from './summedGradients';
import { WorkerPool } from './workerPool';

// Length: about 430 lines, because the window protocol with the workers (hand out, collect, roll
// back on a failed round, re-sync) is one state machine that reads best in one file; arguments,
// results, state, transport and the worker pool are in files of their own.
const OWNER = 'ParallelAccumulator';

/**
 * Data-parallel gradient accumulation across worker threads: a window's micro-batches are spread
 * over W workers, each summing its gradients locally with no synchronization per micro-step;
 * when the window is full the main thread adds the W sums and counts and applies one update
 * through a `GradientAccumulator` (clipping, non-finite policy, optimizer), then shares the new
 * weights. The update equals the single-thread accumulator's over the same micro-batches, up to
 * float32 rounding of the order of the sums.
 *
 * ```ts
 * const acc = await ParallelAccumulator.create({ model, optimizer: tf.train.sgd(0.1), accumulationSteps: 8, loss: 'softmaxCrossEntropy', workers: 2 });
 * for (const batch of microBatches) await acc.step(batch);
 * await acc.flush();
 * await acc.dispose();
 * ```
 */
export class ParallelAccumulator {
  readonly averaging: Averaging;
  readonly nonFinite: NonFinitePolicy;
  /** The backend each worker runs on. */
  readonly workerBackends: readonly string[];
  /** Notices from `selectBackend` in the workers. */
  readonly notices: readonly string[];

  private readonly vars: tf.Variable[];
  private readonly layout: PackedLayout;
  private readonly weightView: Float32Array;
  private readonly sumViews: Float32Array[];
  private counters: ParallelCounters = { microStep: 0, updateStep: 0, epoch: 0, skippedMicroBatches: 0, skippedWindows: 0 };
  private window: ParallelWindow;
  private sums: Float32Array | null = null;
  /** Micro-batches sent to workers and not yet reduced, per worker; their bytes; the next worker to use. */
  private round = { perWorker: [] as number[], dispatched: 0, bytes: 0, next: 0 };
  private syncEvery: number | null = null;
  private busy = false;
  private disposed = false;

  private constructor(
    private readonly model: tf.LayersModel,
    private readonly inner: GradientAccumulator,
    private readonly pool: WorkerPool,
    private readonly accumulationSteps: number | AccumulationSchedule,
    averaging: Averaging,
    nonFinite: NonFinitePolicy,
    buffers: { weights: SharedArrayBuffer; sums: SharedArrayBuffer[] },
    ready: { backend: string; notices: string[] }[],
  ) {
    this.averaging = averaging;
    this.nonFinite = nonFinite;
    this.vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
    this.layout = packedLayout(this.vars.map((v) => v.shape));
    this.weightView = new Float32Array(buffers.weights);
    this.sumViews = buffers.sums.map((b) => new Float32Array(b));
    this.window = emptyWindow(this.vars.length);
    this.round.perWorker = ready.map(() => 0);
    this.workerBackends = ready.map((r) => r.backend);
    this.notices = ready.flatMap((r) => r.notices);
  }

  /** Checks the arguments, starts the workers and waits until every replica is built. */
  static async create(args: ParallelAccumulatorArgs): Promise<ParallelAccumulator> {
    const { model, optimizer, accumulationSteps, loss, workers, averaging, nonFinite, clipNorm, syncEvery, modules, backend } = checkParallelArgs(OWNER, args);
    const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
    const layout = packedLayout(vars.map((v) => v.shape));
    const buffers = { weights: sharedFloat32(layout), sums: Array.from({ length: workers }, () => sharedFloat32(layout)) };
    const weights = readWeights(model);
    const { pool, ready } = await WorkerPool.start(workers, (i) => ({
      modelTopology: model.toJSON(null, false) as object,
      weights,
      loss,
      averaging,
      backend,
      modules,
      weightBuffer: buffers.weights,
      sumBuffer: buffers.sums[i],
    }));
    // Note: the inner accumulator sees one contribution per window (the reduced sums) and closes
    // its window on it, so its clipping, finiteness check and optimizer step run once per update.
    const inner = new GradientAccumulator({ optimizer, accumulationSteps: 1, varList: vars, clipNorm: clipNorm ?? undefined, nonFinite });
    const accumulator = new ParallelAccumulator(model, inner, pool, accumulationSteps, averaging, nonFinite, buffers, ready);
    accumulator.syncEvery = syncEvery;
    return accumulator;
  }

  /** Worker threads. */
  get workers(): number {
    return this.pool.size;
  }
  get microStep(): number {
    return this.counters.microStep;
  }
  get updateStep(): number {
    return this.counters.updateStep;
  }
  get epoch(): number {
    return this.counters.epoch;
  }
  get skippedMicroBatches(): number {
    return this.counters.skippedMicroBatches;
  }
  get skippedWindows(): number {
    return this.counters.skippedWindows;
  }
  /** Micro-batches in the open window, reduced or still in the workers. */
  get pendingMicroBatches(): number {
    return this.window.microBatches + this.round.dispatched;
  }
  /** The optimizer that applies the updates. */
  get optimizer(): tf.Optimizer {
    return this.inner.optimizer;
  }

  /**
   * Sends one micro-batch to the next worker. Returns at once unless it completes the window:
   * then the workers' sums are reduced and the update is applied before it resolves.
   *
   * @param batch `{ xs, ys }` as tensors (copied out) or `{ values, shape }` typed arrays, whose
   *   buffers are transferred (the caller's arrays are detached afterwards).
   * @throws On bad input (nothing sent); {@link WorkerFailedError} when a worker threw during the
   *   round (the round is discarded, counters rolled back); {@link WorkerExitedError} when a
   *   worker died (every worker is shut down); `NonFiniteGradientError` under `nonFinite: "error"`
   *   (the finite micro-batches stay in the window, the others are not counted).
   */
  async step(batch: ParallelMicroBatch): Promise<ParallelStepResult> {
    return this.exclusive(async () => {
      const { xs, ys, transfer, bytes } = checkMicroBatch(OWNER, batch, this.model);
      const size = this.window.size ?? this.resolveWindowSize();
      const worker = this.round.next;
      const index = this.counters.microStep;
      this.pool.post(worker, { type: 'micro-batch', index, xs, ys }, transfer);
      this.window.size = size;
      this.round.next = (worker + 1) % this.pool.size;
      this.round.perWorker[worker] += 1;
      this.round.dispatched += 1;
      this.round.bytes += bytes;
      this.counters.microStep += 1;
      if (this.window.microBatches + this.round.dispatched < size) {
        if (this.syncEvery === null || this.round.dispatched < this.syncEvery) {
          return this.stepResult(false, null, null, this.pendingMicroBatches, size, null);
        }
        const { report, skipped } = await this.reduceRound();
        return this.stepResult(false, skipped, null, this.pendingMicroBatches, size, report);
      }
      const { report, skipped } = await this.reduceRound();
      if (this.window.microBatches < size) {
        return this.stepResult(false, skipped, null, this.pendingMicroBatches, size, report);
      }
      const update = this.closeWindow(report);
      return this.stepResult(update.applied, update.skipped ?? skipped, update.gradientNorm, size, size, report);
    });
  }

  /** Applies the open window now, short or not (reducing what the workers hold first). Does nothing on an empty window. */
  async flush(): Promise<ParallelUpdateResult> {
    return this.exclusive(async () => {
      const report = this.round.dispatched > 0 ? (await this.reduceRound()).report : null;
      return this.closeWindow(report);
    });
  }

  /** Ends an epoch: flushes the open window (unless `flush: false`) and advances the epoch counter. */
  async endEpoch(options: { flush?: boolean } = {}): Promise<ParallelUpdateResult | null> {
    if (options === null || typeof options !== 'object') throw argumentError(`${OWNER}.endEpoch`, 'options', 'an object { flush? }', options);
    const result = options.flush === false ? null : await this.flush();
    return this.exclusive(async () => {
      this.inner.endEpoch({ flush: false });
      this.counters.epoch += 1;
      return result;
    });
  }

  /**
   * A JSON-serializable snapshot to resume from, mid-window included: the workers' unreduced
   * micro-batches are reduced into the main thread first. Save the model's weights separately.
   */
  async getState(options: { includeOptimizer?: boolean } = {}): Promise<ParallelAccumulatorState> {
    return this.exclusive(async () => {
      // After a worker died, the micro-batches it and the others held are lost: roll them back.
      if (this.round.dispatched > 0) {
        if (this.pool.failed === null) await this.reduceRound();
        else this.rollBackRound();
      }
      const { offsets, sizes } = this.layout;
      const sums = this.vars.map((v, i) => ({
        name: v.name,
        shape: [...v.shape],
        dtype: 'float32',
        values: this.sums === null ? new Array<number>(sizes[i]).fill(0) : Array.from(this.sums.subarray(offsets[i], offsets[i] + sizes[i])),
      }));
      return {
        format: PARALLEL_STATE_FORMAT,
        averaging: this.averaging,
        counters: { ...this.counters },
        window: { ...this.window, touched: [...this.window.touched] },
        sums,
        accumulator: await this.inner.getState(options),
      };
    }, true);
  }

  /**
   * Restores a snapshot from `getState`, e.g. in a new process after loading the model's
   * weights, and sends every weight of the model to the workers. Everything is checked before
   * anything changes.
   */
  async setState(state: ParallelAccumulatorState, args: SetStateArgs = {}): Promise<void> {
    return this.exclusive(async () => {
      checkParallelState(`${OWNER}.setState`, state, this.averaging, this.vars.map((v) => v.shape));
      await this.inner.setState(state.accumulator, args);
      await this.discardRound();
      this.counters = { ...state.counters };
      this.window = { ...state.window, touched: [...state.window.touched] };
      const sums = new Float32Array(this.layout.length);
      state.sums.forEach((t, i) => sums.set(t.values, this.layout.offsets[i]));
      this.sums = state.window.microBatches > 0 ? sums : null;
      this.syncAllWeights();
    });
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

  /** Terminates the workers (waiting until their threads are gone) and disposes the optimizer unless `keepOptimizer`. */
  async dispose(options: { keepOptimizer?: boolean } = {}): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.pool.terminate();
    this.inner.dispose(options);
  }

  /** Runs one public operation at a time, checking that the accumulator is usable. */
  private async exclusive<T>(fn: () => Promise<T>, allowAfterFailure = false): Promise<T> {
    if (this.disposed) throw new Error(`${OWNER}: this accumulator was disposed; create a new one.`);
    if (this.pool.failed && !allowAfterFailure) throw this.pool.failed;
    if (this.busy) throw new Error(`${OWNER}: a previous call has not finished; await every step, flush, getState and setState before the next call.`);
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }

  private resolveWindowSize(): number {
    return resolveAccumulationSteps(OWNER, this.accumulationSteps, { epoch: this.counters.epoch, updateStep: this.counters.updateStep });
  }

  /**
   * Asks every worker that received micro-batches this round for its sums and adds them into the
   * window. All or nothing: on any failure the round is discarded everywhere and the counters
   * roll back to where the round began.
   */
  private async reduceRound(): Promise<{ report: RoundReport; skipped: 'micro-batch' | 'window' | null }> {
    const start = performance.now();
    const active = this.round.perWorker.flatMap((n, i) => (n > 0 ? [i] : []));
    const settled = await Promise.allSettled(active.map((i) => this.pool.request(i, { type: 'reduce', id: 0 })));
    const waitMs = performance.now() - start;
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure) {
      this.rollBackRound();
      if (this.pool.failed) throw this.pool.failed;
      throw failure.reason as WorkerFailedError;
    }
    const replies = settled.map((s) => (s as PromiseFulfilledResult<FromWorker>).value as Extract<FromWorker, { type: 'sums' }>);
    const reduceStart = performance.now();
    const reports: MicroBatchReport[] = replies.flatMap((r) => r.reports).sort((a, b) => a.index - b.index);
    const bad = reports.filter((r) => !r.finite);
    if (bad.length > 0 && this.nonFinite === 'error') {
      // As on one thread: the non-finite micro-batches never happened; the finite ones stay.
      this.counters.microStep -= bad.length;
    }
    for (const [k, r] of replies.entries()) {
      if (r.microBatches === 0) continue;
      const view = this.sumViews[active[k]];
      if (this.sums === null) this.sums = view.slice(0, this.layout.length);
      else for (let j = 0; j < this.layout.length; j++) this.sums[j] += view[j];
      this.window.touched = this.window.touched.map((t, i) => t || r.touched[i]);
    }
    const good = replies.reduce((n, r) => n + r.microBatches, 0);
    this.window.microBatches += good;
    this.window.weight += replies.reduce((n, r) => n + r.count, 0);
    let skipped: 'micro-batch' | 'window' | null = null;
    if (bad.length > 0 && this.nonFinite !== 'error') {
      this.counters.skippedMicroBatches += bad.length;
      skipped = 'micro-batch';
      if (this.nonFinite === 'skip-window') {
        this.window.microBatches += bad.length;
        this.window.poisoned = true;
        skipped = 'window';
      }
    }
    const finite = reports.filter((r) => r.finite);
    const countSum = finite.reduce((n, r) => n + r.count, 0);
    const report: RoundReport = {
      losses: reports.map((r) => r.loss),
      meanLoss: countSum > 0 ? finite.reduce((s, r) => s + r.loss * r.count, 0) / countSum : Number.NaN,
      timing: {
        computeMs: this.round.perWorker.map((_, i) => replies[active.indexOf(i)]?.computeMs ?? 0),
        waitMs,
        packMs: Math.max(0, ...replies.map((r) => r.packMs)),
        unpackMs: Math.max(0, ...replies.map((r) => r.unpackMs)),
        reduceMs: performance.now() - reduceStart,
        updateMs: 0,
        broadcastMs: 0,
      },
      bytes: { microBatches: this.round.bytes, gradients: active.length * this.layout.length * 4, weights: 0 },
    };
    this.resetRound();
    if (bad.length > 0 && this.nonFinite === 'error') {
      if (this.window.microBatches === 0) this.window = emptyWindow(this.vars.length);
      throw new NonFiniteGradientError(
        `${OWNER}: micro-batch ${bad.map((r) => r.index + 1).join(', ')} produced a non-finite loss or gradient (loss = ${bad[0].loss}). ` +
          'It was not counted; weights and the rest of the window are unchanged. Pass nonFinite: "skip-micro-batch" or "skip-window" to skip such micro-batches instead.',
      );
    }
    return { report, skipped };
  }

  /** Ends the open window: applies it through the inner accumulator, drops it if poisoned, or does nothing if empty. */
  private closeWindow(report: RoundReport | null): ParallelUpdateResult {
    const { microBatches, weight, poisoned } = this.window;
    const nothing = (skipped: 'window' | null): ParallelUpdateResult => ({ applied: false, skipped, updateStep: this.counters.updateStep, microBatches, weight: 0, gradientNorm: null, round: report });
    if (microBatches === 0) return nothing(null);
    const sums = this.sums;
    const touched = this.window.touched;
    this.window = emptyWindow(this.vars.length);
    this.sums = null;
    if (poisoned || sums === null || weight === 0) {
      this.counters.skippedWindows += 1;
      return nothing('window');
    }
    const updateStart = performance.now();
    const { offsets, sizes } = this.layout;
    const tensors = this.vars.map((v, i) => (touched[i] ? tf.tensor(sums.subarray(offsets[i], offsets[i] + sizes[i]), v.shape) : null));
    let result;
    try {
      result = addSummedGradients(this.inner, this.vars, tensors, weight);
    } finally {
      tf.dispose(tensors.filter((t): t is tf.Tensor => t !== null));
    }
    if (report) report.timing.updateMs = performance.now() - updateStart;
    if (!result.applied) {
      // The reduced sum overflowed float32 under a skip policy: the inner accumulator dropped it.
      this.counters.skippedWindows += 1;
      return nothing('window');
    }
    this.counters.updateStep += 1;
    const broadcastStart = performance.now();
    this.broadcastTrainableWeights();
    if (report) {
      report.timing.broadcastMs = performance.now() - broadcastStart;
      report.bytes.weights = this.pool.size * this.layout.length * 4;
    }
    return { applied: true, skipped: null, updateStep: this.counters.updateStep, microBatches, weight, gradientNorm: result.gradientNorm, round: report };
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
    this.rollBackRound();
    await Promise.all(active.map((i) => this.pool.request(i, { type: 'discard', id: 0 })));
  }

  /** Forgets the round in flight as if its micro-batches had never been stepped. */
  private rollBackRound(): void {
    this.counters.microStep -= this.round.dispatched;
    if (this.window.microBatches === 0) this.window = emptyWindow(this.vars.length);
    this.resetRound();
  }

  private resetRound(): void {
    this.round = { perWorker: this.round.perWorker.map(() => 0), dispatched: 0, bytes: 0, next: this.round.next };
  }

  private stepResult(
    applied: boolean,
    skipped: 'micro-batch' | 'window' | null,
    gradientNorm: number | null,
    windowPosition: number,
    accumulationSteps: number,
    round: RoundReport | null,
  ): ParallelStepResult {
    const { microStep, updateStep, epoch } = this.counters;
    return { applied, skipped, microStep, updateStep, epoch, windowPosition, accumulationSteps, gradientNorm, round };
  }
}

function emptyWindow(variables: number): ParallelWindow {
  return { size: null, microBatches: 0, weight: 0, poisoned: false, touched: new Array(variables).fill(false) };
}

export { WorkerExitedError, WorkerFailedError };
