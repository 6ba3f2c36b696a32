import * as tf from '@tensorflow/tfjs';
import { addWeighted, averageGradients, clipByGlobalNorm } from './accumulation';
import { argumentError, verbatim, describe, isPositiveFinite, isPositiveInteger } from './errors';
import {
  AccumulationSchedule,
  checkAccumulationSteps,
  resolveAccumulationSteps,
} from './schedule';
import {
  ACCUMULATOR_STATE_FORMAT,
  AccumulatorState,
  SetStateArgs,
  SerializedTensor,
  checkState,
  readTensor,
  renameOptimizerWeight,
} from './state';

/**
 * How the accumulated gradient is turned into the gradient of one large batch.
 *
 * - `"per-sample"` (default): the window's per-sample losses are summed and the sum is divided
 *   by the number of samples actually seen. Uneven micro-batches and a short last window then
 *   give exactly the gradient of one batch made of the same samples. The sample count comes from
 *   a 1-D per-sample loss returned by `lossFn`, or from `sampleCount` passed to `step`; a scalar
 *   loss with no count counts as one unit, which is exact for equal micro-batches.
 * - `"per-micro-batch"`: every micro-batch's mean loss counts once, i.e. each is scaled by
 *   `1 / accumulationSteps` (the textbook rule). Exact only when micro-batches are equal.
 *   `lossFn` must return a scalar.
 */
export type Normalization = 'per-sample' | 'per-micro-batch';

/**
 * What a NaN or ±Infinity in a micro-batch's loss or accumulated gradient does. Whatever the
 * policy, a non-finite value never reaches the weights.
 *
 * - `"error"` (default): `step` throws; weights, accumulators and counters stay as they were.
 * - `"skip-micro-batch"`: the micro-batch is dropped and does not count towards the window, so
 *   the window waits for one more good micro-batch.
 * - `"skip-window"`: the whole window is dropped: it still ends after `accumulationSteps`
 *   micro-batches, but then no update is applied and the accumulators are zeroed.
 */
export type NonFinitePolicy = 'error' | 'skip-micro-batch' | 'skip-window';

/** A tf.Variable, or a tfjs-layers `LayerVariable` (anything whose `read()` gives the Variable). */
export type TrainableVariable = tf.Variable | { read(): tf.Tensor };

/** Options of {@link GradientAccumulator}. */
export interface GradientAccumulatorArgs {
  /**
   * The optimizer that applies the accumulated gradient: any `tf.Optimizer` (SGD, momentum,
   * Adam, RMSProp, …). It runs once per window, so its iteration counter, and any learning-rate
   * schedule built on it, counts updates, not micro-batches. Required.
   */
  optimizer: tf.Optimizer;
  /**
   * Micro-batches per update: a positive integer, or a schedule evaluated at the start of every
   * window (see `epochSchedule`). Required.
   */
  accumulationSteps: number | AccumulationSchedule;
  /**
   * The variables to train. Default: the trainable variables that the first micro-step's loss
   * depends on, fixed from then on.
   *
   * Note: `optimizer.minimize` defaults to every registered trainable variable, which, with a
   * second model in memory (a reference copy, say), would allocate accumulators for its weights
   * too; we keep only the variables that received a gradient.
   */
  varList?: TrainableVariable[];
  /** How summed gradients are averaged. Default `"per-sample"`. */
  normalization?: Normalization;
  /**
   * Clip the accumulated gradient to this global L2 norm just before the update; micro-batch
   * gradients are never clipped on their own. Default: no clipping.
   */
  clipNorm?: number;
  /** What a non-finite loss or gradient does. Default `"error"`. */
  nonFinite?: NonFinitePolicy;
}

/** Options of one {@link GradientAccumulator.step}. */
export interface StepOptions {
  /**
   * The number of samples in this micro-batch, when `lossFn` returns their mean loss. Used by
   * `"per-sample"` normalization to weight uneven micro-batches. Default: taken from a 1-D loss,
   * otherwise the micro-batch counts as one unit.
   */
  sampleCount?: number;
}

