import * as tf from '@tensorflow/tfjs';
import { availableParallelism } from 'node:os';
import type { BackendPreference } from '../backend/selectBackend';
import { argumentError, isPositiveFinite, isPositiveInteger } from '../core/errors';
import type { NonFinitePolicy } from '../core/gradientAccumulator';
import { AccumulationSchedule, checkAccumulationSteps } from '../core/schedule';
import { checkLossSpec } from './loss';
import type { LossSpec } from './protocol';
import type { Averaging } from './state';

/** Options of {@link ParallelAccumulator.create}. */
export interface ParallelAccumulatorArgs {
  /** The model to train, in this thread; each worker trains a replica rebuilt from its JSON and weights. Required. */
  model: tf.LayersModel;
  /** The optimizer that applies each window's update in this thread. The accumulator owns it (see `dispose`). Required. */
  optimizer: tf.Optimizer;
  /** Micro-batches per update: a positive integer, or a schedule evaluated at the start of every window. Required. */
  accumulationSteps: number | AccumulationSchedule;
  /**
   * The loss, `(ys, predictions) => …`: one of `TFJS_LOSS_NAMES` (e.g. `"softmaxCrossEntropy"`),
   * or `{ module, export }` naming a function exported by a module every worker imports (see
   * `LossOutput` for what it may return). Functions cannot cross threads. Required.
   */
  loss: LossSpec;
  /** Worker threads. Default: `os.availableParallelism()`. */
  workers?: number;
  /** The backend each worker asks `selectBackend` for. Default: `selectBackend`'s own default (the `TFJS_ACCUMULATE_BACKEND` variable, else `"auto"`). */
  backend?: BackendPreference;
  /** `"per-sample"` (default): divide by the window's samples (or the counts the loss returns). `"per-micro-batch"`: each micro-batch's mean counts once. */
  averaging?: Averaging;
  /** Clip the window's averaged gradient to this global L2 norm before the update. Default: no clipping. */
  clipNorm?: number;
  /** What a non-finite loss or gradient does, as in `GradientAccumulator`. Default `"error"`. */
  nonFinite?: NonFinitePolicy;
  /** Modules each worker imports before rebuilding the model, e.g. one that registers your custom layers. Default none. */
  modules?: string[];
  /**
   * Reduce the workers' sums into the main thread every `syncEvery` micro-batches instead of
   * only when the window is full. The update is the same; only the waiting changes. Setting it
   * to the number of workers gives a loop that synchronizes on every micro-step, as data-parallel
   * training does without `no_sync`: use it to measure what skipping that costs. Default: no
   * synchronization inside a window.
   */
  syncEvery?: number;
}

/** The arguments once checked, with every default filled in. */
export interface CheckedParallelArgs {
  model: tf.LayersModel;
  optimizer: tf.Optimizer;
  accumulationSteps: number | AccumulationSchedule;
  /** A `tf.losses` name, or a module resolved to an absolute path. */
  loss: LossSpec;
  workers: number;
  averaging: Averaging;
  nonFinite: NonFinitePolicy;
  clipNorm: number | null;
  syncEvery: number | null;
  /** Absolute paths. */
  modules: string[];
  backend: BackendPreference | undefined;
}

/** Checks every argument of `ParallelAccumulator.create` before any thread starts. */
export function checkParallelArgs(owner: string, args: ParallelAccumulatorArgs): CheckedParallelArgs {
    if (args === null || typeof args !== 'object') {
      throw argumentError(owner, 'args', 'an object { model, optimizer, accumulationSteps, loss, … }', args);
    }
    const { model } = args;
    if (!(model instanceof tf.LayersModel)) throw argumentError(owner, 'model', 'a tf.LayersModel (e.g. tf.sequential(…))', model);
    if (model.trainableWeights.length === 0) throw argumentError(owner, 'model', 'a model with trainable weights', model);
    if (model.trainableWeights.some((w) => w.dtype !== 'float32')) throw argumentError(owner, 'model', 'a model whose trainable weights are float32', model);
    if (!(args.optimizer instanceof tf.Optimizer)) throw argumentError(owner, 'optimizer', 'a tf.Optimizer (e.g. tf.train.sgd(0.01))', args.optimizer);
    const accumulationSteps = checkAccumulationSteps(owner, args.accumulationSteps);
    const loss = checkLossSpec(owner, args.loss);
    const workers = args.workers ?? availableParallelism();
    if (!isPositiveInteger(workers)) throw argumentError(owner, 'workers', 'a positive integer (worker threads), or left out for one per core', workers);
    const averaging = args.averaging ?? 'per-sample';
    if (averaging !== 'per-sample' && averaging !== 'per-micro-batch') throw argumentError(owner, 'averaging', '"per-sample" or "per-micro-batch"', averaging);
    const nonFinite = args.nonFinite ?? 'error';
    if (nonFinite !== 'error' && nonFinite !== 'skip-micro-batch' && nonFinite !== 'skip-window') {
      throw argumentError(owner, 'nonFinite', '"error", "skip-micro-batch" or "skip-window"', nonFinite);
    }
    if (args.clipNorm !== undefined && !isPositiveFinite(args.clipNorm)) throw argumentError(owner, 'clipNorm', 'a finite number > 0, or left out', args.clipNorm);
    const syncEvery = args.syncEvery ?? null;
    if (syncEvery !== null && !isPositiveInteger(syncEvery)) throw argumentError(owner, 'syncEvery', 'a positive integer (micro-batches between reductions), or left out', syncEvery);
    const modules = args.modules ?? [];
    if (!Array.isArray(modules) || modules.some((m) => typeof m !== 'string')) throw argumentError(owner, 'modules', 'an array of module specifiers', modules);
    const resolved = modules.map((m) => {
      try {
        return require.resolve(m, { paths: [process.cwd()] });
      } catch {
        throw argumentError(owner, 'modules', 'module specifiers that resolve from the current directory', m);
      }
    });

  return { model, optimizer: args.optimizer, accumulationSteps, loss, workers, averaging, nonFinite, clipNorm: args.clipNorm ?? null, syncEvery, modules: resolved, backend: args.backend };
}
