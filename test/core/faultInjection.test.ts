import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { stepDecay } from '../../src/core/learningRate';
import { NonFinitePolicy } from '../../src/core/nonFinite';
import { AccumulatorState, Averaging } from '../../src/core/state';
import { OPTIMIZERS, OptimizerName, assertBitIdentical, denseNet, fcParameters, samples, weightsOf } from '../helpers';

/**
 * Fault injection, as a property: a random sequence of public calls, some of them faulty (the
 * loss throws, the optimizer throws mid-update, a non-finite loss, corrupt or foreign state, bad
 * options). Every call either completes, or leaves weights, accumulators, optimizer slots,
 * counters and `tf.memory().numTensors` exactly as they were.
 */

type Op =
  | { kind: 'step' | 'countedStep' | 'lossThrows' | 'nonFinite' | 'optimizerThrows' | 'badOptions' | 'badCount'; size: number }
  | { kind: 'averagedThrows' | 'averagedGetState' | 'averagedSetState' | 'averagedStep' | 'averagedDispose' | 'racedGetState' | 'finalize' }
  | { kind: 'flush' | 'endEpoch' | 'resume' | 'foreignState' }
  | { kind: 'corruptState'; corruption: number; value: unknown };

const CORRUPTIONS: ((s: AccumulatorState, value: unknown) => void)[] = [
  (s, v) => { if (s.accumulators[0]) (s.accumulators[0].values as unknown[])[0] = v; },
  (s, v) => { if (s.optimizer && s.optimizer.length > 1) (s.optimizer[1].values as unknown[])[0] = v; else (s.counters as unknown as Record<string, unknown>).microStep = v; },
  (s) => { if (s.optimizer && s.optimizer.length > 1) s.optimizer[1].shape = [...s.optimizer[1].shape, 1]; else s.counters.epoch = -1; },
  (s) => { s.window.microBatches = 0; s.window.weight = 1000; },
  (s) => { s.window.microBatches = 99; },
  (s, v) => { (s.window as unknown as Record<string, unknown>).weight = v; },
  (s) => { if (s.accumulators[0]) s.accumulators[0].shape = [7, 7]; else (s as { format: string }).format = 'other'; },
  (s) => { s.window.touched.push('no such variable'); },
  (s, v) => { (s as unknown as Record<string, unknown>).counters = v; },
];

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('step' as const), size: fc.integer({ min: 1, max: 5 }) }) },
  fc.record({ kind: fc.constantFrom('countedStep' as const, 'lossThrows' as const, 'nonFinite' as const, 'optimizerThrows' as const, 'badOptions' as const, 'badCount' as const), size: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ kind: fc.constantFrom('averagedThrows' as const, 'averagedGetState' as const, 'averagedSetState' as const, 'averagedStep' as const, 'averagedDispose' as const, 'racedGetState' as const, 'finalize' as const) }),
  fc.record({ kind: fc.constantFrom('flush' as const, 'endEpoch' as const, 'resume' as const, 'foreignState' as const) }),
  fc.record({
    kind: fc.constant('corruptState' as const),
    corruption: fc.integer({ min: 0, max: CORRUPTIONS.length - 1 }),
    value: fc.constantFrom<unknown>(null, 'NaN', '0.5', Number.NaN, Infinity, -1, 1e40, {}, [], true),
  }),
);

const scenarioArbitrary = fc.record({
  seed: fc.integer({ min: 1, max: 1000 }),
  optimizer: fc.constantFrom<OptimizerName>('sgd', 'momentum', 'adam', 'rmsprop'),
  averaging: fc.constantFrom<Averaging>('per-sample', 'per-micro-batch'),
  nonFinite: fc.constantFrom<NonFinitePolicy>('error', 'skip-micro-batch', 'skip-window'),
  clipNorm: fc.option(fc.double({ min: 0.01, max: 10, noNaN: true }), { nil: undefined }),
  accumulationSteps: fc.integer({ min: 1, max: 3 }),
  // Issue 12's options, all on or all off.
  options: fc.boolean(),
  ops: fc.array(opArbitrary, { minLength: 1, maxLength: 14 }),
});

/** An optimizer whose next update, when armed, runs and then throws (the worst case). */
function armable(name: OptimizerName): { optimizer: tf.Optimizer; arm(): void; disarm(): void } {
  const optimizer = OPTIMIZERS[name]();
  const apply = optimizer.applyGradients.bind(optimizer);
  let armed = false;
  optimizer.applyGradients = (grads: Parameters<tf.Optimizer['applyGradients']>[0]) => {
    apply(grads as never);
    if (armed) throw new Error('injected optimizer failure');
  };
  return { optimizer, arm: () => (armed = true), disarm: () => (armed = false) };
}

