import * as tf from '@tensorflow/tfjs';
// Registering the project's layers, so that a model using them can be rebuilt from its JSON.
import '../core/norm/groupNormalization';
import '../core/norm/batchRenormalization';
import '../core/norm/frozenBatchNormalization';
import { LossFunction, loadModule, resolveLoss } from './loss';
import { FromWorker, MicroBatchReport, PackedLayout, ReplicaInit, TransferableTensor, packedLayout } from './protocol';

type SumsMessage = Extract<FromWorker, { type: 'sums' }>;

/**
 * One worker's copy of the model and its running gradient sums: everything a worker does,
 * without the messaging, so the main thread's tests can drive it directly.
 *
 * Per micro-batch it runs forward and backward and adds the gradient of the micro-batch's
 * *summed* loss into its sums (a mean loss times the micro-batch's count), so that sums from
 * any number of workers add up to the window's sum, to be divided once by the window's total
 * count, exactly as `GradientAccumulator` does on one thread.
 */
export class Replica {
  private sums: tf.Tensor[] | null = null;
  private touched: boolean[];
  private reports: MicroBatchReport[] = [];
  private microBatches = 0;
  private count = 0;
  private computeMs = 0;
  private unpackMs = 0;
  private readonly layout: PackedLayout;
  private readonly vars: tf.Variable[];

  private constructor(
    readonly model: tf.LayersModel,
    private readonly loss: LossFunction,
    private readonly averaging: ReplicaInit['averaging'],
    private readonly weightView: Float32Array,
    private readonly sumView: Float32Array,
  ) {
    this.vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
    this.layout = packedLayout(this.vars.map((v) => v.shape));
    this.touched = this.vars.map(() => false);
  }

  /** Rebuilds the model from its JSON and weights on the active backend and finds the loss. */
  static async create(init: ReplicaInit): Promise<Replica> {
    for (const m of init.modules) loadModule(m);
    const model = await tf.models.modelFromJSON({ modelTopology: init.modelTopology } as tf.io.ModelJSON);
    const replica = new Replica(
      model,
      resolveLoss(init.loss),
      init.averaging,
      new Float32Array(init.weightBuffer),
      new Float32Array(init.sumBuffer),
    );
    replica.setAllWeights(init.weights);
    return replica;
  }

  /**
   * Forward and backward on one micro-batch; adds its gradient into the sums unless its loss or
   * gradient is non-finite (then it is only reported). One host read per micro-batch, local to
   * this thread: the loss to report and the finiteness check together.
   */
  addMicroBatch(index: number, xsData: TransferableTensor, ysData: TransferableTensor): void {
    const start = performance.now();
    const vars = this.vars;
    const n = xsData.shape[0];
    let tokenCount: tf.Tensor | null = null;
    let failure: unknown = null;
    let countIsNumber: number | null = null;
    const compute = () => tf.tidy(() => {
      const xs = tf.tensor(xsData.values, xsData.shape);
      const ys = tf.tensor(ysData.values, ysData.shape);
      const { value, grads } = tf.variableGrads(() => {
        try {
          const out = this.loss(ys, this.model.apply(xs, { training: true }) as tf.Tensor);
          const { objective, count } = this.objective(out, n);
          if (count instanceof tf.Tensor) tokenCount = tf.keep(count);
          else countIsNumber = count;
          return objective;
        } catch (error) {
          // As in GradientAccumulator.step: let variableGrads finish so its tape is freed.
          failure = error;
          return tf.scalar(0);
        }
      }, vars);
      const gradients = vars.map((v) => grads[v.name] ?? null);
      const total = gradients.reduce<tf.Tensor>((acc, g) => (g === null ? acc : tf.add(acc, tf.sum(g))), tf.scalar(0));
      const count = tokenCount ?? tf.scalar(countIsNumber ?? 1);
      // (tidy's types exclude null; the nulls are variables the loss did not reach.)
      return { gradients: gradients as tf.Tensor[], check: tf.stack([value, total, count]) };
    }) as { gradients: (tf.Tensor | null)[]; check: tf.Tensor };
    let computed: ReturnType<typeof compute>;
    try {
      computed = compute();
    } catch (error) {
      // variableGrads rejects the stand-in scalar (it reaches no variable); report the real cause.
      throw failure ?? error;
    }
    const { gradients, check } = computed;
    const [objective, total, count] = check.dataSync();
    check.dispose();
    (tokenCount as tf.Tensor | null)?.dispose();
    if (failure !== null) {
      tf.dispose(gradients.filter((g): g is tf.Tensor => g !== null));
      throw failure;
    }
    const finite = Number.isFinite(objective) && Number.isFinite(total);
    const meanLoss = this.averaging === 'per-micro-batch' ? objective : objective / count;
    this.reports.push({ index, loss: meanLoss, count, finite });
    if (finite) {
      const previous = this.sums;
      this.sums = tf.tidy(() => gradients.map((g, i) => {
        if (previous === null) return g === null ? tf.zeros(vars[i].shape) : g.clone();
        return g === null ? previous[i].clone() : tf.add(previous[i], g);
      }));
      if (previous) tf.dispose(previous);
      this.touched = this.touched.map((t, i) => t || gradients[i] !== null);
      this.microBatches += 1;
      this.count += count;
    }
    tf.dispose(gradients.filter((g): g is tf.Tensor => g !== null));
    this.computeMs += performance.now() - start;
  }

