import * as tf from '@tensorflow/tfjs';
import { GradientAccumulatorArgs, StepResult, isBiasOrNormalization } from './accumulatorArgs';
import { argumentError } from './errors';
import { GradientAccumulator } from './gradientAccumulator';
import { loadSavedWeights, weightsToSave } from './optimizerWeights';
import { refuseForeignFit } from './peers';
import { epochSchedule, epochScheduleTable } from './schedule';

/** A named tensor as tfjs optimizers exchange them (not re-exported by `@tensorflow/tfjs`). */
type NamedTensor = { name: string; tensor: tf.Tensor };

const OWNER = 'AccumulatingOptimizer';

/** Options of {@link AccumulatingOptimizer}: those of `GradientAccumulator` but `varList`, which `model.fit` decides. */
export type AccumulatingOptimizerArgs = Omit<GradientAccumulatorArgs, 'varList'>;

/**
 * A `tf.Optimizer` that makes `model.fit` accumulate: it adds each batch's gradient and updates
 * the weights once every `accumulationSteps` batches, with the wrapped optimizer (the tfjs
 * counterpart of Keras 3's `gradient_accumulation_steps`).
 *
 * ```ts
 * const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(1e-3), accumulationSteps: 4 });
 * model.compile({ optimizer, loss: 'categoricalCrossentropy' });
 * await model.fit(xs, ys, { batchSize: 16, callbacks: [optimizer.callback()] });
 * ```
 *
 * The variables trained follow what `model.fit` hands over at every batch: freeze a layer,
 * recompile with the same optimizer, and it stops training; unfreeze it and it trains again
 * (a variable seen for the first time gets an accumulator).
 *
 * The callback is optional but recommended: it tells the optimizer each batch's size, so a short
 * last batch is weighted exactly under `"per-sample"` averaging, and it applies a short last
 * window on the epoch's last batch, before tfjs computes the validation loss, so that `val_loss`
 * describes the weights after the epoch's last update. Without it every batch counts once and a
 * partial window carries over into the next epoch (as in Keras 3).
 *
 * Saved with `model.save(…, { includeOptimizer: true })` it is restored by `tf.loadLayersModel`
 * with its wrapped optimizer, `accumulationSteps`, averaging, clipping and non-finite policy.
 *
 * Note: `iterations` counts updates, not batches, so schedules built on it see update steps.
 */
export class AccumulatingOptimizer extends tf.Optimizer {
  /** Registered name for tfjs serialization. */
  static get className(): string {
    return OWNER;
  }
  /** The accumulator that does the work: its counters and `getState()` are available here. */
  readonly accumulator: GradientAccumulator;
  /** What the last batch did, or null before the first. */
  lastStep: StepResult | null = null;
  /** The current batch's logs object from `model.fit`, read when its gradient arrives. */
  private batchLogs: tf.Logs | null = null;
  /** Whether the current batch is its epoch's last (known from the fit's params). */
  private lastBatchOfEpoch = false;
  /** Whether the epoch already ended on its last batch. */
  private epochEnded = false;

  constructor(args: AccumulatingOptimizerArgs) {
    super();
    if (args !== null && typeof args === 'object' && 'varList' in args) {
      throw argumentError(OWNER, 'varList', 'left out: model.fit chooses the variables', (args as { varList: unknown }).varList);
    }
    this.accumulator = new GradientAccumulator(args);
  }

  /** The wrapped optimizer. */
  get inner(): tf.Optimizer {
    return this.accumulator.optimizer;
  }

  /** Adds one batch's gradient; on the window's last batch (or the epoch's, with the callback), updates the weights. */
  applyGradients(variableGradients: tf.NamedTensorMap | NamedTensor[]): void {
    const grads: tf.NamedTensorMap = Array.isArray(variableGradients)
      ? Object.fromEntries(variableGradients.map((g) => [g.name, g.tensor]))
      : variableGradients;
    const size = this.batchLogs?.size;
    const last = this.lastBatchOfEpoch;
    this.batchLogs = null;
    this.lastBatchOfEpoch = false;
    this.lastStep = this.accumulator.addGradients(grads, typeof size === 'number' ? size : null);
    if (this.lastStep.applied) this.incrementIterations();
    if (last) {
      // tfjs computes validation right after this batch, before onEpochEnd: end the epoch now.
      this.epochEnded = true;
      if (this.accumulator.endEpoch()?.applied) this.incrementIterations();
    }
  }

