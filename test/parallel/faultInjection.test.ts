import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import type { AccumulatorState } from '../../src/core/state';
import { ParallelAccumulator, WorkerFailedError } from '../../src/parallel';
import { maxRelativeDifference } from '../helpers';
import { CLASSES, FIXTURES, INPUT, TOLERANCE, batchOf, makeData, makeModel, trainable } from '../helpers/parallel';

/**
 * The parallel trainer under random calls and faults, against the single-thread accumulator in
 * lockstep: random W, uneven micro-batches, random window sizes, flush, endEpoch and state
 * round trips, with faults in a worker's loss, in the optimizer and in state. The invariant is
 * the core's: a call completes as on one thread, or changes nothing (weights, window, counters);
 * a worker's failure drops exactly the micro-batches sent since the last reduction.
 */

type Op =
  | { kind: 'step' | 'lossThrows' | 'optimizerThrows'; size: number }
  | { kind: 'flush' | 'endEpoch' | 'carryEpoch' | 'roundTrip' | 'badBatch' }
  | { kind: 'corruptState'; corruption: number };

const CORRUPTIONS: ((s: AccumulatorState) => void)[] = [
  (s) => ((s.accumulators[0].values as unknown[])[0] = 'x'),
  (s) => (s.window.microBatches = s.counters.microStep + 1),
  (s) => ((s.window as unknown as Record<string, unknown>).weight = Infinity),
  (s) => s.window.touched.push('no such variable'),
  (s) => (s.accumulators[1].shape = [7, 7]),
];

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('step' as const), size: fc.integer({ min: 1, max: 5 }) }) },
  fc.record({ kind: fc.constantFrom('lossThrows' as const, 'optimizerThrows' as const), size: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ kind: fc.constantFrom('flush' as const, 'endEpoch' as const, 'carryEpoch' as const, 'roundTrip' as const, 'badBatch' as const) }),
  fc.record({ kind: fc.constant('corruptState' as const), corruption: fc.integer({ min: 0, max: CORRUPTIONS.length - 1 }) }),
);

const scenarioArbitrary = fc.record({
  workers: fc.integer({ min: 1, max: 3 }),
  accumulationSteps: fc.integer({ min: 1, max: 4 }),
  ops: fc.array(opArbitrary, { minLength: 4, maxLength: 12 }),
});

/** Arms an optimizer so that its next `applyGradients` throws, once. */
function armable(optimizer: tf.Optimizer): { arm: () => void; disarm: () => void } {
  const apply = optimizer.applyGradients.bind(optimizer);
  let armed = false;
  optimizer.applyGradients = (grads) => {
    if (armed) {
      armed = false;
      throw new Error('the optimizer throws, on purpose');
    }
    return apply(grads);
  };
  return { arm: () => (armed = true), disarm: () => (armed = false) };
}

const counters = (a: ParallelAccumulator | GradientAccumulator) => [a.microStep, a.pendingMicroBatches, a.updateStep, a.epoch, a.skippedWindows];

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

