import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { NonFiniteGradientError } from '../../src/core/gradientAccumulator';
import type { AccumulatorState } from '../../src/core/state';
import { ParallelAccumulator, WorkerFailedError } from '../../src/parallel';
import { FAIL_LABEL } from '../fixtures/parallelLosses';
import { assertBitIdentical } from '../helpers';
import { checkAgainst, maxCommands, modelRunParameters, modelWeights, trainerOptions, variableNames } from '../helpers/modelBased';
import { FIXTURES } from '../helpers/parallel';
import { INPUTS, linearNet, looseTensors, makeSamples, Reference, ReferenceOptions, relativeDifference, Sample } from '../helpers/reference';

/**
 * ParallelAccumulator with 1, 2 and 3 workers, model-based: micro-batches sent to the workers
 * (uneven, spiked where maxNorm skips them, non-finite, one that makes its worker throw),
 * flush, endEpoch with and without flushing across a shrinking epochSchedule (a window is fixed
 * before its micro-batches leave), a checkpoint through JSON, a refused micro-batch and EMA
 * swaps, against the float64 reference. The reference follows the rounds: micro-batches in the
 * workers count as sent, and join the reference's window when the trainer reduces them (the
 * finite ones, then the non-finite ones, then the window's last), or are dropped with their round
 * when a worker failed. Workers are slow to start: three trainers are made once and reset
 * between runs (weights and a fresh state).
 */

const INSTANCES: { workers: number; options: ReferenceOptions }[] = [
  { workers: 1, options: { learningRate: 0.05, momentum: 0, schedule: { 0: 3, 1: 2, 3: 1 }, clipNorm: null, maxNorm: null, emaDecay: 0.9, nonFinite: 'skip-micro-batch' } },
  { workers: 2, options: { learningRate: 0.2, momentum: 0, schedule: { 0: 2, 1: 4, 3: 3 }, clipNorm: 0.5, maxNorm: 100, emaDecay: null, nonFinite: 'skip-window' } },
  { workers: 3, options: { learningRate: 0.05, momentum: 0, schedule: { 0: 4, 1: 1, 3: 2 }, clipNorm: null, maxNorm: 100, emaDecay: 0.5, nonFinite: 'error' } },
];

interface Trainer {
  acc: ParallelAccumulator;
  model: tf.LayersModel;
  options: ReferenceOptions;
  initial: tf.Tensor[];
  fresh: AccumulatorState;
  workerTensors: number[];
}

/** A micro-batch in the workers, as the reference keeps it until its round is reduced. */
interface InFlight {
  samples: Sample[];
  finite: boolean;
  fails: boolean;
}

interface Model {
  ref: Reference;
  inFlight: InFlight[];
}

type Real = Trainer & { loose: number };
type Command = fc.AsyncCommand<Model, Real>;
const ALL = [true, true, true, true];

/**
 * The reference's side of a reduce: the round leaves the workers; a worker's failure drops it
 * whole; otherwise its finite micro-batches join the window, then its non-finite ones (under
 * "error" they throw, uncounted), then the window's last one. Returns the error the trainer throws.
 */
function reduce(m: Model, hasLast: boolean, applied?: boolean): 'worker' | 'non-finite' | null {
  const round = m.inFlight;
  m.inFlight = [];
  if (round.some((b) => b.fails)) return 'worker';
  const last = hasLast ? round[round.length - 1] : null;
  const body = hasLast ? round.slice(0, -1) : round;
  const refuse = m.ref.options.nonFinite === 'error';
  for (const b of [...body.filter((b) => b.finite), ...body.filter((b) => !b.finite), ...(last ? [last] : [])]) {
    if (b.finite || !refuse) m.ref.microBatch(b.samples, ALL, b.finite, applied);
  }
  return refuse && round.some((b) => !b.finite) ? 'non-finite' : null;
}

const ERRORS = { worker: WorkerFailedError, 'non-finite': NonFiniteGradientError };

