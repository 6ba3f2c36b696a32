import * as tf from '@tensorflow/tfjs';
import { CheckedAccumulatorArgs, checkAccumulatorArgs, GradientAccumulatorArgs, MicroStepOutcome, StepOptions, StepResult, stepResult, UpdateResult } from './accumulatorArgs';
import { AverageSwap, finalizeAverages } from './ema';
import { externalGradients } from './externalGradients';
import { PendingGuard } from './pendingGuard';
import { argumentError, checkOptions, isPositiveInteger, verbatim } from './errors';
import { CountedLoss, LossCount, microBatchGradients } from './lossGradient';
import { NonFinitePolicy } from './nonFinite';
import { checkGradientSums, GradientSumsArgs } from './gradientSums';
import { checkOptimizerAlive, releaseOptimizer } from './optimizerSnapshot';
import { AccumulationSchedule, resolveAccumulationSteps } from './schedule';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorCore, AccumulatorState, Averaging, checkState, checkUnit, copyCore, initialCore, SetStateArgs } from './state';
import { captureTensors, readCaptured } from './stateCapture';
import { commitSlots, planRestore } from './stateRestore';
import { defaultVarList } from './varList';
import { addContribution, Counted, flushWindow, skipNonFinite, Slot, UpdateState, updateResult } from './windowUpdate';

export type { GradientAccumulatorArgs, StepOptions, StepResult, TrainableVariable, UpdateResult } from './accumulatorArgs';
export type { Averaging } from './state';
export { NonFiniteGradientError } from './nonFinite';
export { checkVarList } from './varList';
export type { NonFinitePolicy } from './nonFinite';
export type { GradientSumsArgs } from './gradientSums';

const OWNER = 'GradientAccumulator';

/**
 * Gradient accumulation for TensorFlow.js: trains with the batch you want on the memory you have.
 *
 * Each `step` runs one micro-batch forward and backward and adds its gradient into accumulators
 * (non-trainable Variables shaped like the weights). On the window's last micro-step the averaged
 * gradient is clipped if asked, applied with the wrapped optimizer, and the window starts over.
 *
 * State: counters and the open window are one plain object (`AccumulatorCore`), replaced whole
 * when a micro-step commits; a call that throws commits nothing. Each public call keeps its
 * validate-then-commit sequence here; what a contribution's sums do to the state (join the
 * window, or close it) is the update path of windowUpdate.ts, which returns the state to commit.
 *
 * ```ts
 * const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: 4 });
 * for (const { xs, ys } of microBatches) {
 *   const { windowLoss, applied } = acc.step(() => tf.losses.meanSquaredError(ys, model.predict(xs) as tf.Tensor));
 * }
 * acc.flush(); // apply a short last window
 * ```
 */
export class GradientAccumulator {
  /** The wrapped optimizer. The accumulator owns it: `dispose()` disposes it too, unless told to keep it. */
  readonly optimizer: tf.Optimizer;
  /** Micro-batches per update, as given: a number or a schedule. */
  readonly accumulationSteps: number | AccumulationSchedule;
  /** The averaging in use. */
  readonly averaging: Averaging;
  /** The clipping norm, or null. */
  readonly clipNorm: number | null;
  /** The non-finite policy in use. */
  readonly nonFinite: NonFinitePolicy;

  private readonly varList: tf.Variable[] | null;
  /** Every option, checked, with its default filled in. */
  readonly options: CheckedAccumulatorArgs;
  private slots: Slot[] = [];
  /** Whether the weights hold their EMA now (between the two swaps of `withAveragedWeights`). */
  private readonly averages = new AverageSwap(OWNER, () => this.slots);
  private core: AccumulatorCore = initialCore();
  private disposed = false;
  /** Refuses changes while a setState (or a getState through a custom optimizer's getWeights) is half-way. */
  private readonly guard = new PendingGuard(OWNER);