/** What happened when a window ended (by its last micro-step, or by `flush`). */
export interface UpdateResult {
  /** True when the optimizer updated the weights. */
  applied: boolean;
  /** `"window"` when the window held a non-finite gradient and was dropped, else null. */
  skipped: 'window' | null;
  /** Updates applied so far, this one included. */
  updateStep: number;
  /** Micro-batches that the window counted. */
  microBatches: number;
  /** Samples (or units) the window's gradient was averaged over; 0 when nothing was applied. */
  weight: number;
  /** Global norm of the averaged gradient before clipping; null unless `clipNorm` is set and an update was applied. */
  gradientNorm: number | null;
}

/** What one micro-step did. */
export interface StepResult {
  /** This micro-batch's mean loss, unscaled (not divided by `accumulationSteps`), as one logs it. */
  loss: number;
  /** The samples this micro-batch counted for: its size when known, otherwise 1. */
  sampleCount: number;
  /** True when this micro-step completed a window and the weights were updated. */
  applied: boolean;
  /** `"micro-batch"` or `"window"` when a non-finite value made it skip something, else null. */
  skipped: 'micro-batch' | 'window' | null;
  /** Micro-steps taken so far, this one included. */
  microStep: number;
  /** Updates applied so far; use it for learning-rate schedules and logs. */
  updateStep: number;
  /** Epochs completed so far (advanced by `endEpoch`). */
  epoch: number;
  /** Micro-batches the current window has counted, this one included. */
  windowPosition: number;
  /** Micro-batches per update in the window this micro-step belongs to. */
  accumulationSteps: number;
  /** Global norm of the applied gradient before clipping; null unless `clipNorm` is set and an update was applied. */
  gradientNorm: number | null;
}

/** Thrown by `nonFinite: "error"`. Weights, accumulators and counters are unchanged when it is thrown. */
export class NonFiniteGradientError extends Error {
  override name = 'NonFiniteGradientError';
}

type Unit = 'samples' | 'micro-batches';

interface WindowState {
  /** Micro-batches per update of this window; null until its first micro-step. */
  size: number | null;
  /** Micro-batches counted so far. */
  microBatches: number;
  /** Samples (or units) summed into the accumulators so far. */
  weight: number;
  /** Whether the weight counts samples or micro-batches; null while the window is empty. */
  unit: Unit | null;
  /** A non-finite gradient arrived under `"skip-window"`. */
  poisoned: boolean;
  /** Which variables received a gradient, so untouched ones reach the optimizer as null, as in `minimize`. */
  touched: boolean[];
}

const OWNER = 'GradientAccumulator';

/**
 * Gradient accumulation for TensorFlow.js: trains with the batch you want on the memory you have.
 *
 * Each `step` runs one micro-batch forward and backward and adds its gradient into accumulators
 * (non-trainable Variables shaped like the weights, created once). On the window's last
 * micro-step the averaged gradient is clipped if asked, applied with the wrapped optimizer, and
 * the accumulators are zeroed.
 *
 * ```ts
 * const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: 4 });
 * for (const { xs, ys } of microBatches) {
 *   const { loss, applied } = acc.step(() => tf.losses.meanSquaredError(ys, model.predict(xs) as tf.Tensor));
 * }
 * acc.flush(); // apply a short last window
 * ```
 */
export class GradientAccumulator {
  /** The wrapped optimizer. The accumulator owns it: `dispose()` disposes it too, unless told to keep it. */
  readonly optimizer: tf.Optimizer;
  /** The normalization in use. */
  readonly normalization: Normalization;
  /** The clipping norm, or null. */
  readonly clipNorm: number | null;
  /** The non-finite policy in use. */
  readonly nonFinite: NonFinitePolicy;

  private readonly accumulationSteps: number | AccumulationSchedule;
  private vars: tf.Variable[] | null = null;
  private accumulators: tf.Variable[] | null = null;
  private microStepCount = 0;
  private updateStepCount = 0;
  private epochCount = 0;
  private skippedMicroBatchCount = 0;
  private skippedWindowCount = 0;
  private window: WindowState = emptyWindow(0);
  private disposed = false;