/** Runs a call the reference says throws `expected` (or not), and returns its result. */
async function outcome<T>(call: () => Promise<T>): Promise<{ value: T | null; error: unknown }> {
  try {
    return { value: await call(), error: null };
  } catch (error) {
    return { value: null, error };
  }
}

function expectError(error: unknown, expected: 'worker' | 'non-finite' | null, what: string): void {
  if (expected === null) assert.equal(error, null, `${what} threw ${error}`);
  else assert.ok(error instanceof ERRORS[expected], `${what}: expected ${ERRORS[expected].name}, got ${error}`);
}

async function check(m: Model, r: Real, what: string): Promise<void> {
  const { acc } = r;
  const sent = m.inFlight.length;
  const expected = new Reference(m.ref.options, m.ref.state.params);
  expected.state = { ...structuredClone(m.ref.state), counters: { ...m.ref.state.counters, microStep: m.ref.state.counters.microStep + sent } };
  expected.state.window.microBatches += sent;
  const counters = { microStep: acc.microStep, updateStep: acc.updateStep, epoch: acc.epoch, skippedMicroBatches: acc.skippedMicroBatches, skippedWindows: acc.skippedWindows, skippedLargeUpdates: acc.skippedLargeUpdates };
  // getState would reduce the round: the averages are read by swapping them in instead.
  checkAgainst(expected, { weights: modelWeights(r.model), counters, pendingMicroBatches: acc.pendingMicroBatches, state: null, names: variableNames(r.model) }, r.loose, what);
  if (r.options.emaDecay !== null) {
    const trained = modelWeights(r.model);
    const inside = await acc.withAveragedWeights(() => modelWeights(r.model));
    m.ref.state.ema.forEach((e, v) => assert.ok(relativeDifference([inside[v]], [e ?? Array.from(trained[v])]) <= 1e-4, `${what}: the average of variable ${v}`));
  }
}

function batchOf(samples: Sample[]) {
  return { xs: { values: Float32Array.from(samples.flatMap((s) => s.x)), shape: [samples.length, INPUTS] }, ys: { values: Float32Array.from(samples.map((s) => s.y)), shape: [samples.length, 1] } };
}

/** One micro-batch sent to a worker; the one that completes the window waits for the reduce and the update. */
class Step implements Command {
  constructor(readonly size: number, readonly seed: number, readonly kind: 'plain' | 'spike' | 'NaN' | 'worker fails') {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const spike = this.kind === 'spike' && r.options.maxNorm !== null;
    const samples = makeSamples(this.size, this.seed, spike ? 1e4 : 1);
    const sent = this.kind === 'NaN' ? samples.map((s) => ({ ...s, y: Number.NaN })) : this.kind === 'worker fails' ? samples.map((s) => ({ ...s, y: FAIL_LABEL })) : samples;
    const size = m.ref.open();
    const last = m.ref.state.window.microBatches + m.inFlight.length + 1 >= size;
    m.inFlight.push({ samples, finite: this.kind !== 'NaN', fails: this.kind === 'worker fails' });
    const { value, error } = await outcome(() => r.acc.step(batchOf(sent)));
    const expected = last ? reduce(m, true, value?.skipped !== 'large-update') : null;
    expectError(error, expected, `${this}`);
    await check(m, r, `${this}`);
  }
  toString = () => `step(${this.size}${this.kind === 'plain' ? '' : `, ${this.kind}`})`;
}

class EndEpoch implements Command {
  constructor(readonly flush: boolean | 'flush()') {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const reduces = this.flush !== false && m.inFlight.length > 0;
    const { value, error } = await outcome(() => (this.flush === 'flush()' ? r.acc.flush() : r.acc.endEpoch({ flush: this.flush })));
    const applied = value?.skipped !== 'large-update';
    const expected = reduces ? reduce(m, false, applied) : null;
    expectError(error, expected, `${this}`);
    if (expected === null) {
      if (this.flush === 'flush()') m.ref.flush(applied);
      else m.ref.endEpoch(this.flush, applied);
    }
    await check(m, r, `${this}`);
  }
  toString = () => (this.flush === 'flush()' ? 'flush()' : `endEpoch({ flush: ${this.flush} })`);
}

