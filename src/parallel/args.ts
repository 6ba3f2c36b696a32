import * as tf from '@tensorflow/tfjs';
import { availableParallelism } from 'node:os';
import { checkNativeThreads } from '../backend/kernels/nativeBlas';
import { BACKEND_ENV_VAR, BACKEND_PREFERENCES, BackendPreference } from '../backend/selectBackend';
import { ACCUMULATOR_ARG_KEYS, CheckedAccumulatorArgs, GradientAccumulatorArgs, checkAccumulatorArgs } from '../core/accumulatorArgs';
import { argumentError, checkKeys, isPositiveInteger } from '../core/errors';
import { checkLossSpec } from './loss';
import type { LossSpec } from './protocol';

/**
 * Options of {@link ParallelAccumulator.create}: every option of `GradientAccumulator` (the same
 * checks, the same meaning, applied by the same code on the main thread), except `varList`, plus
 * the model, the loss and the threads.
 */
export interface ParallelAccumulatorArgs extends Omit<GradientAccumulatorArgs, 'varList'> {
  /** The model to train, in this thread; each worker trains a replica rebuilt from its JSON and weights. Its trainable weights are the variables trained. Required. */
  model: tf.LayersModel;
  /**
   * The loss, `(ys, predictions) => …`: one of `TFJS_LOSS_NAMES` (e.g. `"softmaxCrossEntropy"`),
   * or `{ module, export }` naming a function exported by a module every worker imports (see
   * `LossOutput` for what it may return). Functions cannot cross threads. Required.
   */
  loss: LossSpec;
  /**
   * Worker threads: from 1 to {@link maxWorkers} (`WORKERS_PER_CORE` per core; more threads
   * only wait for a core, and each one costs its own start-up and memory). Default:
   * `os.availableParallelism()`.
   */
  workers?: number;
  /**
   * The backend each worker asks `selectBackend` for, one of `BACKEND_PREFERENCES` (checked at
   * `create`, before any thread starts). Default: `selectBackend`'s own default (the
   * `TFJS_ACCUMULATE_BACKEND` variable, also checked at `create`, else `"auto"`).
   */
  backend?: BackendPreference;
  /**
   * The BLAS threads of each worker on the native path (`selectBackend`'s `nativeThreads` in
   * every worker): 1 (default: the workers are the parallelism), or more while `workers` x
   * `nativeThreads` stays within the cores. More is a named error: never more threads than
   * cores. Note: OpenBLAS keeps one thread count per process, so the workers share one setting,
   * and a later `setNativeThreads` on the main thread changes theirs too. Ignored on other
   * backends.
   */
  nativeThreads?: number;
  /**
   * Modules each worker imports before rebuilding the model: one that registers your custom
   * layers (or any class of the model) with `tf.serialization.registerClass`. A model using a
   * class no worker knows is refused at `create` with `UnregisteredClassError`. Default none.
   */
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

/** The keys only the parallel trainer reads; the others are `GradientAccumulator`'s. */
const PARALLEL_KEYS = ['model', 'loss', 'workers', 'backend', 'nativeThreads', 'modules', 'syncEvery'] as const;

/**
 * Workers per core accepted at most. Workers beyond the cores share them (no window runs faster),
 * and each costs a thread, a V8 isolate and a replica of the model (16 workers on 2 cores took
 * 7.8 s and 722 MB to start): a small factor still lets a test or a notebook run 3 workers on a
 * 1-core machine.
 */
export const WORKERS_PER_CORE = 4;

/** The most workers `ParallelAccumulator.create` accepts here: {@link WORKERS_PER_CORE} per core. */
export function maxWorkers(cores = availableParallelism()): number {
  return WORKERS_PER_CORE * Math.max(1, cores);
}

/** The arguments once checked, with every default filled in. */
export interface CheckedParallelArgs {
  model: tf.LayersModel;
  /** The `GradientAccumulator` options, as given (with `varList` set to the model's trainable weights), and checked. */
  core: GradientAccumulatorArgs;
  checked: CheckedAccumulatorArgs;
  /** A `tf.losses` name, or a module resolved to an absolute path. */
  loss: LossSpec;
  workers: number;
  syncEvery: number | null;
  /** Absolute paths. */
  modules: string[];
  backend: BackendPreference | undefined;
  /** BLAS threads per worker, checked against the cores and the workers. */
  nativeThreads: number;
}

/**
 * Checks every argument of `ParallelAccumulator.create` before any thread starts: unknown keys
 * (with "did you mean"), then the accumulator's options by the core's own checks, then the
 * parallel ones.
 */
export function checkParallelArgs(owner: string, args: ParallelAccumulatorArgs): CheckedParallelArgs {
  if (args === null || typeof args !== 'object') {
    throw argumentError(owner, 'args', 'an object { model, optimizer, accumulationSteps, loss, … }', args);
  }
  if ('varList' in args) {
    throw argumentError(owner, 'varList', "left out: the parallel trainer trains the model's trainable weights (set layer.trainable = false before create to freeze one)", (args as { varList?: unknown }).varList);
  }
  checkKeys(owner, 'args', args, [...PARALLEL_KEYS, ...ACCUMULATOR_ARG_KEYS.filter((k) => k !== 'varList')]);
  const { model } = args;
  if (!(model instanceof tf.LayersModel)) throw argumentError(owner, 'model', 'a tf.LayersModel (e.g. tf.sequential(…))', model);
  if (model.trainableWeights.length === 0) throw argumentError(owner, 'model', 'a model with trainable weights', model);
  if (model.trainableWeights.some((w) => w.dtype !== 'float32')) throw argumentError(owner, 'model', 'a model whose trainable weights are float32', model);
  const core = { varList: model.trainableWeights } as unknown as GradientAccumulatorArgs;
  for (const key of ACCUMULATOR_ARG_KEYS) {
    if (key !== 'varList' && (args as unknown as Record<string, unknown>)[key] !== undefined) (core as unknown as Record<string, unknown>)[key] = (args as unknown as Record<string, unknown>)[key];
  }
  const checked = checkAccumulatorArgs(owner, core);
  const loss = checkLossSpec(owner, args.loss);
  const cores = availableParallelism();
  const workers = args.workers ?? cores;
  if (!isPositiveInteger(workers) || workers > maxWorkers(cores)) {
    throw argumentError(owner, 'workers', `an integer from 1 to ${maxWorkers(cores)} (${WORKERS_PER_CORE} per core on this machine's ${cores}: more threads only wait for a core), or left out for one per core`, args.workers);
  }
  const backend = checkBackend(owner, args.backend);
  const nativeThreads = checkNativeThreads(owner, 'nativeThreads', args.nativeThreads ?? 1, { workers, optional: true });
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
  return { model, core, checked, loss, workers, syncEvery, modules: resolved, backend, nativeThreads };
}

/**
 * The backend preference every worker will hand to `selectBackend`, checked here so that a typo
 * fails at `create` by the option's name, before any thread starts; when it is left out, the
 * environment variable the workers would read instead is checked the same way.
 */
function checkBackend(owner: string, backend: unknown): BackendPreference | undefined {
  const accepted = `one of ${BACKEND_PREFERENCES.map((p) => `"${p}"`).join(', ')}`;
  if (backend !== undefined) {
    if (!BACKEND_PREFERENCES.includes(backend as BackendPreference)) throw argumentError(owner, 'backend', `${accepted}, or left out`, backend);
    return backend as BackendPreference;
  }
  const fromEnv = process.env[BACKEND_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '' && !BACKEND_PREFERENCES.includes(fromEnv as BackendPreference)) {
    throw argumentError(owner, `the ${BACKEND_ENV_VAR} environment variable (read by every worker, since backend is left out)`, `${accepted}, or unset`, fromEnv);
  }
  return undefined;
}
