import * as tf from '@tensorflow/tfjs';
import { CheckedAccumulatorArgs, checkAccumulatorArgs, GradientAccumulatorArgs, MicroStepOutcome, StepOptions, StepResult, stepResult, UpdateResult } from './accumulatorArgs';
import { applyWindow, recordNorm, updateSettings } from './applyWindow';
import { AverageSwap, finalizeAverages, startAverages } from './ema';
import { externalGradients } from './externalGradients';
import { PendingGuard } from './pendingGuard';
import { windowSums } from './windowSums';
import { argumentError, checkOptions, isPositiveInteger, verbatim } from './errors';
import { CountedLoss, LossCount, microBatchGradients } from './lossGradient';
import { applyNonFinitePolicy, isMicroBatchFinite, NonFinitePolicy } from './nonFinite';
import { checkGradientSums, GradientSumsArgs } from './gradientSums';
import { checkOptimizerAlive, releaseOptimizer } from './optimizerSnapshot';
import { AccumulationSchedule, resolveAccumulationSteps } from './schedule';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorCore, AccumulatorState, Averaging, checkState, checkUnit, closedCore, copyCore, initialCore, SetStateArgs } from './state';
import { captureTensors, readCaptured } from './stateCapture';
import { commitSlots, planRestore } from './stateRestore';
import { defaultVarList } from './varList';

export type { GradientAccumulatorArgs, StepOptions, StepResult, TrainableVariable, UpdateResult } from './accumulatorArgs';
export type { Averaging } from './state';
export { NonFiniteGradientError } from './nonFinite';
export { checkVarList } from './varList';
export type { NonFinitePolicy } from './nonFinite';
export type { GradientSumsArgs } from './gradientSums';

const OWNER = 'GradientAccumulator';

/** How a contribution counts: a micro-batch's `LossCount`, or a reduced one's micro-batches and loss sum. */
type Counted = LossCount & { microBatches?: number; lossSum?: number | null };


/** A trained variable, its accumulator (created when it first carries a sum over a micro-step) and its EMA. */
interface Slot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
  ema: tf.Variable | null;
}


