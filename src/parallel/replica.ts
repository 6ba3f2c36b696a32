import * as tf from '@tensorflow/tfjs';
// Registering the project's layers, so that a model using them can be rebuilt from its JSON.
import '../core/norm/groupNormalization';
import '../core/norm/batchRenormalization';
import '../core/norm/frozenBatchNormalization';
import { BackwardSeed, CountedLoss, microBatchGradients } from '../core/lossGradient';
import { isMicroBatchFinite, sumAndRead } from '../core/update';
import { WorkerLoss, loadModule, resolveLoss } from './loss';
import { fromTransferable } from './microBatch';
import { checkModelClasses } from './modelClasses';
import { clockSince, threadClock } from './threadClock';
import { setTrainableFlags } from './trainable';
import { FromWorker, MicroBatchReport, PackedLayout, PartSums, ReplicaInit, TransferableTensor, WorkerTiming, packedLayout } from './protocol';

type SumsMessage = Extract<FromWorker, { type: 'sums' }>;
const OWNER = 'ParallelAccumulator';

/** One part of the sums (see `PartSums`): the tensors, and what they count for. */
interface Part {
  sums: (tf.Tensor | null)[];
  microBatches: number;
  count: number;
  unit: PartSums['unit'] | null;
  lossSum: number;
}

/**
 * One worker's copy of the model and its gradient sums: everything a worker does, without the
 * messaging, so the main thread's tests can drive it directly.
 *
 * Per micro-batch it runs the core's `microBatchGradients` (the same loss forms, checks and
 * objective as `GradientAccumulator.step`: the gradient of the micro-batch's *summed* loss, times
 * the window's scale) and adds it into its sums and reads loss, finiteness and count in one host
 * read with the core's `sumAndRead`, the accumulator's own, then commits the new sums only when
 * they are finite. Sums from any number of workers add up to the window's sum, which the main
 * thread hands to its `GradientAccumulator` with `addGradientSums`, to be divided once by the
 * window's total count.
 */
export class Replica {
  private main: Part;
  private last: Part;
  private reports: MicroBatchReport[] = [];
  private readonly timing: WorkerTiming = { computeMs: 0, unpackMs: 0, packMs: 0, idleMs: 0, gcMs: 0, messages: 0, microBatches: 0, cpuMs: 0, runQueueMs: 0 };
  private readonly layout: PackedLayout;
  private readonly vars: tf.Variable[];
  /** Where the backward passes start (see `BackwardSeed`), kept between the micro-batches of a window. */
  private readonly seed = new BackwardSeed();

  private constructor(
    readonly model: tf.LayersModel,
    private readonly loss: WorkerLoss,
    private readonly averaging: ReplicaInit['averaging'],
    private readonly weightView: Float32Array,
    private readonly sumView: Float32Array,
    private readonly lastView: Float32Array,
  ) {
    this.vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
    this.layout = packedLayout(this.vars.map((v) => v.shape));
    this.main = this.emptyPart();
    this.last = this.emptyPart();
  }

  /** Rebuilds the model from its JSON and weights on the active backend and finds the loss. */
  static async create(init: ReplicaInit): Promise<Replica> {
    for (const m of init.modules) loadModule(m);
    checkModelClasses(OWNER, init.modelTopology, init.modules);
    const model = await tf.models.modelFromJSON({ modelTopology: init.modelTopology } as tf.io.ModelJSON);
    const replica = new Replica(
      model,
      resolveLoss(init.loss),
      init.averaging,
      new Float32Array(init.weightBuffer),
      new Float32Array(init.sumBuffer),
      new Float32Array(init.lastBuffer),
    );
    replica.setAllWeights(init.weights);
    return replica;
  }

  /** Adds time spent outside the replica's own work (idle waits, GC pauses) to this round's timing. */
  note(field: 'idleMs' | 'gcMs', ms: number): void {
    this.timing[field] += ms;
  }

