import * as tf from '@tensorflow/tfjs';
import { addWeighted, clipByGlobalNorm, nonFiniteProbe } from './accumulation';
import { ACCUMULATOR_ARG_KEYS, GradientAccumulatorArgs, StepOptions, StepResult, TrainableVariable, UpdateResult } from './accumulatorArgs';
import { argumentError, checkKeys, checkOptions, describe, isPositiveFinite, isPositiveInteger, verbatim } from './errors';
import { safeVariableGrads } from './lossGradient';
import { applyNonFinitePolicy, NON_FINITE_POLICIES, NonFinitePolicy } from './nonFinite';
import { snapshotOptimizer } from './optimizerSnapshot';
import { tidy } from './tidy';
import { AccumulationSchedule, checkAccumulationSteps, resolveAccumulationSteps } from './schedule';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorCore, AccumulatorState, Averaging, copyCore, emptyWindow, initialCore, OpenWindow, SerializedTensor, SetStateArgs, Unit, checkState } from './state';
import { planRestore, readTensor } from './stateRestore';

export type { GradientAccumulatorArgs, StepOptions, StepResult, TrainableVariable, UpdateResult } from './accumulatorArgs';
export type { Averaging } from './state';
export { NonFiniteGradientError } from './nonFinite';
export type { NonFinitePolicy } from './nonFinite';

const OWNER = 'GradientAccumulator';

/** Optimizers disposed by an accumulator, so that a second one sharing them fails by name. */
const disposedOptimizers = new WeakSet<tf.Optimizer>();

/** A trained variable and its accumulator (created when the variable first carries a sum over a micro-step). */
interface Slot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
}

/** How a micro-batch counts: `count` samples (or one unit), its loss objective scaled by `weight`. */
interface LossCount {
  count: number;
  unit: Unit;
  weight: number;
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
  private slots: Slot[] = [];
  private core: AccumulatorCore = initialCore();
  private disposed = false;

  constructor(args: GradientAccumulatorArgs) {
    if (args === null || typeof args !== 'object') {
      throw argumentError(OWNER, 'args', 'an object { optimizer, accumulationSteps, … }', args);
    }
    checkKeys(OWNER, 'args', args, ACCUMULATOR_ARG_KEYS);
    // Note: tf.Optimizer's instanceof reads `.minimize` of the value, so a missing optimizer
    // would fail inside tfjs with "Cannot read properties of undefined"; test for an object first.
    if (args.optimizer === null || typeof args.optimizer !== 'object' || !(args.optimizer instanceof tf.Optimizer)) {
      throw argumentError(OWNER, 'optimizer', 'a tf.Optimizer (e.g. tf.train.sgd(0.01), tf.train.adam())', args.optimizer);
    }
    this.optimizer = args.optimizer;
    checkOptimizerAlive(this.optimizer);
    this.accumulationSteps = checkAccumulationSteps(OWNER, args.accumulationSteps);
    const averaging = args.averaging ?? 'per-sample';
    if (averaging !== 'per-sample' && averaging !== 'per-micro-batch') {
      throw argumentError(OWNER, 'averaging', '"per-sample" or "per-micro-batch"', averaging);
    }
    this.averaging = averaging;
    if (args.clipNorm !== undefined && !isPositiveFinite(args.clipNorm)) {
      throw argumentError(OWNER, 'clipNorm', 'a finite number > 0 (or left out for no clipping)', args.clipNorm);
    }
    this.clipNorm = args.clipNorm ?? null;
    const nonFinite = args.nonFinite ?? 'error';
    if (!NON_FINITE_POLICIES.includes(nonFinite)) {
      throw argumentError(OWNER, 'nonFinite', '"error", "skip-micro-batch" or "skip-window"', nonFinite);
    }
    this.nonFinite = nonFinite;
    this.varList = args.varList === undefined ? null : checkVarList(OWNER, args.varList);
    // With a varList, the optimizer sees the variables in its order from the first update on.
    this.slots = (this.varList ?? []).map((variable) => ({ variable, accumulator: null }));
  }

