import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { maxRelativeDifference } from '../../src/tutorial/weights';

// The weight snapshot and comparison are the library's (the tutorial entry exports them too).
export { maxRelativeDifference, weightsOf } from '../../src/tutorial/weights';

/**
 * Shared fixtures for the core tests: a small seeded Dense model, seeded data, and the checks
 * every test file needs (weight comparison, leak counting). Fixed seeds make every run identical.
 */

/** A 10 → 8 (tanh) → 1 Dense model whose weights depend only on `seed`. */
export function denseModel(seed = 1): tf.Sequential {
  const model = tf.sequential({
    layers: [
      tf.layers.dense({ units: 8, inputShape: [10], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }), biasInitializer: 'zeros' }),
    ],
  });
  return model;
}

/** `n` samples of 10 features and one target, from a seeded normal distribution. */
export function batch(n: number, seed = 7): { xs: tf.Tensor2D; ys: tf.Tensor2D } {
  return tf.tidy(() => {
    const xs = tf.randomNormal([n, 10], 0, 1, 'float32', seed) as tf.Tensor2D;
    const ys = tf.randomNormal([n, 1], 0, 1, 'float32', seed + 1000) as tf.Tensor2D;
    return { xs, ys };
  });
}

/** Splits a batch into consecutive micro-batches of the given sizes. */
export function split(data: { xs: tf.Tensor2D; ys: tf.Tensor2D }, sizes: number[]): { xs: tf.Tensor2D; ys: tf.Tensor2D }[] {
  const xs = tf.split(data.xs, sizes) as tf.Tensor2D[];
  const ys = tf.split(data.ys, sizes) as tf.Tensor2D[];
  return sizes.map((_, i) => ({ xs: xs[i], ys: ys[i] }));
}

/** Mean squared error of a model on a batch, as a scalar. */
export function meanLoss(model: tf.LayersModel, xs: tf.Tensor, ys: tf.Tensor): tf.Scalar {
  return tf.losses.meanSquaredError(ys, model.apply(xs) as tf.Tensor) as tf.Scalar;
}

/** Per-sample squared error of a model on a batch, as a 1-D tensor. */
export function perSampleLoss(model: tf.LayersModel, xs: tf.Tensor, ys: tf.Tensor): tf.Tensor1D {
  return tf.tidy(() => tf.mean(tf.squaredDifference(ys, model.apply(xs) as tf.Tensor), 1) as tf.Tensor1D);
}

/** Asserts that two weight lists are identical to the bit. */
export function assertBitIdentical(a: Float32Array[], b: Float32Array[]): void {
  assert.equal(a.length, b.length);
  a.forEach((values, i) => assert.deepEqual(Buffer.from(values.buffer), Buffer.from(b[i].buffer), `weight ${i} differs`));
}

/** Asserts that weights moved (so an equality test is not comparing two untouched models). */
export function assertChanged(before: Float32Array[], after: Float32Array[]): void {
  assert.ok(maxRelativeDifference(after, before) > 1e-4, 'the weights did not change');
}

/**
 * Runs `fn` once to warm up (first calls create accumulators and optimizer slots), then
 * `repeat` more times, and asserts that the number of live tensors did not change.
 */
export function assertNoLeak(fn: () => void, repeat: number): void {
  fn();
  const before = tf.memory().numTensors;
  for (let i = 0; i < repeat; i++) fn();
  assert.equal(tf.memory().numTensors, before, 'tensors leaked');
}

/** Asserts that `fn` throws an error whose message contains every fragment. */
export function assertThrowsMentioning(fn: () => unknown, ...fragments: string[]): void {
  assert.throws(fn, (error: Error) => {
    for (const f of fragments) assert.ok(error.message.includes(f), `"${error.message}" does not mention "${f}"`);
    return true;
  });
}

/**
 * The seed of every fast-check property: fixed, so runs are reproducible; override it with
 * `FC_SEED=123 node --import tsx --test test/core/properties.test.ts`. A failure reports the seed,
 * the path and the shrunk counterexample (fast-check's message).
 */
export const FC_SEED = Number(process.env.FC_SEED ?? 20261130);

/** fast-check parameters with the shared seed; `numRuns` keeps each suite within its time budget. */
export function fcParameters(numRuns: number): { seed: number; numRuns: number; endOnFailure: boolean } {
  return { seed: FC_SEED, numRuns, endOnFailure: false };
}

/** A Dense net `inputs` → `hidden` (tanh) → 1 whose weights depend only on `seed`. */
export function denseNet(inputs: number, hidden: number, seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: hidden, inputShape: [inputs], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }), biasInitializer: tf.initializers.randomNormal({ seed: seed + 2, stddev: 0.1 }) }),
    ],
  });
}

/** `n` seeded samples with `inputs` features and one target. */
export function samples(n: number, inputs: number, seed: number): { xs: tf.Tensor2D; ys: tf.Tensor2D } {
  return tf.tidy(() => ({
    xs: tf.randomNormal([n, inputs], 0, 1, 'float32', seed) as tf.Tensor2D,
    ys: tf.randomNormal([n, 1], 0, 1, 'float32', seed + 7919) as tf.Tensor2D,
  }));
}

/** The optimizers the properties draw from, by name. */
export const OPTIMIZERS = {
  sgd: () => tf.train.sgd(0.1),
  momentum: () => tf.train.momentum(0.05, 0.9),
  adam: () => tf.train.adam(0.01),
  rmsprop: () => tf.train.rmsprop(0.01),
} as const;
export type OptimizerName = keyof typeof OPTIMIZERS;

/** What "a failing call changes nothing" compares: the whole state (counters, window, accumulators, slots, EMA), the weights and the tensor count. */
export interface Untouched {
  state: unknown;
  weights: Float32Array[];
  tensors: number;
}

/** Takes {@link Untouched} of an accumulator and its variables (the state read first, so its tensors are gone again). */
export async function untouched(accumulator: { getState(): Promise<unknown> }, variables: readonly tf.Variable[]): Promise<Untouched> {
  const state = await accumulator.getState();
  return { state, weights: variables.map((v) => Float32Array.from(v.dataSync())), tensors: tf.memory().numTensors };
}

/** Asserts that nothing in {@link Untouched} changed since `before` was taken. */
export async function assertUntouched(accumulator: { getState(): Promise<unknown> }, variables: readonly tf.Variable[], before: Untouched, what: string): Promise<void> {
  assert.equal(tf.memory().numTensors, before.tensors, `${what} changed the tensor count`);
  const now = await untouched(accumulator, variables);
  assert.deepEqual(now.state, before.state, `${what} changed the state`);
  assertBitIdentical(now.weights, before.weights);
}

/** Saves a model with its optimizer (`includeOptimizer`) into memory, as `tf.io.fromMemory` loads it back. */
export async function saveToMemory(model: tf.LayersModel): Promise<tf.io.ModelArtifacts> {
  let artifacts: tf.io.ModelArtifacts | null = null;
  await model.save(tf.io.withSaveHandler(async (a) => {
    artifacts = a;
    return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
  }), { includeOptimizer: true });
  return artifacts as unknown as tf.io.ModelArtifacts;
}
