import * as tf from '@tensorflow/tfjs';
import { argumentError } from './errors';

/** A named tensor as tfjs optimizers exchange them (not re-exported by `@tensorflow/tfjs`). */
type NamedTensor = { name: string; tensor: tf.Tensor };
import { GradientAccumulator, GradientAccumulatorArgs, StepResult } from './gradientAccumulator';

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
 * The callback is optional but recommended: it tells the optimizer each batch's size, so a short
 * last batch is weighted exactly under `"per-sample"` normalization, and it flushes a short last
 * window at the end of every epoch. Without it every batch counts once and a partial window
 * carries over into the next epoch (as in Keras 3).
 *
 * Note: `iterations` counts updates, not batches, so schedules built on it see update steps.
 */
export class AccumulatingOptimizer extends tf.Optimizer {
  /** Registered name for tfjs serialization. */
  static get className(): string {
    return 'AccumulatingOptimizer';
  }
  /** The accumulator that does the work: its counters and `getState()` are available here. */
  readonly accumulator: GradientAccumulator;
  /** What the last batch did, or null before the first. */
  lastStep: StepResult | null = null;
  /** The current batch's logs object from `model.fit`, read when its gradient arrives. */
  private batchLogs: tf.Logs | null = null;

  constructor(args: AccumulatingOptimizerArgs) {
    super();
    if (args !== null && typeof args === 'object' && 'varList' in args) {
      throw argumentError('AccumulatingOptimizer', 'varList', 'left out: model.fit chooses the variables', (args as { varList: unknown }).varList);
    }
    this.accumulator = new GradientAccumulator(args);
  }

  /** The wrapped optimizer. */
  get inner(): tf.Optimizer {
    return this.accumulator.optimizer;
  }

  /** Adds one batch's gradient; on the window's last batch, updates the weights. */
  applyGradients(variableGradients: tf.NamedTensorMap | NamedTensor[]): void {
    const grads: tf.NamedTensorMap = Array.isArray(variableGradients)
      ? Object.fromEntries(variableGradients.map((g) => [g.name, g.tensor]))
      : variableGradients;
    const size = this.batchLogs?.size;
    this.batchLogs = null;
    const sampleCount = typeof size === 'number' ? size : null;
    this.lastStep = this.accumulator.addGradients(grads, sampleCount);
    if (this.lastStep.applied) this.incrementIterations();
  }

  /**
   * A `model.fit` callback that reports each batch's size before it runs and flushes a short
   * last window at the end of each epoch.
   */
  callback(): tf.CustomCallback {
    return new tf.CustomCallback({
      onBatchBegin: async (_batch, logs) => {
        // Note: tfjs-layers writes `size` into this logs object only after onBatchBegin returns
        // (its docs say before), but before the batch's gradient is computed, so we keep the
        // object and read the size in applyGradients.
        this.batchLogs = logs ?? null;
      },
      onEpochEnd: async () => {
        const update = this.accumulator.endEpoch();
        if (update?.applied) this.incrementIterations();
      },
    });
  }

  /** Applies a short last window now (see `GradientAccumulator.flush`). */
  flush(): void {
    if (this.accumulator.flush().applied) this.incrementIterations();
  }

  override getConfig(): tf.serialization.ConfigDict {
    return {
      optimizer: { className: this.inner.getClassName(), config: this.inner.getConfig() },
      normalization: this.accumulator.normalization,
      clipNorm: this.accumulator.clipNorm,
      nonFinite: this.accumulator.nonFinite,
    };
  }

  /** The wrapped optimizer's weights (slot variables and its iteration count). */
  override async getWeights(): Promise<NamedTensor[]> {
    return this.inner.getWeights();
  }

  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    await this.inner.setWeights(weightValues);
  }

  /** Disposes the accumulators and the wrapped optimizer, which this optimizer owns. */
  override dispose(): void {
    this.accumulator.dispose();
  }
}
