import * as tf from '@tensorflow/tfjs';
import { GradientAccumulatorArgs, StepResult, isBiasOrNormalization } from './accumulatorArgs';
import { argumentError, verbatim } from './errors';
import { GradientAccumulator } from './gradientAccumulator';
import { isStateWeight, stateFromWeights, stateToWeights } from './modelState';
import { loadSavedWeights, weightsToSave } from './optimizerWeights';
import { refuseForeignFit } from './peers';
import { epochSchedule, epochScheduleTable } from './schedule';
import type { AccumulatorState } from './state';
import { checkState } from './stateFormat';

/** A named tensor as tfjs optimizers exchange them (not re-exported by `@tensorflow/tfjs`). */
type NamedTensor = { name: string; tensor: tf.Tensor };

const OWNER = 'AccumulatingOptimizer';

/** Options of {@link AccumulatingOptimizer}: those of `GradientAccumulator` but `varList`, which `model.fit` decides. */
export type AccumulatingOptimizerArgs = Omit<GradientAccumulatorArgs, 'varList'>;

/**
 * A batch reached an `AccumulatingOptimizer` without its callback announcing it (`trainOnBatch`,
 * `optimizer.minimize`, or `fit` without `callbacks: [optimizer.callback()]`): its size and the
 * epoch's end would be unknown and the training would silently differ from the big batch. Nothing
 * was changed.
 */
export class MissingCallbackError extends Error {
  override name = 'MissingCallbackError';
}