  constructor(args: GradientAccumulatorArgs) {
    const checked = checkAccumulatorArgs(OWNER, args);
    this.optimizer = checked.optimizer;
    checkOptimizerAlive(OWNER, this.optimizer);
    this.accumulationSteps = checked.accumulationSteps;
    this.averaging = checked.averaging;
    this.clipNorm = checked.clipNorm;
    this.nonFinite = checked.nonFinite;
    this.varList = checked.varList;
    this.options = checked;
    // With a varList, the optimizer sees the variables in its order from the first update on.
    this.slots = (this.varList ?? []).map((variable) => ({ variable, accumulator: null, ema: null }));
  }

  /** Micro-steps taken so far. */
  get microStep(): number { return this.core.counters.microStep; }
  /** Updates applied so far: the counter for learning-rate schedules and logs. */
  get updateStep(): number { return this.core.counters.updateStep; }
  /** Epochs completed so far. */
  get epoch(): number { return this.core.counters.epoch; }
  /** Micro-batches dropped for non-finite values (under either skip policy). */
  get skippedMicroBatches(): number { return this.core.counters.skippedMicroBatches; }
  /** Windows dropped under `"skip-window"`. */
  get skippedWindows(): number { return this.core.counters.skippedWindows; }
  /** Windows skipped because their gradient norm was too large (see `skipLargeUpdates`). */
  get skippedLargeUpdates(): number { return this.core.counters.skippedLargeUpdates; }
  /** Micro-batches counted in the window now open (0 right after an update). */
  get pendingMicroBatches(): number { return this.core.window.microBatches; }
  /** The variables that have received a gradient so far, in the order the optimizer sees them; null before any. */
  get variables(): readonly tf.Variable[] | null { return this.slots.length === 0 ? null : this.slots.map((s) => s.variable); }
  /** A copy of the counters and the open window. */
  get state(): AccumulatorCore { return copyCore(this.core); }
  /** Micro-batches of the window now open, or of the next one (its schedule read now). */
  get windowSize(): number { return this.core.window.size ?? this.resolveWindowSize(); }

  /**
   * One micro-step: computes this micro-batch's loss and gradient, adds the gradient to the
   * accumulators and, on the window's last micro-step, updates the weights.
   *
   * @param lossFn Returns the micro-batch loss: a scalar mean, or (for `"per-sample"`) a 1-D
   *   tensor of per-sample losses, float32. It runs inside `tf.tidy`; it must not dispose its output.
   * @param options See {@link StepOptions}.
   * @throws If `lossFn` or `options` is invalid, if the loss or the optimizer throws, or on a
   *   non-finite gradient under `nonFinite: "error"`; nothing has changed when it throws.
   */
  step(lossFn: () => tf.Tensor | CountedLoss, options?: StepOptions): StepResult {
    this.checkAlive('step');
    if (typeof lossFn !== 'function') {
      throw argumentError(OWNER, 'lossFn', 'a function returning the micro-batch loss (a scalar mean, or a 1-D per-sample vector)', lossFn);
    }
    const { sampleCount } = checkOptions<StepOptions>(`${OWNER}.step`, 'options', options, ['sampleCount']);
    if (sampleCount !== undefined && !isPositiveInteger(sampleCount)) {
      throw argumentError(OWNER, 'sampleCount', 'a positive integer (the micro-batch size), or left out', sampleCount);
    }
    const handed = this.varList ?? defaultVarList(OWNER);
    const { gradients, meanLoss, counted, count } = microBatchGradients(OWNER, this.averaging, lossFn, handed, sampleCount);
    try {
      return this.accumulate(handed, gradients, meanLoss, { ...counted, weight: 1 }, count);
    } finally {
      tf.dispose([...gradients.filter((g): g is tf.Tensor => g !== null), meanLoss, ...(count === null ? [] : [count])]);
    }
  }

