import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from '../core/errors';
import type { LossSpec } from './protocol';

/**
 * The loss of a parallel run. Functions cannot cross a thread boundary, so each worker finds the
 * loss again from a description: a `tf.losses` name, or a module it imports plus an export name.
 */

/**
 * The `tf.losses` functions usable by name: those called as `(labels, predictions)` that return
 * the mean loss of the batch. (`cosineDistance` needs an axis and `computeWeightedLoss` is not a
 * loss of predictions; wrap them in a module of your own.)
 */
export const TFJS_LOSS_NAMES = [
  'meanSquaredError',
  'absoluteDifference',
  'hingeLoss',
  'huberLoss',
  'logLoss',
  'sigmoidCrossEntropy',
  'softmaxCrossEntropy',
] as const;

/**
 * What a loss returns for one micro-batch, `(ys, predictions) => …`:
 * - a scalar: the micro-batch's mean loss;
 * - a 1-D tensor: per-sample losses (their count is the micro-batch's count);
 * - `{ loss, count }`: a summed loss and the count it sums over (e.g. unmasked tokens), as a
 *   number or a scalar tensor; the window is divided by the total count.
 */
export type LossOutput = tf.Tensor | { loss: tf.Tensor; count: tf.Tensor | number };

/** A loss as a worker calls it, for a model with one output. */
export type LossFunction = (ys: tf.Tensor, predictions: tf.Tensor) => LossOutput;

/** A loss as a worker calls it for a model with several outputs: the targets and predictions in `model.outputs` order. */
export type MultiOutputLossFunction = (ys: tf.Tensor[], predictions: tf.Tensor[]) => LossOutput;

/** Either: what a worker calls, with one tensor or with arrays. */
export type WorkerLoss = (ys: tf.Tensor | tf.Tensor[], predictions: tf.Tensor | tf.Tensor[]) => LossOutput;

/**
 * Checks a loss description in the main thread, so a typo fails at `create` with a named error
 * instead of in every worker. A module specifier is resolved against the current directory
 * (relative paths) or `node_modules` (package names), imported once to check the export, and
 * handed to the workers as an absolute path.
 */
export function checkLossSpec(owner: string, spec: unknown): LossSpec {
  const accepted = `one of ${TFJS_LOSS_NAMES.map((n) => `"${n}"`).join(', ')}, or { module, export } naming a function (ys, predictions) => loss`;
  if (typeof spec === 'string') {
    if (!(TFJS_LOSS_NAMES as readonly string[]).includes(spec)) throw argumentError(owner, 'loss', accepted, spec);
    return spec;
  }
  if (spec === null || typeof spec !== 'object') throw argumentError(owner, 'loss', accepted, spec);
  const { module, export: name } = spec as { module?: unknown; export?: unknown };
  if (typeof module !== 'string' || module === '' || typeof name !== 'string' || name === '') {
    throw argumentError(owner, 'loss', accepted, spec);
  }
  let resolved: string;
  try {
    resolved = require.resolve(module, { paths: [process.cwd()] });
  } catch {
    throw argumentError(owner, 'loss.module', 'a module that resolves from the current directory (an absolute path, ./relative path or package name)', module);
  }
  const loaded = loadModule(resolved) as Record<string, unknown>;
  if (typeof loaded[name] !== 'function') {
    throw argumentError(owner, 'loss.export', `the name of a function exported by ${module}`, verbatim(`"${name}", which is ${loaded[name] === undefined ? 'not exported' : `a ${typeof loaded[name]}`}`));
  }
  return { module: resolved, export: name };
}

/**
 * The loss function a worker calls, from a checked description. A loss by name on a model with
 * several outputs is the sum of its mean over each output (as Keras applies one loss given for
 * several outputs); a module's function receives the arrays and decides.
 */
export function resolveLoss(spec: LossSpec): WorkerLoss {
  if (typeof spec === 'string') {
    const fn = (tf.losses as unknown as Record<string, (labels: tf.Tensor, predictions: tf.Tensor) => tf.Tensor>)[spec];
    return (ys, predictions) => {
      if (!Array.isArray(predictions)) return fn(ys as tf.Tensor, predictions);
      const targets = ys as tf.Tensor[];
      return tf.addN(predictions.map((p, k) => fn(targets[k], p)));
    };
  }
  const fn = (loadModule(spec.module) as Record<string, WorkerLoss>)[spec.export];
  if (typeof fn !== 'function') throw new Error(`the module ${spec.module} has no function export "${spec.export}"`);
  return fn;
}

/**
 * A worker's error message in the words of `ParallelAccumulator.create`: the core's loss checks
 * (shared with `GradientAccumulator.step`) name the loss `lossFn`, the parameter of `step`; the
 * option the user wrote here is `loss`.
 */
export function inLossTerms(owner: string, message: string): string {
  const core = `${owner}: lossFn `;
  return message.startsWith(core) ? `${owner}: loss ${message.slice(core.length)}` : message;
}

/** Loads a module by absolute path (CommonJS, or TypeScript when a loader such as tsx is registered). */
export function loadModule(path: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path);
}