  /** Micro-steps taken so far. */
  get microStep(): number {
    return this.core.counters.microStep;
  }
  /** Updates applied so far: the counter for learning-rate schedules and logs. */
  get updateStep(): number {
    return this.core.counters.updateStep;
  }
  /** Epochs completed so far. */
  get epoch(): number {
    return this.core.counters.epoch;
  }
  /** Micro-batches dropped for non-finite values (under either skip policy). */
  get skippedMicroBatches(): number {
    return this.core.counters.skippedMicroBatches;
  }
  /** Windows dropped under `"skip-window"`. */
  get skippedWindows(): number {
    return this.core.counters.skippedWindows;
  }
  /** Micro-batches counted in the window now open (0 right after an update). */
  get pendingMicroBatches(): number {
    return this.core.window.microBatches;
  }
  /** The variables that have received a gradient so far, in the order the optimizer sees them; null before any. */
  get variables(): readonly tf.Variable[] | null {
    return this.slots.length === 0 ? null : this.slots.map((s) => s.variable);
  }
  /** A copy of the counters and the open window. */
  get state(): AccumulatorCore {
    return copyCore(this.core);
  }

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
  step(lossFn: () => tf.Tensor, options?: StepOptions): StepResult {
    this.checkAlive();
    if (typeof lossFn !== 'function') {
      throw argumentError(OWNER, 'lossFn', 'a function returning the micro-batch loss (a scalar mean, or a 1-D per-sample vector)', lossFn);
    }
    const { sampleCount } = checkOptions<StepOptions>(`${OWNER}.step`, 'options', options, ['sampleCount']);
    if (sampleCount !== undefined && !isPositiveInteger(sampleCount)) {
      throw argumentError(OWNER, 'sampleCount', 'a positive integer (the micro-batch size), or left out', sampleCount);
    }
    const handed = this.varList ?? defaultVarList();
    let counted: LossCount = { count: 1, unit: 'micro-batches', weight: 1 };
    const { gradients, meanLoss } = tidy(() => {
      const { value, gradients } = safeVariableGrads(OWNER, () => {
        const loss = lossFn();
        counted = this.describeLoss(loss, sampleCount);
        // Note: the objective is the micro-batch's summed loss (a per-sample loss summed, a mean
        // times sampleCount), so its gradient needs no scaling here; the division by the window's
        // sample count happens once, at the update.
        if (loss.rank === 1) return tf.sum(loss) as tf.Scalar;
        return (counted.weight === 1 ? loss : tf.mul(loss, counted.weight)) as tf.Scalar;
      }, handed);
      const meanLoss = (counted.unit === 'samples' ? tf.div(value, counted.count) : value) as tf.Scalar;
      return { gradients, meanLoss };
    });
    try {
      return this.accumulate(handed, gradients, meanLoss, { ...counted, weight: 1 });
    } finally {
      tf.dispose([...gradients.filter((g): g is tf.Tensor => g !== null), meanLoss]);
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
    this.checkAlive();
    if (grads === null || typeof grads !== 'object') {
      throw argumentError(OWNER, 'grads', 'a map from variable name to gradient tensor', grads);
    }
    if (sampleCount !== null && !isPositiveInteger(sampleCount)) {
      throw argumentError(OWNER, 'sampleCount', 'a positive integer (the micro-batch size), or null', sampleCount);
    }
    const handed = this.varList ?? Object.keys(grads).map((name, i) => {
      const v = tf.engine().registeredVariables[name];
      if (v === undefined) throw argumentError(OWNER, `grads (key ${i})`, 'keyed by names of registered variables', verbatim(`"${name}"`));
      return v;
    });
    const gradients = handed.map((v) => grads[v.name] ?? null);
    const perSample = this.averaging === 'per-sample' && sampleCount !== null;
    const counted: LossCount = perSample ? { count: sampleCount, unit: 'samples', weight: sampleCount } : { count: 1, unit: 'micro-batches', weight: 1 };
    return this.accumulate(handed, gradients, null, counted);
  }

  /**
   * The shared second half of a micro-step: computes the new sums, checks them (one host read,
   * with the loss), and then commits the micro-batch, applying the window when it is full.
   * Nothing is committed before the update succeeded.
   */
  private accumulate(handed: tf.Variable[], gradients: (tf.Tensor | null)[], meanLoss: tf.Scalar | null, counted: LossCount): StepResult {
    const before = this.core;
    if (before.window.unit !== null && before.window.unit !== counted.unit) {
      throw new Error(
        `${OWNER}: every micro-batch of a window must report its size the same way under "per-sample" ` +
          `averaging; this window counted ${before.window.unit} but this micro-step gives ${counted.unit}. ` +
          'Always return a 1-D per-sample loss or pass sampleCount, or never do.',
      );
    }
    if (gradients.every((g) => g === null)) {
      throw argumentError(OWNER, 'the micro-batch gradient', 'non-empty: at least one trained variable must receive a gradient', verbatim('no gradient for any variable'));
    }
    const windowSize = before.window.size ?? this.resolveWindowSize();
    // The variables after this micro-step: the known ones, then newcomers that got a gradient.
    const known = new Set(this.slots.map((s) => s.variable.name));
    const order = [...this.slots.map((s) => s.variable), ...handed.filter((v, i) => gradients[i] !== null && !known.has(v.name))];
    const gradientOf = new Map(handed.map((v, i) => [v.name, gradients[i]]));
    const touched = new Set(before.window.touched);
    // A variable no longer handed over (frozen mid-window) leaves the window: its partial sum is
    // dropped and it is not updated. One handed over for the first time in this window starts
    // from its own gradient, so stale accumulators are never read and never need zeroing.
    const carried = order.map((v, i) => (gradientOf.has(v.name) && touched.has(v.name) ? this.slots[i].accumulator : null));
    const { sums, check } = tidy(() => {
      const sums = order.map((v, i): tf.Tensor | null => {
        const g = gradientOf.get(v.name) ?? null;
        const sum = carried[i];
        if (g === null) return sum === null ? null : tf.clone(sum);
        return sum === null ? (counted.weight === 1 ? tf.clone(g) : tf.mul(g, counted.weight)) : addWeighted(sum, g, counted.weight);
      });
      const probe = nonFiniteProbe(sums.filter((s): s is tf.Tensor => s !== null));
      return { sums, check: tf.stack([meanLoss ?? tf.scalar(0), probe]) };
    });
    // One host read per micro-step: the loss to report and the finiteness check together.
    const [readLoss, nonFinite] = check.dataSync();
    check.dispose();
    const loss = meanLoss === null ? Number.NaN : readLoss;
    const owned = sums.filter((s): s is tf.Tensor => s !== null);
    try {
      if (nonFinite !== 0 || (meanLoss !== null && !Number.isFinite(loss))) {
        const { core, skipped } = applyNonFinitePolicy(OWNER, this.nonFinite, before, windowSize, loss);
        const full = core.window.microBatches >= windowSize;
        this.core = full ? closedCore(core, false) : core;
        return this.result(loss, counted.count, core.window, { skipped, applied: false, gradientNorm: null, windowSize });
      }
      const next = copyCore(before);
      next.counters.microStep += 1;
      const w = next.window;
      w.size = windowSize;
      w.unit = counted.unit;
      w.microBatches += 1;
      w.weight += counted.count;
      w.touched = order.filter((_, i) => sums[i] !== null).map((v) => v.name);
      w.lossSum = meanLoss === null || w.lossSum === null ? null : w.lossSum + loss * counted.count;
      if (w.microBatches < windowSize) {
        this.commitSums(order, sums);
        this.core = next;
        return this.result(loss, counted.count, w, { skipped: null, applied: false, gradientNorm: null, windowSize });
      }
      if (w.poisoned) {
        this.core = closedCore(next, false);
        return this.result(loss, counted.count, w, { skipped: 'window', applied: false, gradientNorm: null, windowSize });
      }
      const gradientNorm = this.applyUpdate(order, sums, w.weight);
      this.slots = order.map((variable, i) => ({ variable, accumulator: this.slots[i]?.accumulator ?? null }));
      this.core = closedCore(next, true);
      return this.result(loss, counted.count, w, { skipped: null, applied: true, gradientNorm, windowSize });
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
      return { variable, accumulator };
    });
  }