  /**
   * Forward and backward on one micro-batch; adds its gradient into the sums (or, for the
   * window's `last` micro-batch, keeps it apart) unless its loss or gradient is non-finite (then
   * it is only reported). Throws, changing nothing, when the loss is bad (a named error).
   *
   * @param scale The scale of the window the micro-batch belongs to (`openWindow`'s): its
   *   gradient is summed times 2^−scale, so that the window's sums cannot overflow.
   */
  addMicroBatch(index: number, xsData: TransferableTensor | TransferableTensor[], ysData: TransferableTensor | TransferableTensor[], last = false, scale = 0): void {
    const start = performance.now();
    const clock = threadClock();
    const part = last ? this.last : this.main;
    const xs = fromTransferable(xsData);
    const ys = fromTransferable(ysData);
    const n = xs.tensors[0].shape[0];
    let computed: ReturnType<typeof microBatchGradients>;
    try {
      // The gradients times the window's scale (see `windowScale`), as GradientAccumulator.step scales them.
      const loss = () => countedForm(this.loss(ys.value, this.model.apply(xs.value, { training: true }) as tf.Tensor | tf.Tensor[]));
      computed = microBatchGradients(OWNER, this.averaging, loss, this.vars, undefined, n, () => 2 ** -scale, this.seed);
    } finally {
      tf.dispose([...xs.tensors, ...ys.tensors]);
    }
    const { gradients, objective, lossScale, counted, count } = computed;
    let fresh: tf.Tensor[] = [];
    let finite = false;
    try {
      const read = sumAndRead(part.sums, gradients, 1, { objective, scale: lossScale }, count, counted.count);
      fresh = read.sums.filter((s, i): s is tf.Tensor => s !== null && s !== part.sums[i]);
      finite = isMicroBatchFinite(OWNER, { loss: read.loss, probe: read.probe, count: read.count, countFromLoss: count !== null }, 'loss');
      this.reports.push({ index, loss: read.loss, count: read.count, finite, last });
      if (finite) {
        tf.dispose(part.sums.filter((s, i): s is tf.Tensor => s !== null && s !== read.sums[i]));
        part.sums = read.sums;
        part.microBatches += 1;
        part.count += read.count;
        part.unit = part.unit === 'counts' ? 'counts' : counted.unit;
        part.lossSum += read.count === 0 ? 0 : read.loss * read.count;
      }
    } finally {
      if (!finite) tf.dispose(fresh);
      tf.dispose([objective, ...(count === null ? [] : [count]), ...gradients.filter((g): g is tf.Tensor => g !== null)]);
      this.timing.computeMs += performance.now() - start;
      this.timing.microBatches += 1;
      const used = clockSince(clock);
      this.timing.cpuMs += used.cpuMs;
      this.timing.runQueueMs += used.runQueueMs;
    }
  }

  /** Writes both parts into their shared buffers, reports them with the timings, and starts empty again. */
  reduce(id: number): SumsMessage {
    const start = performance.now();
    const write = (part: Part, view: Float32Array) => {
      const { offsets, sizes } = this.layout;
      part.sums.forEach((s, i) => {
        const target = view.subarray(offsets[i], offsets[i] + sizes[i]);
        if (s === null) target.fill(0);
        else target.set(s.dataSync() as Float32Array);
      });
      return this.describe(part);
    };
    const sums = write(this.main, this.sumView);
    const last = this.last.microBatches > 0 ? write(this.last, this.lastView) : null;
    this.timing.packMs += performance.now() - start;
    const message: SumsMessage = { type: 'sums', id, sums, last, reports: this.reports, timing: { ...this.timing } };
    this.discard();
    return message;
  }

  /** Drops the sums, reports and timings gathered since the last reduce, and the seed: between windows a replica holds only its model. */
  discard(): void {
    for (const part of [this.main, this.last]) tf.dispose(part.sums.filter((s): s is tf.Tensor => s !== null));
    this.seed.dispose();
    this.main = this.emptyPart();
    this.last = this.emptyPart();
    this.reports = [];
    Object.assign(this.timing, { computeMs: 0, unpackMs: 0, packMs: 0, idleMs: 0, gcMs: 0, messages: 0, microBatches: 0, cpuMs: 0, runQueueMs: 0 });
  }

  /** Counts one handled message (for the timing report). */
  countMessage(): void {
    this.timing.messages += 1;
  }

  /** Loads the trainable weights the main thread wrote into the shared buffer after an update. */
  readTrainableWeights(): void {
    const start = performance.now();
    const { offsets, sizes } = this.layout;
    tf.tidy(() => this.vars.forEach((v, i) => v.assign(tf.tensor(this.weightView.slice(offsets[i], offsets[i] + sizes[i]), v.shape))));
    this.timing.unpackMs += performance.now() - start;
  }

  /** Follows the main model's `trainable` flags: a frozen variable gets no gradient from the next micro-batch on. */
  setTrainable(flags: boolean[]): void {
    setTrainableFlags(this.vars, flags);
  }

  /** Loads every weight of the model (trainable or not), in `model.weights` order. */
  setAllWeights(weights: TransferableTensor[]): void {
    const tensors = weights.map((w) => tf.tensor(w.values, w.shape));
    this.model.setWeights(tensors);
    tf.dispose(tensors);
  }

  dispose(): void {
    this.discard();
    this.model.dispose();
  }

  private emptyPart(): Part {
    return { sums: this.vars.map(() => null), microBatches: 0, count: 0, unit: null, lossSum: 0 };
  }

  private describe(part: Part): PartSums {
    const unit = part.unit ?? (this.averaging === 'per-micro-batch' ? 'micro-batches' : 'samples');
    return { microBatches: part.microBatches, count: part.count, unit, lossSum: part.lossSum, touched: part.sums.map((s) => s !== null) };
  }
}

/**
 * A loss output in the core's terms: `{ loss, count }` with a number count becomes a scalar
 * count (the core reads it with the loss); tensors pass as they are.
 */
function countedForm(out: unknown): tf.Tensor | CountedLoss {
  if (out !== null && typeof out === 'object' && !(out instanceof tf.Tensor) && typeof (out as { count?: unknown }).count === 'number') {
    const { loss, count } = out as { loss: tf.Tensor; count: number };
    return { loss, count: tf.scalar(count) };
  }
  return out as tf.Tensor | CountedLoss;
}
