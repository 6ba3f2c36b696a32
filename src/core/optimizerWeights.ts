import * as tf from '@tensorflow/tfjs';
import type { SerializedTensor } from './state';

/**
 * The state of a built-in tfjs optimizer, read and written synchronously and completely.
 *
 * Why not `getWeights`/`setWeights`: they are async, so a snapshot taken with them reads slot
 * Variables a micro-task later, after a `step` called in between has changed them; Adamax
 * implements neither; and `Adam.setWeights` recomputes β₁ᵗ and β₂ᵗ with `pow` where the update
 * multiplies them step by step, so a resumed Adam drifts by about 1e-6. Here the slots are read
 * from the optimizer's own fields (the layout of tfjs 4), named exactly as `getWeights` names
 * them, and the running scalars the update reads (Adam's `accBeta1`, `accBeta2`; Adamax's
 * `iteration`, `accBeta1`) travel beside them as "internals", so that a resume is bit for bit.
 * An optimizer of any other class falls back to its own `getWeights`/`setWeights`.
 */

/** A named tensor as tfjs optimizers exchange them. */
export interface NamedTensor {
  name: string;
  tensor: tf.Tensor;
}

interface SlotField {
  /** The optimizer's own field: an array of `{ originalName, variable }`, one per variable. */
  field: string;
  /** What the entries' names end in: `<variable>/<suffix>`. */
  suffix: string;
}

interface Layout {
  /** The slot arrays, in the order `getWeights` lists them. */
  slots: SlotField[];
  /** Scalar Variables the update reads besides the slots and the iteration count. */
  internals: string[];
  /** Their values after `t` updates, for a state saved without them (as tfjs's setWeights does). */
  derive?: (optimizer: Record<string, unknown>, t: number) => Record<string, number>;
}

const power = (optimizer: Record<string, unknown>, key: string, t: number) => (optimizer[key] as number) ** (t + 1);

/** The built-in tfjs optimizers, by class name. */
const LAYOUTS: Record<string, Layout> = {
  SGD: { slots: [], internals: [] },
  Momentum: { slots: [{ field: 'accumulations', suffix: 'momentum' }], internals: [] },
  Adam: {
    slots: [{ field: 'accumulatedFirstMoment', suffix: 'm' }, { field: 'accumulatedSecondMoment', suffix: 'v' }],
    internals: ['accBeta1', 'accBeta2'],
    derive: (o, t) => ({ accBeta1: power(o, 'beta1', t), accBeta2: power(o, 'beta2', t) }),
  },
  Adamax: {
    slots: [{ field: 'accumulatedFirstMoment', suffix: 'm' }, { field: 'accumulatedWeightedInfNorm', suffix: 'v' }],
    internals: ['iteration', 'accBeta1'],
    derive: (o, t) => ({ iteration: t, accBeta1: power(o, 'beta1', t) }),
  },
  RMSProp: {
    slots: [{ field: 'accumulatedMeanSquares', suffix: 'rms' }, { field: 'accumulatedMoments', suffix: 'momentum' }, { field: 'accumulatedMeanGrads', suffix: 'mg' }],
    internals: [],
  },
  Adagrad: { slots: [{ field: 'accumulatedGrads', suffix: 'accumulator' }], internals: [] },
  Adadelta: { slots: [{ field: 'accumulatedGrads', suffix: 'accum_grad' }, { field: 'accumulatedUpdates', suffix: 'accum_var' }], internals: [] },
};

type SlotEntry = { originalName: string; variable: tf.Variable } | null | undefined;

/** The layout of this optimizer's class, or undefined when it is not a built-in one. */
function layoutOf(optimizer: tf.Optimizer): Layout | undefined {
  return Object.prototype.hasOwnProperty.call(LAYOUTS, optimizer.getClassName()) ? LAYOUTS[optimizer.getClassName()] : undefined;
}

/** The slot arrays this optimizer uses (RMSProp keeps `mg` only when centered). */
function activeSlots(optimizer: tf.Optimizer, layout: Layout): SlotField[] {
  const centered = (optimizer as unknown as { centered?: boolean }).centered === true;
  return layout.slots.filter((s) => s.suffix !== 'mg' || centered);
}

/** The slot suffixes of a built-in optimizer class (`<variable>/<suffix>`), or undefined for another class. */
export function slotSuffixes(optimizer: tf.Optimizer): string[] | undefined {
  const layout = layoutOf(optimizer);
  return layout === undefined ? undefined : activeSlots(optimizer, layout).map((s) => s.suffix);
}

/** The internals' names a built-in optimizer class keeps, or undefined for another class. */
export function internalNames(optimizer: tf.Optimizer): string[] | undefined {
  return layoutOf(optimizer)?.internals;
}

/** What {@link captureOptimizer} took: tensors the caller owns and must dispose. */
export interface CapturedOptimizer {
  /** `iter` and the slots, as `getWeights` lists them. */
  weights: NamedTensor[];
  /** The running scalars (empty for optimizers without any). */
  internals: NamedTensor[];
}

