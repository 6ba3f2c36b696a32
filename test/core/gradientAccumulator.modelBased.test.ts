import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator, NonFiniteGradientError } from '../../src/core/gradientAccumulator';
import type { AccumulatorState } from '../../src/core/state';
import { assertBitIdentical } from '../helpers';
import { checkAgainst, maxCommands, modelRunParameters, modelWeights, optimizerOf, optionsArbitrary, referenceParams, trainerOptions, variableNames } from '../helpers/modelBased';
import { linearNet, looseTensors, makeSamples, Reference, ReferenceOptions, relativeDifference, tensorsOf } from '../helpers/reference';

/**
 * GradientAccumulator, model-based: random sequences of micro-steps (uneven, spiked, with token
 * counts and fully masked ones), non-finite and throwing micro-steps, flush, endEpoch with and
 * without flushing (the epochSchedule moves on), freezing and unfreezing layers, a checkpoint
 * through JSON into a new accumulator, a corrupt setState, a bad option, and EMA swaps. After every
 * command the weights, averages, counters and loose tensors are checked against the float64
 * reference (test/helpers/reference.ts); a call that throws must have changed nothing.
 */

interface Model {
  ref: Reference;
  /** Which of the two layers are trainable. */
  layers: [boolean, boolean];
}

interface Real {
  model: tf.Sequential;
  acc: GradientAccumulator;
  options: ReferenceOptions;
  loose: number;
}

type Command = fc.AsyncCommand<Model, Real>;

const trainable = (m: Model) => [m.layers[0], m.layers[0], m.layers[1], m.layers[1]];

/** Whether the open window holds sums for none of the variables a micro-step would train (another model's: refused). */
function disjoint(m: Model): boolean {
  const w = m.ref.state.window;
  const touched = w.sums.map((s) => s !== null);
  return w.microBatches > 0 && touched.some(Boolean) && !trainable(m).some((t, v) => t && touched[v]);
}

async function check(m: Model, r: Real, what: string): Promise<void> {
  const { acc } = r;
  const counters = { microStep: acc.microStep, updateStep: acc.updateStep, epoch: acc.epoch, skippedMicroBatches: acc.skippedMicroBatches, skippedWindows: acc.skippedWindows, skippedLargeUpdates: acc.skippedLargeUpdates };
  checkAgainst(m.ref, { weights: modelWeights(r.model), counters, pendingMicroBatches: acc.pendingMicroBatches, state: await acc.getState(), names: variableNames(r.model) }, r.loose, what);
}

/** Runs a call that must throw, and checks that it changed nothing: state, weights, loose tensors. */
async function refused(r: Real, call: () => unknown, expected: RegExp | (new (...args: never[]) => Error), what: string): Promise<void> {
  const state = await r.acc.getState();
  const weights = modelWeights(r.model);
  const loose = looseTensors();
  await assert.rejects(async () => call(), expected as RegExp, `${what} did not throw`);
  assert.equal(looseTensors(), loose, `${what}: tensors left behind`);
  assert.deepEqual(await r.acc.getState(), state, `${what} changed the state`);
  assertBitIdentical(modelWeights(r.model), weights);
}

/** A micro-step: `size` samples, their loss per sample or as `{ loss, count }` with some masked, possibly spiked or NaN. */
class Step implements Command {
  constructor(readonly size: number, readonly seed: number, readonly form: 'vector' | 'counted', readonly masked: boolean[], readonly spike: boolean, readonly nan: boolean) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    // A spike is only drawn where a threshold skips it (else it would just blow the weights up).
    const spike = this.spike && r.options.maxNorm !== null;
    const samples = makeSamples(this.size, this.seed, spike ? 1e4 : 1, this.form === 'counted' ? this.masked : []);
    const { xs, ys, mask } = tensorsOf(samples);
    const lossFn = () => {
      const perSample = tf.mean(tf.squaredDifference(r.model.apply(xs) as tf.Tensor, ys), 1);
      const loss = this.nan ? tf.mul(perSample, Number.NaN) : perSample;
      return this.form === 'vector' ? loss : { loss: tf.sum(tf.mul(loss, mask)), count: tf.sum(mask) };
    };
    try {
      if (disjoint(m)) await refused(r, () => r.acc.step(lossFn), /trains none of the variables/, `${this}`);
      else if (this.nan && r.options.nonFinite === 'error') await refused(r, () => r.acc.step(lossFn), NonFiniteGradientError, `${this}`);
      else m.ref.microBatch(samples, trainable(m), !this.nan, r.acc.step(lossFn).skipped !== 'large-update');
    } finally {
      tf.dispose([xs, ys, mask]);
    }
    await check(m, r, `${this}`);
  }
  toString = () => `step(${this.size}${this.form === 'counted' ? `, counted ${this.masked.slice(0, this.size).filter((x) => !x).length}` : ''}${this.spike ? ', spike' : ''}${this.nan ? ', NaN' : ''})`;
}

class Flush implements Command {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    m.ref.flush(r.acc.flush().skipped !== 'large-update');
    await check(m, r, 'flush');
  }
  toString = () => 'flush()';
}

class EndEpoch implements Command {
  constructor(readonly flush: boolean) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const result = r.acc.endEpoch({ flush: this.flush });
    m.ref.endEpoch(this.flush, result?.skipped !== 'large-update');
    await check(m, r, `${this}`);
  }
  toString = () => `endEpoch({ flush: ${this.flush} })`;
}