  /**
   * Averages the sums, clips them if asked and applies them. If the optimizer throws, its slots,
   * iteration count and the weights are restored before the error is rethrown.
   *
   * @returns The global norm before clipping, or null without clipping.
   */
  private applyUpdate(order: tf.Variable[], sums: (tf.Tensor | null)[], weight: number): number | null {
    const clipNorm = this.clipNorm;
    const present = sums.filter((s): s is tf.Tensor => s !== null);
    const { gradients, factors } = tidy(() => {
      const averaged = present.map((s) => tf.div(s, weight));
      if (clipNorm === null) return { gradients: averaged, factors: null };
      const { clipped, maxAbs, scaledNorm } = clipByGlobalNorm(averaged, clipNorm);
      return { gradients: clipped, factors: tf.stack([maxAbs, scaledNorm]) };
    });
    let gradientNorm: number | null = null;
    if (factors !== null) {
      const [maxAbs, scaledNorm] = factors.dataSync();
      factors.dispose();
      gradientNorm = maxAbs * scaledNorm; // in float64: finite for every finite gradient
    }
    const named: tf.NamedTensorMap = {};
    let k = 0;
    // Every known variable, in a fixed order: tfjs optimizers keep their slots by position.
    // Untouched ones reach it as null, exactly as optimizer.minimize passes them.
    order.forEach((v, i) => {
      named[v.name] = (sums[i] === null ? null : gradients[k++]) as tf.Tensor;
    });
    const snapshot = snapshotOptimizer(this.optimizer, order);
    try {
      this.optimizer.applyGradients(named);
    } catch (error) {
      snapshot.restore();
      throw error;
    } finally {
      tf.dispose(gradients);
    }
    snapshot.release();
    return gradientNorm;
  }