  /**
   * A `model.fit` / `model.fitDataset` callback that reports each batch's size and ends each
   * epoch on its last batch (a short last window is applied before validation).
   *
   * The last batch is known from the fit's params: `ceil(samples / batchSize)` for `fit`, and
   * `batchesPerEpoch` or the dataset's size for `fitDataset`. With validation data and no way to
   * know it (a dataset of unknown size without `batchesPerEpoch`), it throws at the start of
   * training rather than let `val_loss` describe weights that are about to change. Driven by the
   * `model.fit` of another copy of `@tensorflow/tfjs`, it throws `TfjsCopiesError`.
   */
  callback(): tf.CustomCallback {
    let batchesPerEpoch: number | null = null;
    const callback: tf.CustomCallback = new tf.CustomCallback({
      onTrainBegin: async () => {
        const p = callback.params as { samples?: number | null; batchSize?: number | null; steps?: number | null; doValidation?: boolean };
        batchesPerEpoch = p.steps ?? (p.samples != null && p.batchSize != null ? Math.ceil(p.samples / p.batchSize) : null);
        if (p.doValidation === true && batchesPerEpoch === null) {
          throw new Error(
            `${OWNER}.callback: with validation data, the number of batches per epoch must be known so that the epoch's last window ` +
              'is applied before tfjs computes val_loss; pass batchesPerEpoch to fitDataset, or use a dataset of known size.',
          );
        }
      },
      onEpochBegin: async () => {
        this.epochEnded = false;
      },
      onBatchBegin: async (batch, logs) => {
        // Note: tfjs-layers writes `size` into this logs object only after onBatchBegin returns
        // (its docs say before), but before the batch's gradient is computed, so we keep the
        // object and read the size in applyGradients.
        this.batchLogs = logs ?? null;
        this.lastBatchOfEpoch = batchesPerEpoch !== null && batch === batchesPerEpoch - 1;
      },
      onEpochEnd: async () => {
        if (this.epochEnded) return;
        if (this.accumulator.endEpoch()?.applied) this.incrementIterations();
      },
    });
    // Another copy of tfjs in the process would loop on this callback: refuse it by name.
    return refuseForeignFit(callback, `${OWNER}.callback`);
  }

  /** Applies a short last window now (see `GradientAccumulator.flush`). */
  flush(): void {
    if (this.accumulator.flush().applied) this.incrementIterations();
  }

  /**
   * The configuration tfjs saves with the model: the wrapped optimizer's class and config, and
   * the accumulator's options. A schedule from `epochSchedule` is saved as its table; any other
   * schedule function cannot be saved and throws here.
   */
  override getConfig(): tf.serialization.ConfigDict {
    const steps = this.accumulator.accumulationSteps;
    let accumulationSteps: tf.serialization.ConfigDictValue;
    if (typeof steps === 'number') accumulationSteps = steps;
    else {
      const table = epochScheduleTable(steps);
      if (table === null) {
        throw new Error(
          `${OWNER}: a schedule function cannot be saved with the model; use a number or epochSchedule({ … }) for accumulationSteps, or save without includeOptimizer.`,
        );
      }
      accumulationSteps = { epochSchedule: table };
    }
    const options = this.accumulator.options;
    const refuse = (what: string) => {
      throw new Error(`${OWNER}: ${what} cannot be saved with the model; leave it out, or save without includeOptimizer.`);
    };
    if (options.learningRate !== null) refuse('a learningRate schedule (a function)');
    if (options.weightDecay !== null && options.weightDecay.exclude !== isBiasOrNormalization) refuse('a custom weightDecay.exclude (a function)');
    return {
      optimizer: { className: this.inner.getClassName(), config: this.inner.getConfig() },
      accumulationSteps,
      averaging: this.accumulator.averaging,
      clipNorm: this.accumulator.clipNorm,
      nonFinite: this.accumulator.nonFinite,
      ...(options.skipLargeUpdates === null ? {} : { skipLargeUpdates: { ...options.skipLargeUpdates } as tf.serialization.ConfigDict }),
      ...(options.weightDecay === null ? {} : { weightDecay: { rate: options.weightDecay.rate } }),
      ...(options.ema === null ? {} : { ema: { decay: options.ema.decay } }),
    };
  }

  /** Rebuilds the optimizer from {@link getConfig}'s output (what `tf.loadLayersModel` calls). */
  static override fromConfig<T extends tf.serialization.Serializable>(cls: tf.serialization.SerializableConstructor<T>, config: tf.serialization.ConfigDict): T {
    const inner = config.optimizer as { className?: string; config?: tf.serialization.ConfigDict } | null;
    const entry = inner?.className === undefined ? undefined : tf.serialization.SerializationMap.getMap().classNameMap[inner.className];
    if (entry === undefined) throw argumentError(`${OWNER}.fromConfig`, 'config.optimizer', 'the config of a registered tf.Optimizer class', inner?.className);
    const [innerClass, innerFromConfig] = entry;
    const optimizer = innerFromConfig(innerClass, inner?.config ?? {}) as unknown as tf.Optimizer;
    const steps = config.accumulationSteps as number | { epochSchedule: Record<number, number> };
    return new cls({
      optimizer,
      accumulationSteps: typeof steps === 'number' ? steps : epochSchedule(steps.epochSchedule),
      averaging: config.averaging ?? undefined,
      clipNorm: config.clipNorm ?? undefined,
      nonFinite: config.nonFinite ?? undefined,
      ...(config.skipLargeUpdates == null ? {} : { skipLargeUpdates: Object.fromEntries(Object.entries(config.skipLargeUpdates as object).filter(([, v]) => v !== null)) }),
      ...(config.weightDecay == null ? {} : { weightDecay: config.weightDecay }),
      ...(config.ema == null ? {} : { ema: config.ema }),
    } as never);
  }

  /**
   * The wrapped optimizer's weights (slot variables and its iteration count) and, for a built-in
   * tfjs optimizer, its running scalars, so that a model saved with `includeOptimizer` resumes
   * bit for bit (see `weightsToSave`).
   */
  override async getWeights(): Promise<NamedTensor[]> {
    return weightsToSave(this.inner);
  }

  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    await loadSavedWeights(this.inner, weightValues);
  }

  /** Disposes the accumulators and the wrapped optimizer, which this optimizer owns. */
  override dispose(): void {
    this.accumulator.dispose();
  }
}

tf.serialization.registerClass(AccumulatingOptimizer);