  constructor(args: GradientAccumulatorArgs) {
    if (args === null || typeof args !== 'object') {
      throw argumentError(OWNER, 'args', 'an object { optimizer, accumulationSteps, … }', args);
    }
    if (!(args.optimizer instanceof tf.Optimizer)) {
      throw argumentError(OWNER, 'optimizer', 'a tf.Optimizer (e.g. tf.train.sgd(0.01), tf.train.adam())', args.optimizer);
    }
    this.optimizer = args.optimizer;
    this.accumulationSteps = checkAccumulationSteps(OWNER, args.accumulationSteps);
    const normalization = args.normalization ?? 'per-sample';
    if (normalization !== 'per-sample' && normalization !== 'per-micro-batch') {
      throw argumentError(OWNER, 'normalization', '"per-sample" or "per-micro-batch"', normalization);
    }
    this.normalization = normalization;
    if (args.clipNorm !== undefined && !isPositiveFinite(args.clipNorm)) {
      throw argumentError(OWNER, 'clipNorm', 'a finite number > 0 (or left out for no clipping)', args.clipNorm);
    }
    this.clipNorm = args.clipNorm ?? null;
    const nonFinite = args.nonFinite ?? 'error';
    if (nonFinite !== 'error' && nonFinite !== 'skip-micro-batch' && nonFinite !== 'skip-window') {
      throw argumentError(OWNER, 'nonFinite', '"error", "skip-micro-batch" or "skip-window"', nonFinite);
    }
    this.nonFinite = nonFinite;
    if (args.varList !== undefined) this.vars = checkVarList(OWNER, args.varList);
  }

  /** Micro-steps taken so far. */
  get microStep(): number {
    return this.microStepCount;
  }
  /** Updates applied so far: the counter for learning-rate schedules and logs. */
  get updateStep(): number {
    return this.updateStepCount;
  }
  /** Epochs completed so far. */
  get epoch(): number {
    return this.epochCount;
  }
  /** Micro-batches dropped for non-finite values (under either skip policy). */
  get skippedMicroBatches(): number {
    return this.skippedMicroBatchCount;
  }
  /** Windows dropped under `"skip-window"`. */
  get skippedWindows(): number {
    return this.skippedWindowCount;
  }
  /** Micro-batches counted in the window now open (0 right after an update). */
  get pendingMicroBatches(): number {
    return this.window.microBatches;
  }
  /** The variables being trained, once known (after the first micro-step when `varList` was left out). */
  get variables(): readonly tf.Variable[] | null {
    return this.vars;
  }

  /**
   * One micro-step: computes this micro-batch's loss and gradient, adds the gradient to the
   * accumulators and, on the window's last micro-step, updates the weights.
   *
   * @param lossFn Returns the micro-batch loss: a scalar mean, or (for `"per-sample"`) a 1-D
   *   tensor of per-sample losses. It runs inside `tf.tidy`; it must not dispose its output.
   * @param options See {@link StepOptions}.
   * @throws If `lossFn` or `options` is invalid, or on a non-finite gradient under
   *   `nonFinite: "error"`; nothing has changed when it throws.
   */
  step(lossFn: () => tf.Tensor, options: StepOptions = {}): StepResult {
    this.checkAlive();
    if (typeof lossFn !== 'function') {
      throw argumentError(OWNER, 'lossFn', 'a function returning the micro-batch loss (a scalar mean, or a 1-D per-sample vector)', lossFn);
    }
    if (options === null || typeof options !== 'object') {
      throw argumentError(OWNER, 'options', 'an object { sampleCount? }', options);
    }
    const { sampleCount } = options;
    if (sampleCount !== undefined && !isPositiveInteger(sampleCount)) {
      throw argumentError(OWNER, 'sampleCount', 'a positive integer (the micro-batch size), or left out', sampleCount);
    }
    // Nothing below is committed until every check has passed, so a throw leaves no trace.
    const vars = this.vars ?? defaultVarList();
    let count = 1;
    let unit: Unit = 'micro-batches';
    let weight = 1;
    let failed = false;
    let failure: unknown;
    const compute = () =>
      tf.tidy(() => {
        const { value, grads } = tf.variableGrads(() => {
          try {
            const loss = lossFn();
            ({ count, unit, weight } = this.describeLoss(loss, sampleCount));
            // Note: the objective is the micro-batch's summed loss (a per-sample loss summed, a
            // mean times sampleCount), so its gradient needs no scaling here; the division by the
            // window's sample count happens once, at the update (see averageGradients).
            if (loss.rank === 1) return tf.sum(loss) as tf.Scalar;
            return (weight === 1 ? loss : tf.mul(loss, weight)) as tf.Scalar;
          } catch (error) {
            // tfjs never frees the tensors a tape saved for backprop when f throws inside
            // variableGrads. Returning a scalar lets it finish and clean up; we rethrow below.
            failed = true;
            failure = error;
            return tf.scalar(0);
          }
        }, vars);
        const meanLoss = unit === 'samples' ? tf.div(value, count) : value;
        return { gradients: vars.map((v) => grads[v.name] ?? null), meanLoss: meanLoss as tf.Scalar };
      });
    let computed: ReturnType<typeof compute>;
    try {
      computed = compute();
    } catch (error) {
      // variableGrads rejects the stand-in scalar (it reaches no variable); report the real cause.
      throw failed ? failure : error;
    }
    let { gradients, meanLoss } = computed;
    let trained = vars;
    if (this.vars === null) {
      trained = vars.filter((_, i) => gradients[i] !== null);
      gradients = gradients.filter((g) => g !== null);
    }
    try {
      return this.accumulate(trained, gradients, meanLoss, { count, unit, weight: 1 });
    } finally {
      tf.dispose([...gradients.filter((g): g is tf.Tensor => g !== null), meanLoss]);
    }
  }

