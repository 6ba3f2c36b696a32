import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { epochSchedule } from '../../src/core/schedule';
import type { AccumulatorState } from '../../src/core/state';
import { FC_SEED } from './index';
import { looseTensors, Reference, ReferenceOptions, relativeDifference } from './reference';

/**
 * What the three model-based suites share: the options drawn for a run, the trainer's options
 * built from them, the checks made after every command against the reference, and fast-check's
 * parameters. A default run is sized for CI; `FC_RUNS=<n>` (runs per suite) and `FC_COMMANDS=<n>`
 * (the longest sequence) make deep runs, `FC_SEED=<n>` other cases.
 */

/** fast-check's parameters for a model-based suite: the project's seed, `runs` runs unless FC_RUNS says otherwise. */
export function modelRunParameters(runs: number): fc.Parameters<unknown> {
  return { seed: FC_SEED, numRuns: Number(process.env.FC_RUNS ?? runs), endOnFailure: false };
}

/** The longest command sequence of a run (FC_COMMANDS for deep runs). */
export const maxCommands = (commands: number) => Number(process.env.FC_COMMANDS ?? commands);

/** The options of one run. */
export const optionsArbitrary: fc.Arbitrary<ReferenceOptions> = fc.record({
  learningRate: fc.constantFrom(0.05, 0.2),
  momentum: fc.constantFrom(0, 0.9),
  schedule: fc.tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3 })).map(([a, b, c]) => ({ 0: a, 1: b, 3: c })),
  clipNorm: fc.option(fc.constantFrom(0.5, 2), { nil: null }),
  // Normal windows' norms are a few units, spiked ones (targets × 1e4) hundreds or more.
  maxNorm: fc.option(fc.constant(100), { nil: null }),
  emaDecay: fc.option(fc.constantFrom(0.5, 0.9), { nil: null }),
  nonFinite: fc.constantFrom<ReferenceOptions['nonFinite']>('error', 'skip-micro-batch', 'skip-window'),
});

/** The trainer options the reference options stand for (without `optimizer`, made by `optimizerOf`). */
export function trainerOptions(o: ReferenceOptions) {
  return {
    accumulationSteps: epochSchedule(o.schedule),
    nonFinite: o.nonFinite,
    ...(o.clipNorm === null ? {} : { clipNorm: o.clipNorm }),
    ...(o.maxNorm === null ? {} : { skipLargeUpdates: { maxNorm: o.maxNorm } }),
    ...(o.emaDecay === null ? {} : { ema: { decay: o.emaDecay } }),
  };
}

export const optimizerOf = (o: ReferenceOptions): tf.Optimizer => (o.momentum > 0 ? tf.train.momentum(o.learningRate, o.momentum) : tf.train.sgd(o.learningRate));

/** What a trainer shows of its state, read through its public API. */
export interface Observed {
  weights: ArrayLike<number>[];
  counters: { microStep: number; updateStep: number; epoch: number; skippedMicroBatches: number; skippedWindows: number; skippedLargeUpdates: number };
  pendingMicroBatches: number;
  /** Its `getState()`, for the averages; null where reading it would change the run (the caller checks them otherwise). */
  state: AccumulatorState | null;
  /** The model's variable names in reference order. */
  names: string[];
}

/** Float32 training against float64 reference math: this far apart, relative to the largest weight. */
const TOLERANCE = 1e-4;

/**
 * The checks after every command: the weights, the averages (which variables have one, and their
 * values) and every counter against the reference, and no loose tensor left behind (only the
 * trainer's state Variables may grow, each at most once per variable and kind).
 */
export function checkAgainst(reference: Reference, observed: Observed, loose: number, what: string): void {
  const { params, counters } = reference.state;
  const difference = relativeDifference(observed.weights, params);
  assert.ok(difference <= TOLERANCE, `${what}: weights ${difference.toExponential(2)} from the reference`);
  assert.deepEqual(observed.counters, counters, `${what}: counters`);
  assert.equal(observed.pendingMicroBatches, reference.state.window.microBatches, `${what}: pending micro-batches`);
  const ema = observed.state?.ema ?? null;
  if (observed.state === null) {
    // The caller checks the averages.
  } else if (reference.options.emaDecay === null) assert.equal(ema, null, `${what}: no averages without ema`);
  else {
    const saved = observed.state.accumulators.map((a) => a.name);
    const byVariable = observed.names.map((name) => ema?.[saved.indexOf(name)] ?? null);
    assert.deepEqual(byVariable.map((e) => e !== null), reference.state.ema.map((e) => e !== null), `${what}: which variables have an average`);
    const present = reference.state.ema.flatMap((e, v) => (e === null ? [] : [{ e, actual: (byVariable[v] as { values: number[] }).values }]));
    const emaDifference = relativeDifference(present.map((p) => p.actual), present.map((p) => p.e));
    assert.ok(emaDifference <= TOLERANCE, `${what}: averages ${emaDifference.toExponential(2)} from the reference`);
  }
  assert.equal(looseTensors(), loose, `${what}: tensors left behind (${tf.memory().numTensors} tensors, ${Object.keys(tf.engine().registeredVariables).join(' ')})`);
}

/** The model's variable names in reference order (layer by layer). */
export function variableNames(model: tf.LayersModel): string[] {
  return model.layers.flatMap((l) => l.weights.map((w) => (w.read() as tf.Variable).name));
}

/** The weights of a model in reference order (layer by layer, so freezing does not reorder them). */
export function modelWeights(model: tf.LayersModel): Float32Array[] {
  return model.layers.flatMap((l) => l.weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array)));
}

/** The reference's weights as the trainer's starting point: read from the model. */
export function referenceParams(model: tf.LayersModel): number[][] {
  return modelWeights(model).map((w) => Array.from(w));
}