describe('ParallelAccumulator: fault injection against the single-thread accumulator', () => {
  it('every call completes as on one thread or changes nothing; a worker failure drops only its round', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async ({ workers, accumulationSteps, ops }) => {
        const model = makeModel('mlp', 'none');
        const reference = makeModel('mlp', 'none');
        const parallelOptimizer = tf.train.sgd(0.1);
        const referenceOptimizer = tf.train.sgd(0.1);
        const faults = [armable(parallelOptimizer), armable(referenceOptimizer)];
        const acc = await ParallelAccumulator.create({ model, optimizer: parallelOptimizer, accumulationSteps, loss: { module: FIXTURES, export: 'crossEntropyOrThrow' }, workers, backend: 'wasm' });
        const ref = new GradientAccumulator({ optimizer: referenceOptimizer, accumulationSteps, varList: reference.trainableWeights });
        // The reference as of the parallel trainer's last reduction: a worker failure returns to it.
        let checkpoint = { state: await ref.getState(), weights: trainable(reference) };
        const restore = async () => {
          await ref.setState(checkpoint.state);
          reference.trainableWeights.forEach((w, i) => w.write(tf.tensor(checkpoint.weights[i], w.shape as number[])));
        };
        const save = async () => {
          checkpoint = { state: await ref.getState(), weights: trainable(reference) };
        };
        const refStep = (d: ReturnType<typeof makeData>[number]) =>
          tf.tidy(() => {
            const [xs, ys] = [tf.tensor(d.xs, [d.n, ...INPUT]), tf.tensor(d.ys, [d.n, CLASSES])];
            ref.step(() => tf.losses.softmaxCrossEntropy(ys, reference.apply(xs, { training: true }) as tf.Tensor), { sampleCount: d.n });
          });
        /** Runs one call on both; a WorkerFailedError returns the reference to the last reduction. */
        const both = async (parallel: () => Promise<unknown>, single: () => unknown, reduces: (result: unknown) => boolean) => {
          const before = { weights: trainable(model), counters: counters(acc) };
          let singleError: unknown = null;
          try {
            single();
          } catch (e) {
            singleError = e;
          }
          try {
            const result = await parallel();
            assert.equal(singleError, null, `the single thread threw ${String(singleError)} where the parallel trainer did not`);
            if (reduces(result)) await save();
          } catch (e) {
            if (e instanceof WorkerFailedError) {
              await restore();
              assert.deepEqual(counters(acc), counters(ref), 'a failed round leaves the state of the last reduction');
              return;
            }
            assert.ok(singleError !== null, `the parallel trainer threw ${String(e)} where the single thread did not`);
            assert.deepEqual([trainable(model), counters(acc)], [before.weights, before.counters], `a failing call changed something: ${String(e)}`);
          }
          assert.deepEqual(counters(acc), counters(ref));
        };
        try {
          for (const [k, op] of ops.entries()) {
            const [d] = makeData([op.kind === 'step' || op.kind === 'lossThrows' || op.kind === 'optimizerThrows' ? op.size : 1], 10 * k);
            const stepped = (r: unknown) => (r as { round: unknown }).round !== null;
            if (op.kind === 'step') await both(() => acc.step(batchOf(d)), () => refStep(d), stepped);
            else if (op.kind === 'lossThrows') {
              const bad = batchOf(d);
              bad.ys.values[0] = -1;
              // The reference steps the micro-batch too; the round it poisons is dropped when it reduces.
              await both(() => acc.step(bad), () => refStep(d), stepped);
            } else if (op.kind === 'optimizerThrows') {
              faults.forEach((f) => f.arm());
              await both(() => acc.step(batchOf(d)), () => refStep(d), stepped);
              faults.forEach((f) => f.disarm());
            } else if (op.kind === 'flush') await both(() => acc.flush(), () => ref.flush(), () => true);
            else if (op.kind === 'endEpoch') await both(() => acc.endEpoch(), () => ref.endEpoch(), () => true);
            else if (op.kind === 'carryEpoch') await both(() => acc.endEpoch({ flush: false }), () => ref.endEpoch({ flush: false }), () => false);
            else if (op.kind === 'roundTrip') {
              await both(async () => acc.setState(JSON.parse(JSON.stringify(await acc.getState()))), () => undefined, () => true);
            } else if (op.kind === 'badBatch') {
              const wrong = { xs: { values: d.xs, shape: [d.n, 64] }, ys: { values: d.ys, shape: [d.n, CLASSES] } };
              await both(() => acc.step(wrong), () => { throw new Error('refused'); }, () => false);
            } else {
              const state = JSON.parse(JSON.stringify(await ref.getState())) as AccumulatorState;
              CORRUPTIONS[(op as { corruption: number }).corruption](state);
              await both(() => acc.setState(state), () => { throw new Error('refused'); }, () => false);
            }
          }
          // The end: whatever is in flight is reduced (or its round dropped), then both flush.
          await both(() => acc.flush(), () => ref.flush(), () => true);
          if (acc.pendingMicroBatches > 0) await both(() => acc.flush(), () => ref.flush(), () => true);
          assert.deepEqual(counters(acc), counters(ref));
          assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE, 'the weights of the single-thread run');
        } finally {
          ref.dispose();
          await acc.dispose();
          tf.dispose([model, reference].flatMap((m) => m.weights.map((w) => w.read())));
        }
      }),
      { numRuns: 6, seed: 23 },
    );
  });
});

after(() => {
  tf.disposeVariables();
});