/** Freezes or unfreezes a layer (the next micro-steps train what is trainable); one layer always stays trainable. */
class SetTrainable implements Command {
  constructor(readonly layer: 0 | 1, readonly value: boolean) {}
  check = (m: Readonly<Model>) => m.layers[this.layer] !== this.value && (this.value || m.layers[1 - this.layer]);
  async run(m: Model, r: Real): Promise<void> {
    r.model.layers[this.layer].trainable = this.value;
    m.layers[this.layer] = this.value;
    await check(m, r, `${this}`);
  }
  toString = () => `${this.value ? 'unfreeze' : 'freeze'}(layer ${this.layer})`;
}

/** getState through JSON into a new accumulator with a new optimizer; the old one is disposed. */
class Checkpoint implements Command {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const state = JSON.parse(JSON.stringify(await r.acc.getState())) as AccumulatorState;
    const resumed = new GradientAccumulator({ optimizer: optimizerOf(r.options), ...trainerOptions(r.options) });
    await resumed.setState(state);
    r.acc.dispose();
    r.acc = resumed;
    await check(m, r, 'checkpoint');
  }
  toString = () => 'checkpoint()';
}

/** Calls that must be refused and change nothing: a throwing loss, a corrupt state, a flag that is not a boolean. */
class Failing implements Command {
  constructor(readonly kind: 'throwing loss' | 'corrupt state' | 'bad flag') {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    if (this.kind === 'throwing loss') {
      await refused(r, () => r.acc.step(() => tf.tidy(() => { tf.ones([3]); throw new Error('a loss that throws'); })), /a loss that throws/, `${this}`);
    } else if (this.kind === 'corrupt state') {
      const state = await r.acc.getState();
      await refused(r, () => r.acc.setState({ ...state, counters: { ...state.counters, microStep: -1 } }), /state.counters.microStep/, `${this}`);
    } else {
      await refused(r, () => r.acc.endEpoch({ flush: 1 } as never), /flush must be true, false or left out/, `${this}`);
    }
    await check(m, r, `${this}`);
  }
  toString = () => `failing(${this.kind})`;
}

/** Runs inside withAveragedWeights: the weights are the averages there (a variable without one is its own), a step is refused; after it the trained weights are back, bit for bit. */
class AveragedSwap implements Command {
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    const trained = modelWeights(r.model);
    if (r.options.emaDecay === null) return refused(r, () => r.acc.withAveragedWeights(() => 0), /ema must be set/, 'withAveragedWeights without ema');
    await r.acc.withAveragedWeights(async () => {
      const inside = modelWeights(r.model);
      m.ref.state.ema.forEach((e, v) => {
        if (e === null) assert.deepEqual(inside[v], trained[v], `variable ${v} has no average: it is its own`);
        else assert.ok(relativeDifference([inside[v]], [e]) <= 1e-4, `variable ${v} holds its average`);
      });
      assert.throws(() => r.acc.step(() => tf.sum(r.model.apply(tf.zeros([1, 3])) as tf.Tensor)), /inside withAveragedWeights/);
    });
    assertBitIdentical(modelWeights(r.model), trained);
    await check(m, r, 'withAveragedWeights');
  }
  toString = () => 'withAveragedWeights()';
}

const seed = fc.integer({ min: 1, max: 1 << 20 });
const step = fc.tuple(fc.integer({ min: 1, max: 5 }), seed, fc.constantFrom<'vector' | 'counted'>('vector', 'vector', 'counted'), fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }), fc.boolean(), fc.constantFrom(false, false, false, false, false, true)).map(([n, s, form, masked, spike, nan]) => new Step(n, s, form, masked, spike, nan));
/** Micro-steps are most of a run (listed five times), then epochs (twice), then the rest. */
const commands = [
  ...Array.from({ length: 5 }, () => step),
  fc.constant(new Flush()),
  ...Array.from({ length: 2 }, () => fc.boolean().map((f) => new EndEpoch(f))),
  fc.tuple(fc.constantFrom<0 | 1>(0, 1), fc.boolean()).map(([l, v]) => new SetTrainable(l, v)),
  fc.constant(new Checkpoint()),
  fc.constantFrom<Failing['kind']>('throwing loss', 'corrupt state', 'bad flag').map((k) => new Failing(k)),
  fc.constant(new AveragedSwap()),
];

describe('GradientAccumulator, model-based against the float64 big-batch reference (issue 32)', () => {
  it('every command sequence trains as the reference, and a refused call changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(optionsArbitrary, seed, fc.commands(commands, { maxCommands: maxCommands(30) }), async (options, modelSeed, cmds) => {
        const model = linearNet(modelSeed);
        const real: Real = { model, acc: new GradientAccumulator({ optimizer: optimizerOf(options), ...trainerOptions(options) }), options, loose: looseTensors() };
        try {
          await fc.asyncModelRun(() => ({ model: { ref: new Reference(options, referenceParams(model)), layers: [true, true] as [boolean, boolean] }, real }), cmds);
        } finally {
          real.acc.dispose();
          model.dispose();
        }
      }),
      modelRunParameters(100),
    );
  });
});