  /**
   * Adds a gradient computed elsewhere (for example by `model.fit`, through
   * `AccumulatingOptimizer`) as one micro-step. The gradients are those of the micro-batch's
   * mean loss, keyed by variable name; they are not disposed.
   *
   * @param grads Gradient per variable name. Variables missing from the map get no gradient.
   * @param sampleCount The micro-batch size, used by `"per-sample"` normalization; null counts
   *   the micro-batch as one unit.
   */
  addGradients(grads: tf.NamedTensorMap, sampleCount: number | null = null): StepResult {
    this.checkAlive();
    if (grads === null || typeof grads !== 'object') {
      throw argumentError(OWNER, 'grads', 'a map from variable name to gradient tensor', grads);
    }
    if (sampleCount !== null && !isPositiveInteger(sampleCount)) {
      throw argumentError(OWNER, 'sampleCount', 'a positive integer (the micro-batch size), or null', sampleCount);
    }
    const vars = this.vars ?? checkVarList(OWNER, Object.keys(grads).map((name) => tf.engine().registeredVariables[name] ?? name));
    const gradients = vars.map((v) => grads[v.name] ?? null);
    const perSample = this.normalization === 'per-sample' && sampleCount !== null;
    const described = perSample
      ? { count: sampleCount, unit: 'samples' as Unit, weight: sampleCount }
      : { count: 1, unit: 'micro-batches' as Unit, weight: 1 };
    return this.accumulate(vars, gradients, null, described);
  }

