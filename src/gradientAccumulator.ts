import * as tf from '@tensorflow/tfjs';
import { addWeighted, nonFiniteProbe } from './accumulation';
import { checkAccumulatorArgs, GradientAccumulatorArgs, StepOptions, StepResult, UpdateResult } from './accumulatorArgs';
import { applyWindow } from './applyWindow';
import { argumentError, checkOptions, isPositiveInteger, verbatim } from './errors';
import { LossCount, countLoss, safeVariableGrads } from './lossGradient';
import { applyNonFinitePolicy, NonFinitePolicy } from './nonFinite';
import { checkOptimizerAlive, releaseOptimizer } from './optimizerSnapshot';
import { AccumulationSchedule, resolveAccumulationSteps } from './schedule';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorCore, AccumulatorState, Averaging, checkState, closedCore, copyCore, initialCore, OpenWindow, SerializedTensor, SetStateArgs } from './state';
import { planRestore, readTensor } from './stateRestore';
import { tidy } from './tidy';
import { defaultVarList } from './varList';

export type { GradientAccumulatorArgs, StepOptions, StepResult, TrainableVariable, UpdateResult } from './accumulatorArgs';
export type { Averaging } from './state';
export { NonFiniteGradientError } from './nonFinite';
export { checkVarList } from './varList';
export type { NonFinitePolicy } from './nonFinite';

const OWNER = 'GradientAccumulator';


/** A trained variable and its accumulator (created when the variable first carries a sum over a micro-step). */
interface Slot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
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
    const checked = checkAccumulatorArgs(OWNER, args);
    this.optimizer = checked.optimizer;
    checkOptimizerAlive(OWNER, this.optimizer);
    this.accumulationSteps = checked.accumulationSteps;
    this.averaging = checked.averaging;
    this.clipNorm = checked.clipNorm;
    this.nonFinite = checked.nonFinite;
    this.varList = checked.varList;
    // With a varList, the optimizer sees the variables in its order from the first update on.
    this.slots = (this.varList ?? []).map((variable) => ({ variable, accumulator: null }));
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
  /** Micro-batches counted in the window now open (0 right after an update). */
  get pendingMicroBatches(): number { return this.core.window.microBatches; }
  /** The variables that have received a gradient so far, in the order the optimizer sees them; null before any. */
  get variables(): readonly tf.Variable[] | null { return this.slots.length === 0 ? null : this.slots.map((s) => s.variable); }
  /** A copy of the counters and the open window. */
  get state(): AccumulatorCore { return copyCore(this.core); }

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
    const handed = this.varList ?? defaultVarList(OWNER);
    let counted: LossCount = { count: 1, unit: 'micro-batches', weight: 1 };
    const { gradients, meanLoss } = tidy(() => {
      const { value, gradients } = safeVariableGrads(OWNER, () => {
        const loss = lossFn();
        counted = countLoss(OWNER, this.averaging, loss, sampleCount);
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
      const gradientNorm = applyWindow({ optimizer: this.optimizer, variables: order, sums, weight: w.weight, clipNorm: this.clipNorm });
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
    const gradientNorm = applyWindow({ optimizer: this.optimizer, variables: this.slots.map((s) => s.variable), sums, weight: w.weight, clipNorm: this.clipNorm });
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
      candidates: this.varList ?? defaultVarList(OWNER),
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
    if (keepOptimizer !== true) releaseOptimizer(this.optimizer);
    this.disposed = true;
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
    checkOptimizerAlive(OWNER, this.optimizer);
  }
}