/** tfjs's `CustomCallback` that keeps the model it fits (tfjs calls `setModel` on every callback; the base one drops it). */
class FitCallback extends tf.CustomCallback {
  fitted: tf.LayersModel | null = null;
  override setModel(model: Parameters<tf.CustomCallback['setModel']>[0]): void {
    this.fitted = model as unknown as tf.LayersModel;
  }
}

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
 * Its callback is required: it tells the optimizer each batch's size (so a short last batch is
 * weighted exactly under `"per-sample"` averaging), the epoch (for an `epochSchedule`; it
 * follows `initialEpoch`) and the epoch's last batch, on which it applies a short last window
 * before tfjs computes the validation loss. A batch without it is refused by name
 * ({@link MissingCallbackError}); so are the callback of another optimizer and a window left open
 * by another model's batches. For a loop of your own, use `GradientAccumulator`.
 *
 * The variables trained follow what `model.fit` hands over at every batch: freeze a layer,
 * recompile with the same optimizer, and it stops training; unfreeze it and it trains again
 * (a variable seen for the first time gets an accumulator).
 *
 * Saved with `model.save(…, { includeOptimizer: true })` it is restored by `tf.loadLayersModel`
 * with its options, its wrapped optimizer and the accumulator's whole state (counters and epoch,
 * the open window and its sums, the norm history, the averages): the next `fit` continues bit
 * for bit. The state joins the loaded model's variables when its first `fit` begins.
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
  /** The batch model.fit is about to apply, as its callback announced it: its logs (tfjs fills in `size`) and whether it ends the epoch. */
  private announced: { logs: tf.Logs | null; last: boolean } | null = null;
  /** Whether the epoch already ended on its last batch. */
  private epochEnded = false;
  /** The model the callback last saw fitting: its `originalName`s name the state's variables when saved. */
  private model: tf.LayersModel | null = null;
  /** A state loaded with the model (`setWeights`), restored onto the model's variables when its first fit begins. */
  private loaded: AccumulatorState | null = null;
  /** Tensors the last `getWeights` created for tfjs to save, freed at the next one or at `dispose`. */
  private saved: tf.Tensor[] = [];

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

  /** Updates applied: the accumulator's `updateStep`, one count for both. */
  override get iterations(): number {
    return this.accumulator.updateStep;
  }

  /** Adds one batch's gradient; on the window's last batch (or the epoch's), updates the weights. */
  applyGradients(variableGradients: tf.NamedTensorMap | NamedTensor[]): void {
    const batch = this.announced;
    if (batch === null) {
      throw new MissingCallbackError(
        `${OWNER}: a batch arrived that its callback did not announce, so its size and the epoch's end are unknown. ` +
          "Pass callbacks: [optimizer.callback()] to model.fit or model.fitDataset, with this optimizer's callback. " +
          'trainOnBatch and optimizer.minimize cannot tell it: use GradientAccumulator in a loop of your own. Nothing was changed.',
      );
    }
    const grads: tf.NamedTensorMap = Array.isArray(variableGradients)
      ? Object.fromEntries(variableGradients.map((g) => [g.name, g.tensor]))
      : variableGradients;
    const size = batch.logs?.size;
    this.announced = null;
    this.lastStep = this.accumulator.addGradients(grads, typeof size === 'number' ? size : null);
    if (batch.last) {
      // tfjs computes validation right after this batch, before onEpochEnd: end the epoch now.
      this.epochEnded = true;
      this.accumulator.endEpoch();
    }
  }

  /**
   * The `model.fit` / `model.fitDataset` callback this optimizer needs: it announces each batch
   * (its size), follows the fit's epochs and ends each epoch on its last batch (a short last
   * window is applied before validation).
   *
   * The last batch is known from the fit's params: `ceil(samples / batchSize)` for `fit`, and
   * `batchesPerEpoch` or the dataset's size for `fitDataset`. With validation data and no way to
   * know it (a dataset of unknown size without `batchesPerEpoch`), it throws at the start of
   * training rather than let `val_loss` describe weights that are about to change. Driven by the
   * `model.fit` of another copy of `@tensorflow/tfjs`, it throws `TfjsCopiesError`.
   */
  callback(): tf.CustomCallback {
    let batchesPerEpoch: number | null = null;
    const callback: FitCallback = new FitCallback({
      onTrainBegin: async () => {
        this.announced = null;
        await this.bind(callback.fitted);
        const p = callback.params as { samples?: number | null; batchSize?: number | null; steps?: number | null; doValidation?: boolean };
        batchesPerEpoch = p.steps ?? (p.samples != null && p.batchSize != null ? Math.ceil(p.samples / p.batchSize) : null);
        if (p.doValidation === true && batchesPerEpoch === null) {
          throw new Error(
            `${OWNER}.callback: with validation data, the number of batches per epoch must be known so that the epoch's last window ` +
              'is applied before tfjs computes val_loss; pass batchesPerEpoch to fitDataset, or use a dataset of known size.',
          );
        }
      },
      onEpochBegin: async (epoch) => {
        this.epochEnded = false;
        // A fit resumed with initialEpoch starts the schedule there; a later fit that counts from 0 again goes on from ours.
        while (this.accumulator.epoch < epoch) this.accumulator.endEpoch({ flush: false });
      },
      onBatchBegin: async (batch, logs) => {
        // Note: tfjs-layers writes `size` into this logs object only after onBatchBegin returns
        // (its docs say before), but before the batch's gradient is computed, so we keep the
        // object and read the size in applyGradients.
        this.announced = { logs: logs ?? null, last: batchesPerEpoch !== null && batch === batchesPerEpoch - 1 };
      },
      onEpochEnd: async () => {
        if (!this.epochEnded) this.accumulator.endEpoch();
      },
      onTrainEnd: async () => {
        this.announced = null;
      },
    });
    // Another copy of tfjs in the process would loop on this callback: refuse it by name.
    return refuseForeignFit(callback, `${OWNER}.callback`);
  }

  /**
   * At the start of a fit: checks that the model fitting uses this optimizer, restores a state
   * loaded with it onto its variables, and refuses a window left open by another model.
   */
  private async bind(model: tf.LayersModel | null): Promise<void> {
    if (model === null || model.optimizer !== this) {
      throw argumentError(`${OWNER}.callback`, 'callbacks', "the callback of the optimizer the model was compiled with (optimizer.callback() of model.optimizer)", model === null ? undefined : model.optimizer);
    }
    this.model = model;
    if (this.loaded !== null) {
      const byOriginal = new Map(model.weights.map((w) => [w.originalName, (w.read() as tf.Variable).name]));
      const rename = (name: string) => {
        const found = byOriginal.get(name);
        if (found === undefined) throw argumentError(`${OWNER}.callback`, 'the model', `a model with the weight "${name}" that the saved accumulator state trains (the model it was saved with)`, verbatimList(byOriginal));
        return found;
      };
      const s = this.loaded;
      const state = { ...s, window: { ...s.window, touched: s.window.touched.map(rename) }, accumulators: s.accumulators.map((a) => ({ ...a, name: rename(a.name) })), ema: s.ema?.map((e) => (e === null ? null : { ...e, name: rename(e.name) })) ?? null };
      await this.accumulator.setState(state, { includeOptimizer: false });
      this.loaded = null;
    }
    const names = new Set(model.weights.map((w) => (w.read() as tf.Variable).name));
    const stray = this.accumulator.state.window.touched.find((n) => !names.has(n));
    if (stray !== undefined) {
      throw new Error(
        `${OWNER}.callback: the open window holds sums for "${stray}", which is no weight of the model being fit: an AccumulatingOptimizer trains one model. ` +
          'Give each model its own optimizer, or apply that window first (optimizer.flush()).',
      );
    }
  }

  /** Applies a short last window now (see `GradientAccumulator.flush`). */
  flush(): void {
    this.accumulator.flush();
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
   * What `model.save(…, { includeOptimizer: true })` stores: the wrapped optimizer's weights (its
   * slots and, for a built-in tfjs optimizer, its running scalars, see `weightsToSave`) and the
   * accumulator's state (see modelState.ts), both taken at the call.
   */
  override async getWeights(): Promise<NamedTensor[]> {
    const state = this.loaded ?? this.accumulator.getState({ includeOptimizer: false });
    const inner = weightsToSave(this.inner);
    const byName = new Map((this.model?.weights ?? []).map((w) => [(w.read() as tf.Variable).name, w.originalName]));
    const ours = stateToWeights(await state, (name) => (this.loaded === null ? byName.get(name) ?? name : name));
    const theirs = await inner;
    tf.dispose(this.saved);
    // The slot Variables are the optimizer's; the tensors made for this save (ours, its iteration count) are freed at the next save.
    this.saved = [...ours, ...theirs].map((w) => w.tensor).filter((t) => !(t instanceof tf.Variable));
    return [...theirs, ...ours];
  }

  /** Loads what {@link getWeights} saved (or what an older version saved: the wrapped optimizer's weights alone). */
  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    const loaded = await stateFromWeights(`${OWNER}.setWeights`, weightValues.filter((w) => isStateWeight(w.name)));
    // The layout is checked now; the variables when the first fit gives the model.
    const checked = loaded === null ? null : checkState(`${OWNER}.setWeights`, loaded, this.accumulator.averaging);
    await loadSavedWeights(this.inner, weightValues.filter((w) => !isStateWeight(w.name)));
    this.loaded = checked;
  }

  /** Disposes the accumulators and the wrapped optimizer, which this optimizer owns. */
  override dispose(): void {
    tf.dispose(this.saved);
    this.saved = [];
    this.accumulator.dispose();
  }
}

/** The model's weight names, for an error message. */
function verbatimList(names: Map<string, string>): unknown {
  const list = [...names.keys()];
  return verbatim(list.length === 0 ? 'a model without weights' : `a model with the weights ${list.slice(0, 4).map((n) => `"${n}"`).join(', ')}${list.length > 4 ? ', …' : ''}`);
}

tf.serialization.registerClass(AccumulatingOptimizer);