  /**
   * The shared second half of a micro-step: adds the gradients into the accumulators (checking
   * that the result is finite before committing it) and closes the window when it is full.
   */
  private accumulate(
    vars: tf.Variable[],
    gradients: (tf.Tensor | null)[],
    meanLoss: tf.Scalar | null,
    { count, unit, weight }: { count: number; unit: Unit; weight: number },
  ): StepResult {
    if (this.window.unit !== null && this.window.unit !== unit) {
      throw new Error(
        `${OWNER}: every micro-batch of a window must report its size the same way under "per-sample" ` +
          `normalization; this window counted ${this.window.unit} but this micro-step gives ${unit}. ` +
          'Always return a 1-D per-sample loss or pass sampleCount, or never do.',
      );
    }
    const windowSize = this.window.size ?? this.resolveWindowSize();
    // The first micro-step of a window starts the sums from its own gradient, so the
    // accumulators never need zeroing: what they hold between windows is stale and unread.
    const accumulators = this.window.microBatches === 0 ? null : this.accumulators;
    const { sums, check } = tf.tidy(() => {
      const sums = gradients.map((g, i) =>
        accumulators ? addWeighted(accumulators[i], g, weight) : g === null ? tf.zeros(vars[i].shape) : weight === 1 ? tf.clone(g) : tf.mul(g, weight),
      );
      // One reduction finds any NaN or ±Infinity in the new sums: they propagate through a sum.
      // (A sum of finite values beyond ±3.4e38 also counts as non-finite, which it is in float32.)
      const total = sums.length === 1 ? tf.sum(sums[0]) : tf.addN(sums.map((t) => tf.sum(t)));
      return { sums, check: tf.stack([meanLoss ?? tf.scalar(0), total]) };
    });
    // One host read per micro-step: the loss to report and the finiteness check together.
    const [checkedLoss, total] = check.dataSync();
    check.dispose();
    const lossValue = meanLoss === null ? Number.NaN : checkedLoss;
    if (!Number.isFinite(checkedLoss) || !Number.isFinite(total)) {
      tf.dispose(sums);
      return this.handleNonFinite(lossValue, count, windowSize);
    }

    // Commit: from here the micro-batch is part of the window.
    this.storeAccumulators(vars, sums);
    this.window.size = windowSize;
    this.window.unit = unit;
    this.window.microBatches += 1;
    this.window.weight += count;
    this.window.touched = gradients.map((g, i) => g !== null || (this.window.touched[i] ?? false));
    this.microStepCount += 1;
    return this.finishMicroStep(lossValue, count, null);
  }

  /**
   * Applies the window now open, even if it holds fewer than `accumulationSteps` micro-batches,
   * averaging over what it actually holds. Call it at the end of an epoch so the last samples
   * are not lost or carried over. Does nothing on an empty window.
   */
  flush(): UpdateResult {
    this.checkAlive();
    return this.closeWindow();
  }

  /**
   * Ends an epoch: flushes a short last window (unless `flush` is false, which carries it into
   * the next epoch) and advances the epoch counter that epoch schedules read.
   */
  endEpoch(options: { flush?: boolean } = {}): UpdateResult | null {
    this.checkAlive();
    const result = options.flush === false ? null : this.closeWindow();
    this.epochCount += 1;
    return result;
  }

  /**
   * A JSON-serializable snapshot of everything needed to resume mid-window: the accumulators
   * keyed by variable name, the counters, the open window and (by default) the wrapped
   * optimizer's own weights. Save the model's weights separately.
   */
  async getState(options: { includeOptimizer?: boolean } = {}): Promise<AccumulatorState> {
    this.checkAlive();
    const vars = this.vars ?? [];
    const accumulators: SerializedTensor[] = [];
    for (let i = 0; i < vars.length; i++) {
      // Between windows the accumulators hold stale sums that no one reads: save zeros.
      const live = this.accumulators && this.window.microBatches > 0 ? this.accumulators[i] : null;
      accumulators.push(await readTensor(vars[i].name, live, vars[i].shape));
    }
    let optimizer: SerializedTensor[] | null = null;
    if (options.includeOptimizer !== false) {
      const weights = await this.optimizer.getWeights();
      optimizer = [];
      for (const w of weights) {
        optimizer.push(await readTensor(w.name, w.tensor, w.tensor.shape, w.tensor.dtype));
        // getWeights hands out fresh tensors (the iteration count) beside the live slot Variables.
        if (!(w.tensor instanceof tf.Variable)) w.tensor.dispose();
      }
    }
    return {
      format: ACCUMULATOR_STATE_FORMAT,
      normalization: this.normalization,
      counters: {
        microStep: this.microStepCount,
        updateStep: this.updateStepCount,
        epoch: this.epochCount,
        skippedMicroBatches: this.skippedMicroBatchCount,
        skippedWindows: this.skippedWindowCount,
      },
      window: {
        size: this.window.size,
        microBatches: this.window.microBatches,
        weight: this.window.weight,
        unit: this.window.unit,
        poisoned: this.window.poisoned,
        touched: [...this.window.touched],
      },
      accumulators,
      optimizer,
    };
  }