  /**
   * Applies the window now open, even if it holds fewer than `accumulationSteps` micro-batches,
   * averaging over what it actually holds. Call it at the end of an epoch so the last samples
   * are not lost or carried over. Does nothing on an empty window.
   */
  flush(): UpdateResult {
    this.checkAlive();
    const w = this.core.window;
    const windowLoss = w.lossSum === null || w.weight === 0 ? null : w.lossSum / w.weight;
    const result = (applied: boolean, gradientNorm: number | null): UpdateResult => ({
      applied,
      skipped: w.poisoned ? 'window' : null,
      updateStep: this.core.counters.updateStep,
      microBatches: w.microBatches,
      weight: applied ? w.weight : 0,
      loss: applied ? windowLoss : null,
      gradientNorm,
    });
    if (w.microBatches === 0) return result(false, null);
    if (w.poisoned) {
      this.core = closedCore(this.core, false);
      return result(false, null);
    }
    const touched = new Set(w.touched);
    const sums = this.slots.map((s) => (touched.has(s.variable.name) ? s.accumulator : null));
    const gradientNorm = this.applyUpdate(this.slots.map((s) => s.variable), sums, w.weight);
    this.core = closedCore(this.core, true);
    return result(true, gradientNorm);
  }

  /**
   * Ends an epoch: flushes a short last window (unless `flush` is false, which carries it into
   * the next epoch) and advances the epoch counter that epoch schedules read.
   */
  endEpoch(options?: { flush?: boolean }): UpdateResult | null {
    this.checkAlive();
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
   * optimizer's own weights. Save the model's weights separately.
   */
  async getState(options?: { includeOptimizer?: boolean }): Promise<AccumulatorState> {
    this.checkAlive();
    const { includeOptimizer } = checkOptions<{ includeOptimizer?: boolean }>(`${OWNER}.getState`, 'options', options, ['includeOptimizer']);
    const core = copyCore(this.core);
    const touched = new Set(core.window.touched);
    const accumulators: SerializedTensor[] = [];
    for (const { variable, accumulator } of this.slots) {
      // Outside the window the accumulators hold stale sums that no one reads: save zeros.
      accumulators.push(await readTensor(variable.name, touched.has(variable.name) ? accumulator : null, variable.shape));
    }
    let optimizer: SerializedTensor[] | null = null;
    if (includeOptimizer !== false) {
      optimizer = [];
      for (const w of await this.optimizer.getWeights()) {
        optimizer.push(await readTensor(w.name, w.tensor, w.tensor.shape, w.tensor.dtype));
        // getWeights hands out fresh tensors (the iteration count) beside the live slot Variables.
        if (!(w.tensor instanceof tf.Variable)) w.tensor.dispose();
      }
    }
    return { format: ACCUMULATOR_STATE_FORMAT, averaging: this.averaging, ...core, accumulators, optimizer };
  }

  /**
   * Restores a snapshot from `getState`, e.g. in a new process after loading the model's weights.
   * Everything is checked first (types, finiteness, shapes per variable and per optimizer slot,
   * counters, the window's consistency), then committed at once: a bad state throws and leaves
   * this accumulator, its optimizer and the tensor count as they were.
   */
  async setState(state: AccumulatorState, args?: SetStateArgs): Promise<void> {
    this.checkAlive();
    const owner = `${OWNER}.setState`;
    const { matchBy = 'name', includeOptimizer } = checkOptions<SetStateArgs>(owner, 'args', args, ['matchBy', 'includeOptimizer']);
    if (matchBy !== 'name' && matchBy !== 'order') throw argumentError(owner, 'matchBy', '"name" or "order"', matchBy);
    const checked = checkState(owner, state, this.averaging);
    const plan = await planRestore(owner, checked, {
      matchBy,
      known: this.slots.map((s) => s.variable),
      candidates: this.varList ?? defaultVarList(),
      optimizer: includeOptimizer === false ? null : this.optimizer,
    });
    // All checks passed: commit. The optimizer first (its only await), restored if it throws.
    await plan.commitOptimizer();
    const previous = new Map(this.slots.map((s) => [s.variable.name, s.accumulator]));
    this.slots = plan.variables.map((variable, i) => {
      const value = tf.tensor(plan.accumulators[i].values, variable.shape, 'float32');
      let accumulator = previous.get(variable.name) ?? null;
      if (accumulator === null) accumulator = tf.variable(value, false);
      else accumulator.assign(value);
      previous.delete(variable.name);
      value.dispose();
      return { variable, accumulator };
    });
    tf.dispose([...previous.values()].filter((a): a is tf.Variable => a !== null));
    this.core = { counters: { ...checked.counters }, window: { ...checked.window, touched: checked.window.touched.map((n) => plan.rename.get(n) ?? n) } };
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
    tf.dispose(this.slots.map((s) => s.accumulator).filter((a): a is tf.Variable => a !== null));
    this.slots = [];
    if (keepOptimizer !== true && !disposedOptimizers.has(this.optimizer)) {
      this.optimizer.dispose();
      disposedOptimizers.add(this.optimizer);
    }
    this.disposed = true;
  }

  private describeLoss(loss: unknown, sampleCount: number | undefined): LossCount {
    const returned = () => verbatim(`a function that returned ${describe(loss)}`);
    if (!(loss instanceof tf.Tensor)) {
      throw argumentError(OWNER, 'lossFn', 'a function that returns a tf.Tensor (a scalar mean loss, or a 1-D per-sample loss)', returned());
    }
    if (loss.dtype !== 'float32') {
      throw argumentError(OWNER, 'lossFn', 'a function that returns a float32 loss (tf.cast an integer loss first)', verbatim(`a function that returned a ${loss.dtype} tensor`));
    }
    if (this.averaging === 'per-micro-batch') {
      if (loss.rank !== 0) throw argumentError(OWNER, 'lossFn', 'a function that returns a scalar mean loss under "per-micro-batch" averaging', returned());
      return { count: 1, unit: 'micro-batches', weight: 1 };
    }
    if (loss.rank === 1) {
      if (loss.size === 0) throw argumentError(OWNER, 'lossFn', 'a function that returns a scalar, or a non-empty 1-D per-sample loss', verbatim('a function that returned an empty vector'));
      if (sampleCount !== undefined && sampleCount !== loss.size) {
        throw argumentError(OWNER, 'sampleCount', `left out or equal to the per-sample loss length (${loss.size})`, sampleCount);
      }
      return { count: loss.size, unit: 'samples', weight: 1 };
    }
    if (loss.rank !== 0) throw argumentError(OWNER, 'lossFn', 'a function that returns a scalar mean loss or a 1-D per-sample loss', returned());
    if (sampleCount !== undefined) return { count: sampleCount, unit: 'samples', weight: sampleCount };
    return { count: 1, unit: 'micro-batches', weight: 1 };
  }

  private resolveWindowSize(): number {
    const { epoch, updateStep } = this.core.counters;
    return resolveAccumulationSteps(OWNER, this.accumulationSteps, { epoch, updateStep });
  }

  private result(
    loss: number,
    sampleCount: number,
    window: OpenWindow,
    r: { skipped: 'micro-batch' | 'window' | null; applied: boolean; gradientNorm: number | null; windowSize: number },
  ): StepResult {
    const { counters } = this.core;
    return {
      loss,
      windowLoss: window.lossSum === null || window.weight === 0 ? null : window.lossSum / window.weight,
      sampleCount,
      applied: r.applied,
      skipped: r.skipped,
      microStep: counters.microStep,
      updateStep: counters.updateStep,
      epoch: counters.epoch,
      windowPosition: window.microBatches,
      accumulationSteps: r.windowSize,
      gradientNorm: r.gradientNorm,
    };
  }

  private checkAlive(): void {
    if (this.disposed) throw new Error(`${OWNER}: this accumulator was disposed; create a new one.`);
    checkOptimizerAlive(this.optimizer);
  }
}

/** The state after a window ends: counters advanced, a fresh window. */
function closedCore(core: AccumulatorCore, applied: boolean): AccumulatorCore {
  const next = copyCore(core);
  if (applied) next.counters.updateStep += 1;
  else next.counters.skippedWindows += 1;
  next.window = emptyWindow();
  return next;
}

function checkOptimizerAlive(optimizer: tf.Optimizer): void {
  if (disposedOptimizers.has(optimizer)) {
    throw new Error(
      `${OWNER}: its optimizer was disposed by another GradientAccumulator (or AccumulatingOptimizer) that shared it. ` +
        'Give each accumulator its own optimizer, or dispose the other one with { keepOptimizer: true }.',
    );
  }
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
  return varList.map((item: TrainableVariable, i) => {
    const v = item instanceof tf.Variable ? item : typeof item?.read === 'function' ? item.read() : item;
    if (!(v instanceof tf.Variable)) throw argumentError(owner, `varList[${i}]`, 'a tf.Variable or a LayerVariable', item);
    if (v.isDisposed || tf.engine().registeredVariables[v.name] !== v) {
      throw argumentError(owner, `varList[${i}]`, 'a live, registered tf.Variable', verbatim(`the unknown or disposed variable "${v.name}"`));
    }
    if (!v.trainable) throw argumentError(owner, `varList[${i}]`, 'a trainable variable', verbatim(`the non-trainable variable "${v.name}"`));
    if (seen.has(v.name)) throw argumentError(owner, `varList[${i}]`, 'listed once', verbatim(`the variable "${v.name}" a second time`));
    seen.add(v.name);
    return v;
  });
}