/**
 * The optimizer's state now, synchronously: clones that share the data (no copy), so that later
 * updates cannot change what was taken. Null for an optimizer that is not a built-in one.
 */
export function captureOptimizer(optimizer: tf.Optimizer): CapturedOptimizer | null {
  const live = liveWeights(optimizer);
  if (live === null) return null;
  // The iteration count is a fresh tensor already; the Variables are cloned.
  const clone = (w: NamedTensor) => ({ name: w.name, tensor: w.tensor instanceof tf.Variable ? tf.clone(w.tensor) : w.tensor });
  return { weights: live.weights.map(clone), internals: live.internals.map(clone) };
}

/** The optimizer's slot and internal Variables themselves, with a fresh iteration count; null for another class. */
function liveWeights(optimizer: tf.Optimizer): CapturedOptimizer | null {
  const layout = layoutOf(optimizer);
  if (layout === undefined) return null;
  const target = optimizer as unknown as Record<string, unknown>;
  const weights: NamedTensor[] = [{ name: 'iter', tensor: tf.scalar(optimizer.iterations ?? 0, 'int32') }];
  for (const { field } of activeSlots(optimizer, layout)) {
    for (const e of (target[field] as SlotEntry[] | undefined) ?? []) {
      if (e != null) weights.push({ name: e.originalName, tensor: e.variable });
    }
  }
  const internals = layout.internals.map((name) => ({ name, tensor: target[name] as tf.Variable }));
  return { weights, internals };
}

/** How internals are named among the weights saved with a model. */
const INTERNAL = 'internals/';

/**
 * The weights `model.save(…, { includeOptimizer: true })` stores for a wrapped optimizer: those
 * of `getWeights` and, for a built-in one, its internals as `internals/<name>`, so that
 * `tf.loadLayersModel` resumes it bit for bit (tfjs's own Adam recomputes β₁ᵗ, β₂ᵗ with `pow`,
 * and its Adamax saves nothing). Like tfjs's, the slots are the live Variables.
 */
export async function weightsToSave(optimizer: tf.Optimizer): Promise<NamedTensor[]> {
  const live = liveWeights(optimizer);
  if (live === null) return optimizer.getWeights();
  return [...live.weights, ...live.internals.map((w) => ({ name: `${INTERNAL}${w.name}`, tensor: w.tensor }))];
}

/** Loads what {@link weightsToSave} stored (or tfjs's own list, without internals) into the optimizer. */
export async function loadSavedWeights(optimizer: tf.Optimizer, saved: NamedTensor[]): Promise<void> {
  if (layoutOf(optimizer) === undefined) return optimizer.setWeights(saved);
  const weights: SerializedTensor[] = [];
  const internals: SerializedTensor[] = [];
  for (const { name, tensor } of saved) {
    const entry = { name: name.startsWith(INTERNAL) ? name.slice(INTERNAL.length) : name, shape: [...tensor.shape], dtype: tensor.dtype, values: Array.from(await tensor.data()) };
    (name.startsWith(INTERNAL) ? internals : weights).push(entry);
  }
  writeOptimizer(optimizer, weights, internals.length === 0 ? null : internals);
}

/**
 * Writes checked weights (and internals, or values derived from the iteration count when there
 * are none) into a built-in optimizer, synchronously, disposing the slot Variables it replaces.
 * Call it only after every check passed: it cannot fail half-way on checked input.
 */
export function writeOptimizer(optimizer: tf.Optimizer, weights: readonly SerializedTensor[], internals: readonly SerializedTensor[] | null): void {
  const layout = layoutOf(optimizer);
  if (layout === undefined) throw new Error(`writeOptimizer: ${optimizer.getClassName()} is not a built-in tfjs optimizer.`);
  const target = optimizer as unknown as Record<string, unknown>;
  const iter = weights.find((w) => w.name === 'iter');
  const t = iter === undefined ? 0 : iter.values[0];
  const slots = weights.filter((w) => w.name !== 'iter');
  const active = activeSlots(optimizer, layout);
  const perField = active.length === 0 ? 0 : slots.length / active.length;
  const old: tf.Variable[] = [];
  active.forEach(({ field }, k) => {
    for (const e of (target[field] as SlotEntry[] | undefined) ?? []) if (e != null) old.push(e.variable);
    target[field] = slots.slice(k * perField, (k + 1) * perField).map((w) => ({
      originalName: w.name,
      variable: tf.tidy(() => tf.variable(tf.tensor(w.values, w.shape, 'float32'), false)),
    }));
  });
  target.iterations_ = t;
  // Internals not given (an older state or model) are derived from the iteration count, as tfjs does.
  const given: Record<string, number> = Object.fromEntries((internals ?? []).map((w) => [w.name, w.values[0]]));
  const derived = layout.derive?.(target, t) ?? {};
  for (const name of layout.internals) {
    tf.tidy(() => (target[name] as tf.Variable).assign(tf.scalar(given[name] ?? derived[name], 'float32')));
  }
  tf.dispose(old);
}