  /** Writes the sums into the shared buffer, reports them, and starts empty again. */
  reduce(id: number): SumsMessage {
    const start = performance.now();
    const { offsets, sizes } = this.layout;
    this.vars.forEach((_, i) => {
      const target = this.sumView.subarray(offsets[i], offsets[i] + sizes[i]);
      if (this.sums === null) target.fill(0);
      else target.set(this.sums[i].dataSync() as Float32Array);
    });
    const message: SumsMessage = {
      type: 'sums',
      id,
      microBatches: this.microBatches,
      count: this.count,
      touched: [...this.touched],
      reports: this.reports,
      computeMs: this.computeMs,
      packMs: performance.now() - start,
      unpackMs: this.unpackMs,
    };
    this.discard();
    return message;
  }

  /** Drops the sums and reports gathered since the last reduce. */
  discard(): void {
    if (this.sums) tf.dispose(this.sums);
    this.sums = null;
    this.touched = this.vars.map(() => false);
    this.reports = [];
    this.microBatches = 0;
    this.count = 0;
    this.computeMs = 0;
    this.unpackMs = 0;
  }

  /** Loads the trainable weights the main thread wrote into the shared buffer after an update. */
  readTrainableWeights(): void {
    const start = performance.now();
    const { offsets, sizes } = this.layout;
    tf.tidy(() => this.vars.forEach((v, i) => v.assign(tf.tensor(this.weightView.slice(offsets[i], offsets[i] + sizes[i]), v.shape))));
    this.unpackMs += performance.now() - start;
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

  /** The objective to differentiate (a summed loss) and the count it sums over. */
  private objective(out: unknown, n: number): { objective: tf.Scalar; count: tf.Tensor | number } {
    const describe = (v: unknown) => (v instanceof tf.Tensor ? `a tensor of shape [${v.shape.join(', ')}]` : typeof v);
    if (this.averaging === 'per-micro-batch') {
      if (!(out instanceof tf.Tensor) || out.rank !== 0) {
        throw new Error(`the loss must return a scalar mean loss under averaging "per-micro-batch"; it returned ${describe(out)}`);
      }
      return { objective: out as tf.Scalar, count: 1 };
    }
    if (out instanceof tf.Tensor) {
      if (out.rank === 0) {
        // The same objective as GradientAccumulator.step with sampleCount n: the mean times n
        // (no multiply when n is 1), so the gradient is bit for bit the single-thread one.
        return { objective: (n === 1 ? out : tf.mul(out, n)) as tf.Scalar, count: n };
      }
      if (out.rank === 1 && out.size > 0) return { objective: tf.sum(out) as tf.Scalar, count: out.size };
      throw new Error(`the loss must return a scalar mean, a non-empty 1-D per-sample loss, or { loss, count }; it returned ${describe(out)}`);
    }
    const pair = out as { loss?: unknown; count?: unknown } | null;
    if (pair !== null && typeof pair === 'object' && pair.loss instanceof tf.Tensor && pair.loss.rank === 0) {
      const c = pair.count;
      if ((typeof c === 'number' && c > 0) || (c instanceof tf.Tensor && c.rank === 0)) {
        return { objective: pair.loss as tf.Scalar, count: c instanceof tf.Tensor ? tf.cast(c, 'float32') : c };
      }
    }
    throw new Error(`the loss must return a scalar mean, a 1-D per-sample loss, or { loss: summedScalar, count }; it returned ${describe(out)}`);
  }
}