/** getState (which reduces the round first) through JSON, and setState back. */
class Checkpoint implements Command {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const expected = m.inFlight.length > 0 ? reduce(m, false) : null;
    const { value, error } = await outcome(() => r.acc.getState());
    expectError(error, expected, 'getState');
    if (value !== null) {
      await r.acc.setState(JSON.parse(JSON.stringify(value)));
      assert.deepEqual(await r.acc.getState(), value, 'setState restores what getState saw');
    }
    await check(m, r, 'checkpoint');
  }
  toString = () => 'checkpoint()';
}

/** A micro-batch of the wrong shape: refused by name before anything is sent. */
class Refused implements Command {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const weights = modelWeights(r.model);
    const bad = { xs: { values: new Float32Array(2 * (INPUTS + 1)), shape: [2, INPUTS + 1] }, ys: { values: new Float32Array(2), shape: [2, 1] } };
    await assert.rejects(r.acc.step(bad), /batch.xs must be a batch of the model's input shape/);
    assertBitIdentical(modelWeights(r.model), weights);
    await check(m, r, 'refused micro-batch');
  }
  toString = () => 'refusedStep(wrong shape)';
}

const seed = fc.integer({ min: 1, max: 1 << 20 });
const step = fc.tuple(fc.integer({ min: 1, max: 5 }), seed, fc.constantFrom<Step['kind']>('plain', 'plain', 'plain', 'plain', 'plain', 'plain', 'spike', 'NaN', 'worker fails')).map(([n, s, k]) => new Step(n, s, k));
/** Micro-batches are most of a run (listed five times). */
const commands = [
  ...Array.from({ length: 5 }, () => step),
  fc.constantFrom<EndEpoch['flush']>(true, false, false, 'flush()').map((f) => new EndEpoch(f)),
  fc.constant(new Checkpoint()),
  fc.constant(new Refused()),
];

const trainers: Trainer[] = [];

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
  for (const [i, { workers, options }] of INSTANCES.entries()) {
    const model = linearNet(100 + i);
    const acc = await ParallelAccumulator.create({ model, workers, backend: 'wasm', optimizer: tf.train.sgd(options.learningRate), loss: { module: FIXTURES, export: 'meanSquaredErrorOrThrow' }, ...trainerOptions(options) });
    trainers.push({ acc, model, options, initial: model.getWeights().map((w) => w.clone()), fresh: await acc.getState(), workerTensors: await acc.workerTensorCounts() });
  }
});

after(async () => {
  for (const t of trainers) {
    await t.acc.dispose();
    t.model.dispose();
    tf.dispose(t.initial);
  }
});

describe('ParallelAccumulator with 1-3 workers, model-based against the float64 big-batch reference (issue 32)', () => {
  it('every command sequence trains as the reference; a failed round drops only its micro-batches', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: INSTANCES.length - 1 }), fc.commands(commands, { maxCommands: maxCommands(20) }), async (i, cmds) => {
        const t = trainers[i];
        // A fresh start: the first weights, the first state (setState also sends every weight to the workers).
        t.model.setWeights(t.initial);
        await t.acc.setState(t.fresh);
        const real: Real = { ...t, loose: looseTensors() };
        const ref = new Reference(t.options, modelWeights(t.model).map((w) => Array.from(w)));
        await fc.asyncModelRun(() => ({ model: { ref, inFlight: [] }, real }), cmds);
        await t.acc.setState(t.fresh);
        assert.deepEqual(await t.acc.workerTensorCounts(), t.workerTensors, 'tensors left behind in the workers');
      }),
      modelRunParameters(30),
    );
  });
});