  /**
   * Restores a snapshot from `getState`, e.g. in a new process after loading the model's
   * weights. Everything is checked before anything changes: a missing or mis-shaped accumulator
   * throws and leaves this accumulator as it was.
   */
  async setState(state: AccumulatorState, args: SetStateArgs = {}): Promise<void> {
    this.checkAlive();
    const matchBy = args.matchBy ?? 'name';
    if (matchBy !== 'name' && matchBy !== 'order') {
      throw argumentError(`${OWNER}.setState`, 'matchBy', '"name" or "order"', matchBy);
    }
    checkState(`${OWNER}.setState`, state, this.normalization);
    const vars = this.vars ?? defaultVarList();
    const entries = matchStateToVariables(state.accumulators, vars, matchBy);

    // All checks passed: replace the state.
    this.storeAccumulators(vars, entries.map((e, i) => tf.tensor(e.values, vars[i].shape, 'float32')));
    const c = state.counters;
    this.microStepCount = c.microStep;
    this.updateStepCount = c.updateStep;
    this.epochCount = c.epoch;
    this.skippedMicroBatchCount = c.skippedMicroBatches;
    this.skippedWindowCount = c.skippedWindows;
    this.window = { ...state.window, touched: [...state.window.touched] };
    if (state.optimizer !== null && args.includeOptimizer !== false) {
      const rename = new Map(entries.map((e, i) => [e.name, vars[i].name]));
      await restoreOptimizer(this.optimizer, state.optimizer, rename);
    }
  }

  /**
   * Disposes the accumulators and the wrapped optimizer (its slot variables), so that
   * `new GradientAccumulator({ optimizer: tf.train.adam() })` leaves nothing behind. Pass
   * `{ keepOptimizer: true }` to keep using the optimizer elsewhere. The trained variables belong
   * to the model and are never touched.
   */
  dispose(options: { keepOptimizer?: boolean } = {}): void {
    if (this.disposed) return;
    if (this.accumulators) tf.dispose(this.accumulators);
    this.accumulators = null;
    if (options.keepOptimizer !== true) this.optimizer.dispose();
    this.disposed = true;
  }

  /**
   * Fixes the trained variables and writes `values` into the accumulators, creating them (as
   * non-trainable Variables) the first time. Takes ownership of `values`.
   */
  private storeAccumulators(vars: tf.Variable[], values: tf.Tensor[]): void {
    this.vars = vars;
    if (this.accumulators === null) {
      this.accumulators = values.map((v) => tf.variable(v, false));
    } else {
      this.accumulators.forEach((a, i) => a.assign(values[i]));
    }
    tf.dispose(values);
  }

  private describeLoss(loss: unknown, sampleCount: number | undefined): { count: number; unit: Unit; weight: number } {
    if (!(loss instanceof tf.Tensor)) {
      throw argumentError(OWNER, 'lossFn', 'a function that returns a tf.Tensor (a scalar mean loss, or a 1-D per-sample loss)', verbatim(`a function that returned ${describe(loss)}`));
    }
    if (this.normalization === 'per-micro-batch') {
      if (loss.rank !== 0) {
        throw argumentError(OWNER, 'lossFn', 'a function that returns a scalar mean loss under "per-micro-batch" normalization', verbatim(`a function that returned ${describe(loss)}`));
      }
      return { count: 1, unit: 'micro-batches', weight: 1 };
    }
    if (loss.rank === 1) {
      if (loss.size === 0) {
        throw argumentError(OWNER, 'lossFn', 'a function that returns a scalar, or a non-empty 1-D per-sample loss', verbatim('a function that returned an empty vector'));
      }
      if (sampleCount !== undefined && sampleCount !== loss.size) {
        throw argumentError(OWNER, 'sampleCount', `left out or equal to the per-sample loss length (${loss.size})`, sampleCount);
      }
      return { count: loss.size, unit: 'samples', weight: 1 };
    }
    if (loss.rank !== 0) {
      throw argumentError(OWNER, 'lossFn', 'a function that returns a scalar mean loss or a 1-D per-sample loss', verbatim(`a function that returned ${describe(loss)}`));
    }
    if (sampleCount !== undefined) return { count: sampleCount, unit: 'samples', weight: sampleCount };
    return { count: 1, unit: 'micro-batches', weight: 1 };
  }

