import * as tf from '@tensorflow/tfjs';
import { addIntoSums, averageGradients } from './accumulation';
import { argumentError, checkKeys, describe, isPositiveFinite, isPositiveInteger, verbatim } from './errors';
import { safeVariableGrads } from './lossGradient';

/** Options of {@link checkEquivalence}. */
export interface CheckEquivalenceArgs {
  /** The model to check. Every weight, trainable or not, is restored afterwards. Required. */
  model: tf.LayersModel;
  /** Inputs of one logical batch. Required. */
  xs: tf.Tensor;
  /** Targets of the same batch. Required. */
  ys: tf.Tensor;
  /** Micro-batches to split the batch into (sizes as equal as possible). Default 4. */
  accumulationSteps?: number;
  /**
   * The loss of a batch, `(yTrue, yPred) => …`: a scalar mean, or a 1-D per-sample loss (the form
   * `GradientAccumulator.step` takes for exact per-sample averaging; its mean is used here).
   * Default: mean squared error.
   */
  loss?: (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.Tensor;
  /**
   * Largest relative difference always counted as equal. Default 1e-5. The bound actually used
   * is the larger of this and 10 × the measured rounding noise (see `roundingNoise`).
   */
  tolerance?: number;
}

/** How far one variable's accumulated gradient is from its big-batch gradient. */
export interface VariableDifference {
  variable: string;
  /** The layer that owns the variable. */
  layer: string;
  /** max |accumulated − big batch| / max |big batch|. */
  relativeDifference: number;
}

/** A layer that makes accumulation differ from the big batch, and why. */
export interface EquivalenceSuspect {
  layer: string;
  className: string;
  reason: string;
}

/** The verdict of {@link checkEquivalence}. */
export interface EquivalenceReport {
  /** True when every variable's accumulated gradient matches the big batch within tolerance. */
  equivalent: boolean;
  accumulationSteps: number;
  /** The micro-batch sizes used. */
  microBatchSizes: number[];
  /** The largest relative difference over all variables. */
  maxRelativeDifference: number;
  /** False when two big-batch gradients of the same data differ (a random layer such as Dropout). */
  deterministic: boolean;
  /**
   * The float32 rounding noise of this model on this backend: the relative difference between
   * the big-batch gradient and the gradient of the same samples in reverse order, which is the
   * same number mathematically. Backends that sum in float32 (wasm) show more than those that
   * sum in float64 (cpu), and normalization layers amplify it.
   */
  roundingNoise: number;
  /** The bound `maxRelativeDifference` was compared with: max(tolerance, 10 × roundingNoise). */
  bound: number;
  /** Every trainable variable, largest difference first. */
  variables: VariableDifference[];
  /** When not equivalent: the layers that break equivalence (empty when equivalent). */
  suspects: EquivalenceSuspect[];
}

/** Layers known to break the equivalence of accumulation, and why. */
const KNOWN_BREAKERS: Record<string, string> = {
  BatchNormalization: 'normalizes each micro-batch with its own mean and variance, so the batch statistics differ from the big batch',
  BatchRenormalization: 'uses micro-batch statistics (corrected towards the moving ones), so it is close to, but not, the big batch',
  Dropout: 'draws a new random mask on every call',
  SpatialDropout1D: 'draws a new random mask on every call',
  GaussianDropout: 'draws new random noise on every call',
  GaussianNoise: 'draws new random noise on every call',
  AlphaDropout: 'draws a new random mask on every call',
};

const OWNER = 'checkEquivalence';

/**
 * Checks on your own model whether accumulating `accumulationSteps` micro-batches gives the
 * gradient of the whole batch, and if not, which layers break it. Nothing is trained: the model's
 * weights (including BatchNorm moving statistics) are exactly as before when it returns.
 */
export function checkEquivalence(args: CheckEquivalenceArgs): EquivalenceReport {
  if (args === null || typeof args !== 'object') throw argumentError(OWNER, 'args', 'an object { model, xs, ys, … }', args);
  checkKeys(OWNER, 'args', args, ['model', 'xs', 'ys', 'accumulationSteps', 'loss', 'tolerance']);
  const { model, xs, ys } = args;
  if (!(model instanceof tf.LayersModel)) throw argumentError(OWNER, 'model', 'a tf.LayersModel', model);
  if (!(xs instanceof tf.Tensor) || xs.rank < 1) throw argumentError(OWNER, 'xs', 'a tensor with a batch dimension', xs);
  if (!(ys instanceof tf.Tensor) || ys.shape[0] !== xs.shape[0]) {
    throw argumentError(OWNER, 'ys', `a tensor with the same batch size as xs (${xs.shape[0]})`, ys);
  }
  const accumulationSteps = args.accumulationSteps ?? 4;
  if (!isPositiveInteger(accumulationSteps) || accumulationSteps > xs.shape[0]) {
    throw argumentError(OWNER, 'accumulationSteps', `a positive integer no larger than the batch (${xs.shape[0]})`, accumulationSteps);
  }
  const tolerance = args.tolerance ?? 1e-5;
  if (!isPositiveFinite(tolerance)) throw argumentError(OWNER, 'tolerance', 'a finite number > 0', tolerance);
  const loss = args.loss ?? ((yTrue: tf.Tensor, yPred: tf.Tensor) => tf.losses.meanSquaredError(yTrue, yPred));

  const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
  if (vars.length === 0) throw argumentError(OWNER, 'model', 'a model with trainable weights', model);
  const saved = model.weights.map((w) => w.read().clone());
  const restore = () => model.weights.forEach((w, i) => w.write(saved[i]));
  const meanLoss = (y: tf.Tensor, x: tf.Tensor): tf.Scalar => {
    const out = loss(y, model.apply(x, { training: true }) as tf.Tensor);
    if (out instanceof tf.Tensor && out.rank === 0) return out as tf.Scalar;
    if (out instanceof tf.Tensor && out.rank === 1) return tf.mean(out) as tf.Scalar;
    throw argumentError(OWNER, 'loss', 'a function (yTrue, yPred) => a scalar mean loss or a 1-D per-sample loss', verbatim(`a function that returned ${describe(out)}`));
  };
  const gradientOf = (x: tf.Tensor, y: tf.Tensor): tf.Tensor[] =>
    tf.tidy(() => {
      const { gradients } = safeVariableGrads(OWNER, () => meanLoss(y, x), vars);
      return vars.map((v, i) => gradients[i] ?? tf.zerosLike(v));
    });

  const batch = xs.shape[0];
  const microBatchSizes = Array.from({ length: accumulationSteps }, (_, i) =>
    Math.floor(batch / accumulationSteps) + (i < batch % accumulationSteps ? 1 : 0),
  );
  try {
    let differences: number[] = [];
    let noise: number[] = [];
    let roundingNoise = 0;
    // One tidy around all the tensor work: if the loss throws at any point, nothing is left behind.
    tf.tidy(() => {
      const big = gradientOf(xs, ys);
      restore();
      const again = gradientOf(xs, ys);
      restore();
      const permuted = gradientOf(tf.reverse(xs, 0), tf.reverse(ys, 0));
      restore();
      const xParts = tf.split(xs, microBatchSizes);
      const yParts = tf.split(ys, microBatchSizes);
      let sums = vars.map((v) => tf.zerosLike(v) as tf.Tensor);
      microBatchSizes.forEach((size, k) => {
        const g = gradientOf(xParts[k], yParts[k]);
        restore();
        // Each micro-batch's mean gradient weighted by its size: exact for uneven splits too.
        const { sums: next, probe } = addIntoSums(sums, g, size);
        tf.dispose([...sums, ...g, probe]);
        sums = next as tf.Tensor[];
      });
      const accumulated = averageGradients(sums, batch);
      const relative = (a: tf.Tensor[], b: tf.Tensor[]) =>
        Array.from(tf.tidy(() => tf.stack(a.map((t, i) => tf.div(tf.max(tf.abs(tf.sub(t, b[i]))), tf.maximum(tf.max(tf.abs(b[i])), 1e-30))))).dataSync());
      differences = relative(accumulated, big);
      noise = relative(again, big);
      roundingNoise = Math.max(...relative(permuted, big));
    });

    const owner = new Map<string, string>();
    const layers = allLayers(model);
    for (const layer of layers) for (const w of layer.trainableWeights) owner.set((w.read() as tf.Variable).name, layer.name);
    const variables = vars
      .map((v, i) => ({ variable: v.name, layer: owner.get(v.name) ?? '(unknown)', relativeDifference: differences[i] }))
      .sort((a, b) => b.relativeDifference - a.relativeDifference);
    const maxRelativeDifference = variables[0].relativeDifference;
    const deterministic = Math.max(...noise) <= tolerance;
    // Note: a fixed tolerance either misses rounding on float32-summing backends or hides real
    // differences on float64-summing ones; the reversed batch measures the rounding to expect.
    const bound = Math.max(tolerance, 10 * roundingNoise);
    const equivalent = deterministic && maxRelativeDifference <= bound;
    let suspects: EquivalenceSuspect[] = [];
    if (!equivalent) {
      suspects = layers
        .filter((l) => KNOWN_BREAKERS[l.getClassName()] !== undefined && !isInference(l))
        .map((l) => ({ layer: l.name, className: l.getClassName(), reason: KNOWN_BREAKERS[l.getClassName()] }));
      if (suspects.length === 0) {
        suspects = variables
          .filter((v) => v.relativeDifference > bound)
          .map((v) => ({ layer: v.layer, className: layers.find((l) => l.name === v.layer)?.getClassName() ?? '', reason: `its gradient differs by ${v.relativeDifference.toExponential(2)} (relative)` }))
          .filter((s, i, all) => all.findIndex((o) => o.layer === s.layer) === i);
      }
    }
    return { equivalent, accumulationSteps, microBatchSizes, maxRelativeDifference, deterministic, roundingNoise, bound, variables, suspects };
  } finally {
    restore();
    tf.dispose(saved);
  }
}

/** Every layer of a model, descending into nested models. */
function allLayers(model: tf.LayersModel): tf.layers.Layer[] {
  return model.layers.flatMap((l) => (l instanceof tf.LayersModel ? allLayers(l) : [l]));
}

/** A Dropout with rate 0 never breaks anything; other layers are judged by class. */
function isInference(layer: tf.layers.Layer): boolean {
  const rate = (layer.getConfig() as { rate?: unknown }).rate;
  return typeof rate === 'number' && rate === 0;
}