  /**
   * Adds a gradient computed elsewhere (for example by `model.fit`, through
   * `AccumulatingOptimizer`) as one micro-step. The gradients are those of the micro-batch's
   * mean loss, keyed by variable name; they are not disposed. The variables named are the ones
   * trained at this micro-step (with `varList`, those of `varList`).
   *
   * @param sampleCount The micro-batch size, used by `"per-sample"` averaging; null counts
   *   the micro-batch as one unit.
   */
  addGradients(grads: tf.NamedTensorMap, sampleCount: number | null = null): StepResult {
    this.checkAlive('addGradients');
    if (grads === null || typeof grads !== 'object') {
      throw argumentError(OWNER, 'grads', 'a map from variable name to gradient tensor', grads);
    }
    if (sampleCount !== null && !isPositiveInteger(sampleCount)) {
      throw argumentError(OWNER, 'sampleCount', 'a positive integer (the micro-batch size), or null', sampleCount);
    }
    const { handed, gradients } = externalGradients(OWNER, grads, this.varList);
    const perSample = this.averaging === 'per-sample' && sampleCount !== null;
    const counted: LossCount = perSample ? { count: sampleCount, unit: 'samples', weight: sampleCount } : { count: 1, unit: 'micro-batches', weight: 1 };
    return this.accumulate(handed, gradients, null, counted);
  }

  /**
   * Adds gradients already summed elsewhere (e.g. by worker threads) over `args.microBatches`
   * micro-batches as they are, and `args.count` to the window's divisor: exact, with no
   * `sums / count` round trip, and fractional counts allowed. The window counts the
   * micro-batches; when it is full the update runs, as in `step`. Validate-then-commit: on any
   * error nothing has changed. The sums are not disposed. See {@link GradientSumsArgs}.
   */
  addGradientSums(sums: tf.NamedTensorMap, args: GradientSumsArgs): StepResult {
    this.checkAlive('addGradientSums');
    const known = new Map((this.varList ?? []).map((v) => [v.name, v]));
    const resolve = (name: string) => (this.varList === null ? tf.engine().registeredVariables[name] ?? null : known.get(name) ?? null);
    const c = checkGradientSums(`${OWNER}.addGradientSums`, sums, args, this.averaging, resolve);
    this.checkRoom(`${OWNER}.addGradientSums`, 'args.microBatches', c.microBatches);
    return this.accumulate(c.handed, c.gradients, null, { count: c.count, unit: c.unit, weight: 1, microBatches: c.microBatches, lossSum: c.lossSum });
  }

  /**
   * Records micro-batches whose loss or gradient was found non-finite elsewhere (and left out of
   * any sums), under the `nonFinite` policy, as `step` would have: `"error"` throws
   * `NonFiniteGradientError` and changes nothing; the skip policies count them.
   */
  addNonFinite(microBatches: number, loss = Number.NaN): StepResult {
    this.checkAlive('addNonFinite');
    if (!isPositiveInteger(microBatches)) throw argumentError(`${OWNER}.addNonFinite`, 'microBatches', 'a positive integer', microBatches);
    if (this.nonFinite === 'skip-window') this.checkRoom(`${OWNER}.addNonFinite`, 'microBatches', microBatches);
    const windowSize = this.windowSize;
    const { core, window, skipped } = skipNonFinite(this.nonFinite, OWNER, this.core, windowSize, loss, microBatches);
    this.core = core;
    return this.result({ loss, sampleCount: 0, window, skipped, applied: false, gradientNorm: null, windowSize });
  }

  /**
   * The shared second half of a micro-step: checks that the contribution can join the open
   * window, then commits the state the update path returns (see windowUpdate.ts), which is
   * nothing when it throws.
   */
  private accumulate(handed: tf.Variable[], gradients: (tf.Tensor | null)[], meanLoss: tf.Scalar | null, counted: Counted, count: tf.Scalar | null = null): StepResult {
    this.averages.refuseInside('a micro-step (step, addGradients, addGradientSums)');
    checkUnit(OWNER, this.core.window, counted.unit);
    if (gradients.every((g) => g === null)) {
      throw argumentError(OWNER, 'the micro-batch gradient', 'non-empty: at least one trained variable must receive a gradient', verbatim('no gradient for any variable'));
    }
    const windowSize = this.core.window.size ?? this.resolveWindowSize();
    const { outcome } = this.commit(addContribution(this, OWNER, this.held, { handed, gradients, meanLoss, counted, count, windowSize }));
    return this.result(outcome);
  }