  private resolveWindowSize(): number {
    return resolveAccumulationSteps(OWNER, this.accumulationSteps, { epoch: this.epochCount, updateStep: this.updateStepCount });
  }

  private handleNonFinite(lossValue: number, count: number, windowSize: number): StepResult {
    if (this.nonFinite === 'error') {
      throw new NonFiniteGradientError(
        `${OWNER}: micro-step ${this.microStepCount + 1} produced a non-finite loss or gradient (loss = ${lossValue}). ` +
          'Weights, accumulators and counters are unchanged. Pass nonFinite: "skip-micro-batch" or "skip-window" to skip such micro-batches instead.',
      );
    }
    this.microStepCount += 1;
    this.skippedMicroBatchCount += 1;
    if (this.nonFinite === 'skip-micro-batch') {
      return this.result(lossValue, count, 'micro-batch', false, null, windowSize, this.window.microBatches);
    }
    this.window.size = windowSize;
    this.window.poisoned = true;
    this.window.microBatches += 1;
    return this.finishMicroStep(lossValue, count, 'window');
  }

  private finishMicroStep(lossValue: number, count: number, skipped: 'window' | null): StepResult {
    const windowSize = this.window.size as number;
    const position = this.window.microBatches;
    if (position < windowSize) return this.result(lossValue, count, skipped, false, null, windowSize, position);
    const update = this.closeWindow();
    return this.result(lossValue, count, update.skipped ?? skipped, update.applied, update.gradientNorm, windowSize, position);
  }

  private result(
    loss: number,
    sampleCount: number,
    skipped: 'micro-batch' | 'window' | null,
    applied: boolean,
    gradientNorm: number | null,
    accumulationSteps: number,
    windowPosition: number,
  ): StepResult {
    return {
      loss,
      sampleCount,
      applied,
      skipped,
      microStep: this.microStepCount,
      updateStep: this.updateStepCount,
      epoch: this.epochCount,
      windowPosition,
      accumulationSteps,
      gradientNorm,
    };
  }

  /** Ends the open window: applies it, drops it if poisoned, or does nothing if it is empty. */
  private closeWindow(): UpdateResult {
    const { microBatches, weight, poisoned } = this.window;
    const nothing = (skipped: 'window' | null): UpdateResult => ({
      applied: false,
      skipped,
      updateStep: this.updateStepCount,
      microBatches,
      weight: 0,
      gradientNorm: null,
    });
    if (microBatches === 0) return nothing(null);
    if (poisoned) {
      this.skippedWindowCount += 1;
      this.window = emptyWindow(this.vars?.length ?? 0);
      return nothing('window');
    }
    const vars = this.vars as tf.Variable[];
    const accumulators = this.accumulators as tf.Variable[];
    const clipNorm = this.clipNorm;
    const { gradients, norm } = tf.tidy(() => {
      const averaged = averageGradients(accumulators, weight);
      if (clipNorm === null) return { gradients: averaged, norm: undefined };
      const { clipped, norm } = clipByGlobalNorm(averaged, clipNorm);
      return { gradients: clipped, norm };
    });
    const gradientNorm = norm === undefined ? null : norm.dataSync()[0];
    norm?.dispose();
    const named: tf.NamedTensorMap = {};
    vars.forEach((v, i) => {
      // Untouched variables reach the optimizer as null, exactly as optimizer.minimize passes them.
      named[v.name] = (this.window.touched[i] ? gradients[i] : null) as tf.Tensor;
    });
    try {
      this.optimizer.applyGradients(named);
    } finally {
      tf.dispose(gradients);
    }
    this.updateStepCount += 1;
    this.window = emptyWindow(vars.length);
    return { applied: true, skipped: null, updateStep: this.updateStepCount, microBatches, weight, gradientNorm };
  }

  private checkAlive(): void {
    if (this.disposed) throw new Error(`${OWNER}: this accumulator was disposed; create a new one.`);
  }
}