describe('property: every public call completes or leaves no trace', () => {
  it('under injected faults (loss, optimizer, non-finite values, corrupt and foreign state, bad options)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const start = tf.memory().numTensors;
        const model = denseNet(3, 2, scenario.seed);
        const failing = armable(scenario.optimizer);
        const make = (optimizer: tf.Optimizer, withOptions = scenario.options) =>
          new GradientAccumulator({
            optimizer,
            accumulationSteps: scenario.accumulationSteps,
            averaging: scenario.averaging,
            nonFinite: scenario.nonFinite,
            clipNorm: scenario.clipNorm,
            varList: model.trainableWeights,
            ...(withOptions
              ? { learningRate: stepDecay({ initial: 0.05, every: 2 }), skipLargeUpdates: { maxNorm: 3, factor: 4, history: 2 }, weightDecay: { rate: 0.1 }, ema: { decay: 0.9 } }
              : {}),
          });
        let acc = make(failing.optimizer);
        // Foreign: the same model and averaging, another kind of optimizer (other slots).
        const foreign = make(scenario.optimizer === 'adam' ? tf.train.momentum(0.1, 0.5) : tf.train.adam(0.1), false);
        const data = samples(5, 3, scenario.seed);
        const loss = (size: number, poison = 1) => () => {
          const xs = data.xs.slice(0, size);
          const ys = data.ys.slice(0, size);
          const perSample = tf.squeeze(tf.squaredDifference(model.apply(xs) as tf.Tensor, ys), [1]);
          return tf.mul(scenario.averaging === 'per-sample' ? perSample : tf.mean(perSample), poison);
        };
        foreign.step(() => tf.mean(loss(2)()));
        foreign.flush(); // an applied update, so the foreign optimizer has slots
        const foreignState = await foreign.getState();
        for (const [index, op] of scenario.ops.entries()) {
          const before = { state: await acc.getState(), weights: weightsOf(model), tensors: tf.memory().numTensors };
          let threw = false;
          try {
            switch (op.kind) {
              case 'step': acc.step(loss(op.size)); break;
              case 'countedStep':
                acc.step(() => ({ loss: tf.sum(loss(op.size)()), count: tf.scalar(op.size) }));
                break;
              case 'badCount': acc.step(() => ({ loss: tf.sum(loss(op.size)()), count: tf.scalar(-op.size) })); break;
              case 'averagedThrows':
                await acc.withAveragedWeights(() => {
                  throw new Error('injected evaluation failure');
                });
                break;
              // The EMA swap's interplay (issue 23): inside withAveragedWeights getState sees the
              // state of outside, setState and step are refused, and dispose returns the trained weights.
              case 'averagedGetState':
                assert.deepEqual(await acc.withAveragedWeights(() => acc.getState()), before.state, 'getState inside the swap');
                break;
              case 'averagedSetState':
                await acc.withAveragedWeights(() => acc.setState(JSON.parse(JSON.stringify(before.state))));
                break;
              case 'averagedStep':
                await acc.withAveragedWeights(() => acc.step(loss(2)));
                break;
              case 'averagedDispose': {
                const resumed = await acc.withAveragedWeights(async () => {
                  const state = await acc.getState();
                  acc.dispose({ keepOptimizer: true });
                  return state;
                });
                assertBitIdentical(weightsOf(model), before.weights);
                acc = make(failing.optimizer);
                await acc.setState(resumed);
                break;
              }
              case 'racedGetState': {
                const pending = acc.getState();
                acc.step(loss(3));
                assert.deepEqual(await pending, before.state, 'a step between getState and its await reached the state');
                break;
              }
              case 'finalize': acc.finalizeAveragedWeights(); break;
              case 'lossThrows':
                acc.step(() => {
                  loss(op.size)();
                  throw new Error('injected loss failure');
                });
                break;
              case 'nonFinite': acc.step(loss(op.size, index % 2 === 0 ? Number.NaN : Infinity)); break;
              case 'optimizerThrows':
                failing.arm();
                try {
                  acc.step(loss(op.size));
                } finally {
                  failing.disarm();
                }
                break;
              case 'badOptions': acc.step(loss(op.size), { sampleSize: op.size } as never); break;
              case 'flush': acc.flush(); break;
              case 'endEpoch': acc.endEpoch(); break;
              case 'resume': await acc.setState(JSON.parse(JSON.stringify(before.state))); break;
              case 'foreignState': await acc.setState(foreignState); break;
              case 'corruptState': {
                const copy = JSON.parse(JSON.stringify(before.state)) as AccumulatorState;
                CORRUPTIONS[op.corruption](copy, op.value);
                await acc.setState(copy);
                break;
              }
            }
          } catch (error) {
            // A failed check inside an op is the test failing, not a fault the op handled.
            if (error instanceof assert.AssertionError) throw error;
            threw = true;
          }
          if (['lossThrows', 'badOptions', 'foreignState', 'badCount', 'averagedThrows', 'averagedSetState', 'averagedStep'].includes(op.kind)) assert.ok(threw, `${op.kind} completed`);
          if (threw) {
            assert.deepEqual(await acc.getState(), before.state, `op ${index} (${op.kind}) changed the state`);
            assertBitIdentical(weightsOf(model), before.weights);
            assert.equal(tf.memory().numTensors, before.tensors, `op ${index} (${op.kind}) leaked tensors`);
          }
        }
        acc.dispose();
        foreign.dispose();
        tf.dispose([data.xs, data.ys]);
        model.dispose();
        assert.equal(tf.memory().numTensors, start, 'the scenario leaked tensors');
      }),
      fcParameters(100),
    );
  });
});