  /**
   * Applies the window now open, even if it holds fewer than `accumulationSteps` micro-batches,
   * averaging over what it actually holds. Call it at the end of an epoch so the last samples
   * are not lost or carried over. Does nothing on an empty window.
   */
  flush(): UpdateResult {
    this.checkAlive('flush');
    const w = this.core.window;
    if (w.microBatches === 0) return updateResult(w, this.core.counters.updateStep, { applied: false, skipped: null, gradientNorm: null });
    this.averages.refuseInside('flush');
    const { end } = this.commit(flushWindow(this, OWNER, this.held));
    return updateResult(w, this.core.counters.updateStep, end);
  }

  /**
   * Ends an epoch: flushes a short last window (unless `flush` is false, which carries it into
   * the next epoch) and advances the epoch counter that epoch schedules read.
   */
  endEpoch(options?: { flush?: boolean }): UpdateResult | null {
    this.checkAlive('endEpoch');
    const { flush } = checkOptions<{ flush?: boolean }>(`${OWNER}.endEpoch`, 'options', options, ['flush']);
    if (flush !== undefined && typeof flush !== 'boolean') throw argumentError(`${OWNER}.endEpoch`, 'flush', 'true, false or left out', flush);
    const result = flush === false ? null : this.flush();
    const next = copyCore(this.core);
    next.counters.epoch += 1;
    this.core = next;
    return result;
  }

  /**
   * A JSON-serializable snapshot of everything needed to resume mid-window: the accumulators
   * keyed by variable name, the counters, the open window and (by default) the wrapped
   * optimizer's own weights. Save the model's weights separately (inside `withAveragedWeights`
   * they hold the averages; the state holds the true averages either way).
   *
   * The snapshot is taken when it is called: a `step` before the promise settles does not reach
   * it. Only an optimizer that is not built into tfjs is read later, through its own async
   * `getWeights`; until then calls that change the accumulator are refused by name.
   */
  async getState(options?: { includeOptimizer?: boolean }): Promise<AccumulatorState> {
    // Everything up to the first await runs at the call: the snapshot is taken there.
    this.checkAlive('getState');
    const { includeOptimizer } = checkOptions<{ includeOptimizer?: boolean }>(`${OWNER}.getState`, 'options', options, ['includeOptimizer']);
    const core = copyCore(this.core);
    const captured = captureTensors(this.slots, core.window.touched, includeOptimizer === false ? null : this.optimizer, this.options.ema === null ? null : { swapped: this.averages.swapped });
    const read = async (): Promise<AccumulatorState> => ({ format: ACCUMULATOR_STATE_FORMAT, averaging: this.averaging, ...core, ...(await readCaptured(captured)) });
    return captured.pendingRead ? this.guard.during('getState', read) : read();
  }

  /**
   * Restores a snapshot from `getState`, e.g. in a new process after loading the model's weights.
   * Everything is checked first (types, finiteness, shapes per variable and per optimizer slot,
   * counters, the window's consistency), then committed at once: a bad state throws and leaves
   * this accumulator, its optimizer and the tensor count as they were.
   */
  async setState(state: AccumulatorState, args?: SetStateArgs): Promise<void> {
    this.checkAlive('setState');
    const owner = `${OWNER}.setState`;
    this.averages.refuseInside('setState');
    const { matchBy = 'name', includeOptimizer } = checkOptions<SetStateArgs>(owner, 'args', args, ['matchBy', 'includeOptimizer']);
    if (matchBy !== 'name' && matchBy !== 'order') throw argumentError(owner, 'matchBy', '"name" or "order"', matchBy);
    return this.guard.during('setState', () => this.restore(owner, checkState(owner, state, this.averaging), matchBy, includeOptimizer !== false));
  }