function emptyWindow(variableCount: number): WindowState {
  return { size: null, microBatches: 0, weight: 0, unit: null, poisoned: false, touched: new Array(variableCount).fill(false) };
}

/** The variables `optimizer.minimize` would train: every registered trainable variable. */
function defaultVarList(): tf.Variable[] {
  const vars = Object.values(tf.engine().registeredVariables).filter((v) => v.trainable);
  if (vars.length === 0) {
    throw argumentError(OWNER, 'varList', 'given, or left out only once a model exists (no trainable variables are registered yet)', undefined);
  }
  return vars;
}

/** Checks a user's varList and unwraps LayerVariables. */
export function checkVarList(owner: string, varList: unknown): tf.Variable[] {
  if (!Array.isArray(varList) || varList.length === 0) {
    throw argumentError(owner, 'varList', 'a non-empty array of trainable tf.Variables (or model.trainableWeights), or left out', varList);
  }
  const seen = new Set<string>();
  return varList.map((item, i) => {
    const v = item instanceof tf.Variable ? item : typeof item?.read === 'function' ? item.read() : item;
    if (!(v instanceof tf.Variable)) {
      throw argumentError(owner, `varList[${i}]`, 'a tf.Variable or a LayerVariable', item);
    }
    if (v.isDisposed || tf.engine().registeredVariables[v.name] !== v) {
      throw argumentError(owner, `varList[${i}]`, 'a live, registered tf.Variable', verbatim(`the unknown or disposed variable "${v.name}"`));
    }
    if (!v.trainable) {
      throw argumentError(owner, `varList[${i}]`, 'a trainable variable', verbatim(`the non-trainable variable "${v.name}"`));
    }
    if (seen.has(v.name)) {
      throw argumentError(owner, `varList[${i}]`, 'listed once', verbatim(`the variable "${v.name}" a second time`));
    }
    seen.add(v.name);
    return v;
  });
}

/** Pairs saved accumulators with the variables, by name or by position, checking shapes. */
function matchStateToVariables(saved: SerializedTensor[], vars: tf.Variable[], matchBy: 'name' | 'order'): SerializedTensor[] {
  const owner = `${OWNER}.setState`;
  if (saved.length !== vars.length) {
    throw argumentError(owner, 'state.accumulators', `one entry per trained variable (${vars.length})`, verbatim(`${saved.length} entries`));
  }
  return vars.map((v, i) => {
    const entry = matchBy === 'name' ? saved.find((s) => s.name === v.name) : saved[i];
    if (entry === undefined) {
      throw argumentError(owner, 'state.accumulators', `an entry for every trained variable, including "${v.name}" (use matchBy: "order" if the names changed)`, verbatim(`entries for ${saved.map((s) => `"${s.name}"`).join(', ')}`));
    }
    if (entry.shape.length !== v.shape.length || entry.shape.some((d, k) => d !== v.shape[k])) {
      throw argumentError(owner, `state.accumulators["${entry.name}"].shape`, `[${v.shape.join(', ')}], the shape of variable "${v.name}"`, verbatim(`[${entry.shape.join(', ')}]`));
    }
    return entry;
  });
}

/** Loads saved optimizer weights, renaming slots when variables were matched by order. */
async function restoreOptimizer(optimizer: tf.Optimizer, saved: SerializedTensor[], rename: Map<string, string>): Promise<void> {
  const before = await optimizer.getWeights();
  const weights = saved.map((s) => ({
    name: renameOptimizerWeight(s.name, rename),
    tensor: tf.tensor(s.values, s.shape, s.dtype as tf.DataType),
  }));
  await optimizer.setWeights(weights);
  tf.dispose(weights.map((w) => w.tensor));
  const after = await optimizer.getWeights();
  const live = new Set(after.filter((w) => w.tensor instanceof tf.Variable).map((w) => w.tensor));
  // tfjs optimizers replace their slot Variables in setWeights without disposing the old ones,
  // and getWeights creates a fresh iteration-count tensor on every call.
  for (const w of [...before, ...after]) if (!live.has(w.tensor)) w.tensor.dispose();
}
