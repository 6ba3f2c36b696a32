import * as tf from '@tensorflow/tfjs';
import { CheckedAccumulatorArgs, checkAccumulatorArgs, GradientAccumulatorArgs, StepOptions, StepResult, UpdateResult } from './accumulatorArgs';
import { AverageSwap, finalizeAverages } from './ema';
import { argumentError, checkBoolean, checkOptions, isPositiveFinite, isPositiveInteger } from './errors';
import { externalGradients } from './externalGradients';
import { checkGradientSums, GradientSumsArgs } from './gradientSums';
import { BackwardSeed, CountedLoss, microBatchGradients } from './lossGradient';
import { NonFinitePolicy } from './nonFinite';
import { checkOptimizerAlive, releaseOptimizer } from './optimizerSnapshot';
import { PendingGuard } from './pendingGuard';
import { AccumulationSchedule, resolveAccumulationSteps } from './schedule';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorCore, AccumulatorState, Averaging, copyCore, HeldState, initialCore, openedCore, SetStateArgs, windowScale } from './state';
import { captureTensors, readCaptured } from './stateCapture';
import { checkState } from './stateFormat';
import { commitSlots, planRestore } from './stateRestore';
import { addContribution, Contribution, flushWindow, skipNonFinite, stepResult, UpdateConfig, updateResult, WindowPlan } from './update';
import { defaultVarList } from './varList';

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
 * A thin shell over one state object (`HeldState`, state.ts) and one update path (update.ts):
 * each call validates its arguments, calls the update path, and replaces its state with the one
 * returned. A call that throws commits nothing. `getState` writes that state out and `setState`
 * reads it back; `AccumulatingOptimizer` saves it with the model, `ParallelAccumulator` trains
 * on it from worker threads.
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
  /** Every option, checked, with its default filled in. */
  readonly options: CheckedAccumulatorArgs;

  private readonly varList: tf.Variable[] | null;
  private readonly config: UpdateConfig;
  /** The whole state: counters, the open window and its sums, the norm history, the averages. Replaced whole by a call that commits. */
  private held: HeldState;
  /** Whether the weights hold their EMA now (between the two swaps of `withAveragedWeights`). */
  private readonly averages = new AverageSwap(OWNER, () => this.held.slots);
  private disposed = false;
  /** Where `step`'s backward passes start: the micro-batch's factor, kept between micro-steps. */
  private readonly seed = new BackwardSeed();
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
    this.config = { owner: OWNER, options: checked };
    // With a varList, the optimizer sees the variables in its order from the first update on.
    this.held = { core: initialCore(), slots: (this.varList ?? []).map((variable) => ({ variable, accumulator: null, ema: null })) };
  }

  /** Micro-steps taken so far. */
  get microStep(): number { return this.held.core.counters.microStep; }
  /** Updates applied so far: the counter for learning-rate schedules and logs. */
  get updateStep(): number { return this.held.core.counters.updateStep; }
  /** Epochs completed so far. */
  get epoch(): number { return this.held.core.counters.epoch; }
  /** Micro-batches dropped for non-finite values (under either skip policy). */
  get skippedMicroBatches(): number { return this.held.core.counters.skippedMicroBatches; }
  /** Windows dropped under `"skip-window"`. */
  get skippedWindows(): number { return this.held.core.counters.skippedWindows; }
  /** Windows skipped because their gradient norm was too large (see `skipLargeUpdates`). */
  get skippedLargeUpdates(): number { return this.held.core.counters.skippedLargeUpdates; }
  /** Micro-batches counted in the window now open (0 right after an update). */
  get pendingMicroBatches(): number { return this.held.core.window.microBatches; }
  /** The variables that have received a gradient so far, in the order the optimizer sees them; null before any. */
  get variables(): readonly tf.Variable[] | null { return this.held.slots.length === 0 ? null : this.held.slots.map((s) => s.variable); }
  /** A copy of the counters, the open window and the norm history. */
  get state(): AccumulatorCore { return copyCore(this.held.core); }
  /** Micro-batches of the window now open, or of the next one (its schedule read now). */
  get windowSize(): number { return this.held.core.window.size ?? this.resolveWindowSize(); }

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
    this.averages.refuseInside('a micro-step (step, addGradients, addGradientSums)');
    const handed = this.varList ?? defaultVarList(OWNER);
    // A window opening now gets its scale from this micro-batch's count, known inside lossFn's
    // tape; the scale seeds the backward pass there, so the gradient comes out scaled.
    const open = this.held.core.window;
    let plan: WindowPlan = { size: open.size ?? this.resolveWindowSize(), scale: open.scale };
    const factorFor = (count: number) => {
      if (open.size === null) plan = { size: plan.size, scale: windowScale(plan.size, Number.isNaN(count) ? 1 : count) };
      return 2 ** -plan.scale;
    };
    // A seed made by this call goes again if the call fails, in the backward pass or after it.
    return this.seed.freedIfFailing(() => {
      const { gradients, objective, lossScale, counted, count } = microBatchGradients(OWNER, this.averaging, lossFn, handed, sampleCount, undefined, factorFor, this.seed);
      try {
        return this.accumulate({ handed, gradients, factor: 1, loss: { objective, scale: lossScale }, countTensor: count, count: counted.count, unit: counted.unit, microBatches: 1 }, plan);
      } finally {
        tf.dispose([...gradients.filter((g): g is tf.Tensor => g !== null), objective, ...(count === null ? [] : [count])]);
      }
    });
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
    this.averages.refuseInside('a micro-step (step, addGradients, addGradientSums)');
    const { handed, gradients } = externalGradients(OWNER, grads, this.varList);
    const samples = this.averaging === 'per-sample' && sampleCount !== null ? sampleCount : null;
    const plan = this.plan(samples ?? 1);
    // A mean gradient counts as the sum over its samples: scaled by them, and by the window's scale.
    const factor = (samples ?? 1) * 2 ** -plan.scale;
    return this.accumulate({ handed, gradients, factor, loss: null, countTensor: null, count: samples ?? 1, unit: samples === null ? 'micro-batches' : 'samples', microBatches: 1 }, plan);
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
    this.averages.refuseInside('a micro-step (step, addGradients, addGradientSums)');
    const plan = this.plan(c.count / c.microBatches);
    const factor = 2 ** (c.scale - plan.scale);
    return this.accumulate({ handed: c.handed, gradients: c.gradients, factor, loss: null, countTensor: null, count: c.count, unit: c.unit, microBatches: c.microBatches, lossSum: c.lossSum }, plan);
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
    const plan = this.plan(1);
    const { core, window, skipped } = skipNonFinite(this.config, openedCore(this.held.core, plan.size, plan.scale), loss, microBatches);
    this.held = { core, slots: this.held.slots };
    return stepResult(core.counters, { loss, sampleCount: 0, window, skipped, applied: false, gradientNorm: null, windowSize: plan.size });
  }

  /**
   * Opens the next window now, unless one is open, and returns it: its size (read from the
   * schedule now) and its scale (the sums are held times 2^−scale; a contribution summed
   * elsewhere multiplies each gradient by it, see `addGradientSums`). For a trainer that hands
   * micro-batches out before they are added (`ParallelAccumulator`): a micro-batch in flight
   * belongs to the window open when it left, whatever an `endEpoch` does meanwhile.
   *
   * @param firstCount What the window's first micro-batch counts (its samples), for the scale. Default 1.
   */
  openWindow(firstCount = 1): { size: number; scale: number } {
    this.checkAlive('openWindow');
    if (!isPositiveFinite(firstCount)) throw argumentError(`${OWNER}.openWindow`, 'firstCount', 'a finite number > 0 (what the first micro-batch counts)', firstCount);
    const plan = this.plan(firstCount);
    this.held = { core: openedCore(this.held.core, plan.size, plan.scale), slots: this.held.slots };
    return plan;
  }

  /**
   * Applies the window now open, even if it holds fewer than `accumulationSteps` micro-batches,
   * averaging over what it actually holds. Call it at the end of an epoch so the last samples
   * are not lost or carried over. Does nothing on an empty window (but closes it, so that the
   * next one reads the schedule again).
   */
  flush(): UpdateResult {
    this.checkAlive('flush');
    const w = this.held.core.window;
    if (w.microBatches > 0) this.averages.refuseInside('flush');
    const { state, end } = flushWindow(this.config, this.held);
    this.held = state;
    return updateResult(w, state.core.counters.updateStep, end);
  }

  /**
   * Ends an epoch: flushes a short last window (unless `flush` is false, which carries it into
   * the next epoch) and advances the epoch counter that epoch schedules read.
   */
  endEpoch(options?: { flush?: boolean }): UpdateResult | null {
    this.checkAlive('endEpoch');
    const { flush } = checkOptions<{ flush?: boolean }>(`${OWNER}.endEpoch`, 'options', options, ['flush']);
    checkBoolean(`${OWNER}.endEpoch`, 'flush', flush);
    const result = flush === false ? null : this.flush();
    const next = copyCore(this.held.core);
    next.counters.epoch += 1;
    this.held = { core: next, slots: this.held.slots };
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
    checkBoolean(`${OWNER}.getState`, 'includeOptimizer', includeOptimizer);
    const core = copyCore(this.held.core);
    const ema = this.options.ema === null ? null : { swapped: this.averages.swapped };
    const captured = captureTensors(this.held.slots, core.window.touched, core.window.scale, includeOptimizer === false ? null : this.optimizer, ema);
    const read = async (): Promise<AccumulatorState> => ({ format: ACCUMULATOR_STATE_FORMAT, averaging: this.averaging, ...core, ...(await readCaptured(captured)) });
    return captured.pendingRead ? this.guard.during('getState', read) : read();
  }

  /**
   * Restores a snapshot from `getState` (or one saved by an older version), e.g. in a new process
   * after loading the model's weights. Everything is checked first (types, finiteness, shapes per
   * variable and per optimizer slot, counters, the window's consistency), then committed at once:
   * a bad state throws and leaves this accumulator, its optimizer and the tensor count as they were.
   */
  async setState(state: AccumulatorState, args?: SetStateArgs): Promise<void> {
    this.checkAlive('setState');
    const owner = `${OWNER}.setState`;
    this.averages.refuseInside('setState');
    const { matchBy = 'name', includeOptimizer } = checkOptions<SetStateArgs>(owner, 'args', args, ['matchBy', 'includeOptimizer']);
    if (matchBy !== 'name' && matchBy !== 'order') throw argumentError(owner, 'matchBy', '"name" or "order"', matchBy);
    checkBoolean(owner, 'includeOptimizer', includeOptimizer);
    return this.guard.during('setState', () => this.restore(owner, checkState(owner, state, this.averaging), matchBy, includeOptimizer !== false));
  }

  /** setState's checks on tensors and its commit, while the guard refuses other changes. */
  private async restore(owner: string, checked: AccumulatorState, matchBy: 'name' | 'order', includeOptimizer: boolean): Promise<void> {
    const plan = await planRestore(owner, checked, {
      matchBy,
      known: this.held.slots.map((s) => s.variable),
      candidates: this.varList ?? defaultVarList(OWNER),
      optimizer: includeOptimizer ? this.optimizer : null,
      withEma: this.options.ema !== null,
    });
    // All checks passed: commit. The optimizer first (an await only for a custom one), restored if it throws.
    await plan.commitOptimizer();
    const { counters, window, recentNorms } = checked;
    const core = copyCore({ counters, window: { ...window, touched: window.touched.map((n) => plan.rename.get(n) ?? n) }, recentNorms });
    this.held = { core, slots: commitSlots(this.held.slots, plan, window.scale) };
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
    finalizeAverages(this.held.slots);
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
    checkBoolean(`${OWNER}.dispose`, 'keepOptimizer', keepOptimizer);
    if (this.disposed) return;
    this.guard.check('dispose');
    // Inside withAveragedWeights: the model gets its trained weights back first.
    this.averages.swapBack();
    tf.dispose(this.held.slots.flatMap((s) => [s.accumulator, s.ema]).filter((a): a is tf.Variable => a !== null));
    this.seed.dispose();
    this.held = { core: this.held.core, slots: [] };
    if (keepOptimizer !== true) releaseOptimizer(this.optimizer);
    this.disposed = true;
  }

  private resolveWindowSize(): number {
    const { epoch, updateStep } = this.held.core.counters;
    return resolveAccumulationSteps(OWNER, this.accumulationSteps, { epoch, updateStep });
  }

  /** The window a contribution joins: the open one, or the next (its size read from the schedule now, its scale from `count`). */
  private plan(count: number): WindowPlan {
    const w = this.held.core.window;
    if (w.size !== null) return { size: w.size, scale: w.scale };
    const size = this.resolveWindowSize();
    return { size, scale: windowScale(size, count) };
  }

  /** The shared second half of a micro-step: the update path, then the commit of the state it returned. */
  private accumulate(c: Contribution, plan: WindowPlan): StepResult {
    const { state, outcome } = addContribution(this.config, this.held, c, plan);
    this.held = state;
    return stepResult(state.core.counters, outcome);
  }

  /** Refuses a contribution of more micro-batches than the open window still takes (it cannot span two windows). */
  private checkRoom(owner: string, parameter: string, microBatches: number): void {
    const room = this.windowSize - this.held.core.window.microBatches;
    if (microBatches > room) throw argumentError(owner, parameter, `at most ${room}, the micro-batches the open window still takes`, microBatches);
  }

  private checkAlive(call: string): void {
    if (this.disposed) throw new Error(`${OWNER}: this accumulator was disposed; create a new one.`);
    checkOptimizerAlive(OWNER, this.optimizer);
    this.guard.check(call);
  }
}