  /** setState's checks on tensors and its commit, while the guard refuses other changes. */
  private async restore(owner: string, checked: AccumulatorState, matchBy: 'name' | 'order', includeOptimizer: boolean): Promise<void> {
    const plan = await planRestore(owner, checked, {
      matchBy,
      known: this.slots.map((s) => s.variable),
      candidates: this.varList ?? defaultVarList(OWNER),
      optimizer: includeOptimizer ? this.optimizer : null,
      withEma: this.options.ema !== null,
    });
    // All checks passed: commit. The optimizer first (an await only for a custom one), restored if it throws.
    await plan.commitOptimizer();
    this.slots = commitSlots(this.slots, plan);
    this.core = {
      counters: { ...checked.counters },
      window: { ...checked.window, touched: checked.window.touched.map((n) => plan.rename.get(n) ?? n) },
      recentNorms: [...checked.recentNorms],
    };
  }

  /**
   * Runs `fn` with the weights replaced by their EMA (see the `ema` option), then puts the
   * trained weights back, also when `fn` throws: `await acc.withAveragedWeights(() => model.evaluate(xs, ys))`.
   * Variables never updated yet are their own average.
   */
  async withAveragedWeights<T>(fn: () => T | Promise<T>): Promise<T> {
    this.checkAverages('withAveragedWeights');
    return this.averages.during(fn);
  }

  /**
   * Writes the averages into the weights for good, as Keras's `finalize_variable_values` does at
   * the end of `fit`: afterwards the model holds the EMA (for saving or serving), and the
   * averages go on from there if training continues. Variables never updated stay as they are.
   */
  finalizeAveragedWeights(): void {
    this.checkAverages('finalizeAveragedWeights');
    finalizeAverages(this.slots);
  }

  /** Refuses an EMA call without `ema`, or inside `withAveragedWeights`. */
  private checkAverages(call: string): void {
    this.checkAlive(call);
    if (this.options.ema === null) throw argumentError(`${OWNER}.${call}`, 'ema', 'set (e.g. { decay: 0.999 }) to use averaged weights', undefined);
    this.averages.refuseInside(call);
  }

  /**
   * Disposes the accumulators and the wrapped optimizer (its slot variables), so that
   * `new GradientAccumulator({ optimizer: tf.train.adam() })` leaves nothing behind. Pass
   * `{ keepOptimizer: true }` to keep using the optimizer elsewhere. The trained variables belong
   * to the model and are never touched.
   */
  dispose(options?: { keepOptimizer?: boolean }): void {
    const { keepOptimizer } = checkOptions<{ keepOptimizer?: boolean }>(`${OWNER}.dispose`, 'options', options, ['keepOptimizer']);
    if (this.disposed) return;
    this.guard.check('dispose');
    // Inside withAveragedWeights: the model gets its trained weights back first.
    this.averages.swapBack();
    tf.dispose(this.slots.flatMap((s) => [s.accumulator, s.ema]).filter((a): a is tf.Variable => a !== null));
    this.slots = [];
    if (keepOptimizer !== true) releaseOptimizer(this.optimizer);
    this.disposed = true;
  }

  private resolveWindowSize(): number {
    const { epoch, updateStep } = this.core.counters;
    return resolveAccumulationSteps(OWNER, this.accumulationSteps, { epoch, updateStep });
  }

  /** The state the update path reads and replaces. */
  private get held(): UpdateState { return { slots: this.slots, core: this.core }; }

  /** Commits what the update path returned (both parts at once), and passes on what it did. */
  private commit<T extends UpdateState>(done: T): T {
    this.slots = done.slots;
    this.core = done.core;
    return done;
  }

  /** A micro-step's result, from what it did and the (just committed) counters. */
  private result(r: MicroStepOutcome): StepResult {
    return stepResult(this.core.counters, r);
  }

  /** Refuses a contribution of more micro-batches than the open window still takes (it cannot span two windows). */
  private checkRoom(owner: string, parameter: string, microBatches: number): void {
    const room = this.windowSize - this.core.window.microBatches;
    if (microBatches > room) throw argumentError(owner, parameter, `at most ${room}, the micro-batches the open window still takes`, microBatches);
  }

  private checkAlive(call: string): void {
    if (this.disposed) throw new Error(`${OWNER}: this accumulator was disposed; create a new one.`);
    checkOptimizerAlive(OWNER, this.optimizer);
    this.guard.check(call);
  }
}