/**
 * Gradient accumulation for TensorFlow.js: trains with the batch you want on the memory you have.
 *
 * Each `step` runs one micro-batch forward and backward and adds its gradient into accumulators
 * (non-trainable Variables shaped like the weights). On the window's last micro-step the averaged
 * gradient is clipped if asked, applied with the wrapped optimizer, and the window starts over.
 *
 * State: counters and the open window are one plain object (`AccumulatorCore`), replaced whole
 * when a micro-step commits; a call that throws commits nothing.
 *
 * Length: about 450 lines, because each public call (fourteen of them, with the reduced
 * contributions of the parallel trainer and the EMA's finalize) keeps its validate-then-commit
 * sequence in one place to be read as a whole; the pieces that are not sequencing (window sums,
 * the update, state capture and restore, optimizer weights, the EMA swap, the pending guard,
 * gradient checks, option checks) are in modules of their own.
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
    const { core, skipped } = applyNonFinitePolicy(OWNER, this.nonFinite, this.core, windowSize, loss, microBatches);
    this.core = core.window.microBatches >= windowSize ? closedCore(core, 'dropped') : core;
    return this.result({ loss, sampleCount: 0, window: core.window, skipped, applied: false, gradientNorm: null, windowSize });
  }

  /**
   * The shared second half of a micro-step: computes the new sums, checks them (one host read,
   * with the loss), and then commits the micro-batch, applying the window when it is full.
   * Nothing is committed before the update succeeded.
   */
  private accumulate(handed: tf.Variable[], gradients: (tf.Tensor | null)[], meanLoss: tf.Scalar | null, counted: Counted, count: tf.Scalar | null = null): StepResult {
    this.averages.refuseInside('a micro-step (step, addGradients, addGradientSums)');
    const before = this.core;
    checkUnit(OWNER, before.window, counted.unit);
    if (gradients.every((g) => g === null)) {
      throw argumentError(OWNER, 'the micro-batch gradient', 'non-empty: at least one trained variable must receive a gradient', verbatim('no gradient for any variable'));
    }
    const windowSize = before.window.size ?? this.resolveWindowSize();
    const { order, sums, check } = windowSums({ slots: this.slots, handed, gradients, touched: before.window.touched, weight: counted.weight, meanLoss, count, unitCount: counted.count });
    // One host read per micro-step: the loss to report, the finiteness check and the count together.
    const [readLoss, nonFinite, readCount] = check.dataSync();
    check.dispose();
    const loss = meanLoss === null ? Number.NaN : readLoss;
    if (count !== null) counted = { ...counted, count: readCount };
    const owned = sums.filter((s): s is tf.Tensor => s !== null);
    const micro = counted.microBatches ?? 1;
    try {
      if (!isMicroBatchFinite(OWNER, { loss: meanLoss === null ? null : loss, probe: nonFinite, count: counted.count, countFromLoss: count !== null })) {
        const { core, skipped } = applyNonFinitePolicy(OWNER, this.nonFinite, before, windowSize, loss, micro);
        const full = core.window.microBatches >= windowSize;
        this.core = full ? closedCore(core, 'dropped') : core;
        return this.result({ loss, sampleCount: counted.count, window: core.window, skipped, applied: false, gradientNorm: null, windowSize });
      }
      const next = copyCore(before);
      next.counters.microStep += micro;
      const w = next.window;
      w.size = windowSize;
      w.unit = w.unit === 'counts' ? 'counts' : counted.unit;
      w.microBatches += micro;
      w.weight += counted.count;
      w.touched = order.filter((_, i) => sums[i] !== null).map((v) => v.name);
      const lossSum = counted.lossSum !== undefined ? counted.lossSum : meanLoss === null ? null : counted.count === 0 ? 0 : loss * counted.count;
      w.lossSum = lossSum === null || w.lossSum === null ? null : w.lossSum + lossSum;
      if (w.microBatches < windowSize) {
        this.commitSums(order, sums);
        this.core = next;
        return this.result({ loss, sampleCount: counted.count, window: w, skipped: null, applied: false, gradientNorm: null, windowSize });
      }
      const closed = this.closeWindow(order, sums, next);
      return this.result({ loss, sampleCount: counted.count, window: w, ...closed, windowSize });
    } finally {
      tf.dispose(owned);
    }
  }

  /** Writes the new sums into the accumulators (creating those of newcomers) and fixes the variable order. */
  private commitSums(order: tf.Variable[], sums: (tf.Tensor | null)[]): void {
    this.slots = order.map((variable, i) => {
      let accumulator = this.slots[i]?.accumulator ?? null;
      const sum = sums[i];
      if (sum !== null) {
        if (accumulator === null) accumulator = tf.variable(sum, false);
        else accumulator.assign(sum);
      }
      return { variable, accumulator, ema: this.slots[i]?.ema ?? null };
    });
  }

  /**
   * Ends a complete window of the committed-to-be state `next`: drops it (poisoned, or a total
   * count of 0), skips it (norm too large), or applies it. Commits the state, the variable order
   * and new EMA shadows only when nothing threw.
   */
  private closeWindow(order: tf.Variable[], sums: (tf.Tensor | null)[], next: AccumulatorCore): { applied: boolean; skipped: 'window' | 'large-update' | null; gradientNorm: number | null } {
    const w = next.window;
    if (w.poisoned || w.weight === 0) {
      this.core = closedCore(next, 'dropped');
      return { applied: false, skipped: 'window', gradientNorm: null };
    }
    const { skipLargeUpdates: skip, ema, weightDecay } = this.options;
    const { rate, maxNorm } = updateSettings(OWNER, this.options, next);
    const shadows = order.map((_, i) => this.slots[i]?.ema ?? null);
    const outcome = applyWindow({ optimizer: this.optimizer, variables: order, sums, weight: w.weight, clipNorm: this.clipNorm, maxNorm, measureNorm: skip !== null, learningRate: rate, weightDecay, ema: ema === null ? null : { decay: ema.decay, shadows }, owner: OWNER });
    // Averages missing so far start from the weights after this update (see ema.ts).
    const averages = ema !== null && outcome.applied ? startAverages(order, shadows) : shadows;
    this.slots = order.map((variable, i) => ({ variable, accumulator: this.slots[i]?.accumulator ?? null, ema: averages[i] }));
    if (!outcome.applied) {
      this.core = closedCore(next, 'too-large');
      return { applied: false, skipped: 'large-update', gradientNorm: outcome.gradientNorm };
    }
    this.core = recordNorm(closedCore(next, 'applied'), skip, outcome.gradientNorm);
    return { applied: true, skipped: null, gradientNorm: outcome.gradientNorm };
  }

  /**
   * Applies the window now open, even if it holds fewer than `accumulationSteps` micro-batches,
   * averaging over what it actually holds. Call it at the end of an epoch so the last samples
   * are not lost or carried over. Does nothing on an empty window.
   */
  flush(): UpdateResult {
    this.checkAlive('flush');
    const w = this.core.window;
    const windowLoss = w.lossSum === null || w.weight === 0 ? null : w.lossSum / w.weight;
    const result = (r: { applied: boolean; skipped: 'window' | 'large-update' | null; gradientNorm: number | null }): UpdateResult => ({
      ...r,
      updateStep: this.core.counters.updateStep,
      microBatches: w.microBatches,
      weight: r.applied ? w.weight : 0,
      loss: r.applied ? windowLoss : null,
    });
    if (w.microBatches === 0) return result({ applied: false, skipped: null, gradientNorm: null });
    this.averages.refuseInside('flush');
    const touched = new Set(w.touched);
    const sums = this.slots.map((s) => (touched.has(s.variable.name) ? s.accumulator : null));
    return result(this.closeWindow(this.slots.map((s) => s.variable), sums, this.core));
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
