import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { epochSchedule } from '../../src/core/schedule';
import { AccumulatorDisposedError, PARALLEL_STATE_FORMAT, ParallelAccumulator, WorkerFailedError } from '../../src/parallel';
import { maxRelativeDifference } from '../helpers';
import { CLASSES, FIXTURES, INPUT, TOLERANCE, args, batchOf, makeData, makeModel, singleThread, singleThreadRun, trainable } from '../helpers/parallel';

/**
 * The parallel trainer's edges of issue 23, items 1–7, and the one state format: each case
 * failed on the trainer that kept its own window, counters, state and option checks.
 */

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

/** Rejects when `promise` has not settled after `ms`: a call that hangs fails instead of stalling the suite. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('ParallelAccumulator: a failing update (item 1)', () => {
  it('keeps the window but the last micro-batch, as a failed step does; stepping it again applies the same update', async () => {
    const data = makeData([4, 3, 5]);
    const model = makeModel('mlp', 'none');
    const initial = trainable(model);
    const optimizer = tf.train.sgd(0.1);
    const apply = optimizer.applyGradients.bind(optimizer);
    let failures = 1;
    optimizer.applyGradients = (grads) => {
      if (failures-- > 0) throw new Error('the optimizer fails once, on purpose');
      return apply(grads);
    };
    const acc = await ParallelAccumulator.create(args(model, { optimizer }));
    await acc.step(batchOf(data[0]));
    await acc.step(batchOf(data[1]));
    await assert.rejects(acc.step(batchOf(data[2])), /fails once, on purpose/);
    assert.deepEqual([acc.microStep, acc.pendingMicroBatches, acc.updateStep], [2, 2, 0], 'the window keeps its first two micro-batches');
    assert.deepEqual(trainable(model), initial, 'no partial update');
    const retried = await acc.step(batchOf(data[2]));
    assert.deepEqual([retried.applied, acc.microStep, acc.updateStep, acc.pendingMicroBatches], [true, 3, 1, 0]);
    await acc.dispose();
    const reference = makeModel('mlp', 'none');
    singleThread(reference, tf.train.sgd(0.1), data);
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
  });
});

describe('ParallelAccumulator: { loss, count } counts (items 2 and 3)', () => {
  it('fractional counts (weighted tokens) are accepted and give the single-thread update', async () => {
    const data = makeData([3, 5, 1]);
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { loss: { module: FIXTURES, export: 'halfWeightedCrossEntropy' } }));
    const results = [];
    for (const d of data) results.push(await acc.step(batchOf(d)));
    assert.equal(results[2].applied, true, 'a window of counts 1.5 + 2.5 + 0.5');
    await acc.dispose();
    const reference = makeModel('mlp', 'none');
    const half = (ys: tf.Tensor, p: tf.Tensor) => ({
      loss: tf.mul(tf.sum(tf.losses.softmaxCrossEntropy(ys, p, undefined, undefined, tf.Reduction.NONE)), 0.5),
      count: tf.scalar(ys.shape[0] * 0.5),
    });
    singleThreadRun(reference, tf.train.sgd(0.1), data, { loss: half }).dispose();
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
  });

  it('a negative count is refused by name, and nothing is applied or counted', async () => {
    const data = makeData([4, 4, 4]);
    const model = makeModel('mlp', 'none');
    const initial = trainable(model);
    const acc = await ParallelAccumulator.create(args(model, { loss: { module: FIXTURES, export: 'negativeCount' } }));
    await acc.step(batchOf(data[0]));
    await acc.step(batchOf(data[1]));
    await assert.rejects(acc.step(batchOf(data[2])), (e: Error) => e instanceof WorkerFailedError && /loss must be a function whose \{ loss, count \} has a count ≥ 0; got -4/.test(e.message));
    assert.deepEqual([acc.microStep, acc.pendingMicroBatches, acc.skippedWindows], [0, 0, 0]);
    assert.deepEqual(trainable(model), initial);
    await acc.dispose();
  });
});

describe('ParallelAccumulator: options (item 4)', () => {
  it('refuses unknown keys with "did you mean", varList by name, and a missing optimizer by name', async () => {
    const model = makeModel('mlp', 'none');
    await assert.rejects(ParallelAccumulator.create({ ...args(model), clipnorm: 1 } as never), /unknown key "clipnorm" \(did you mean "clipNorm"\?\)/);
    await assert.rejects(ParallelAccumulator.create({ ...args(model), varList: model.trainableWeights } as never), /ParallelAccumulator: varList must be left out/);
    await assert.rejects(ParallelAccumulator.create({ ...args(model), optimizer: undefined } as never), /ParallelAccumulator: optimizer must be a tf\.Optimizer/);
    await assert.rejects(ParallelAccumulator.create(args(model, { learningRate: 0.1 as never })), /learningRate must be a function/);
    await assert.rejects(ParallelAccumulator.create(args(model, { ema: { decay: 2 } })), /ema\.decay must be a number in \(0, 1\)/);
    model.dispose();
  });

  it('learningRate: () => 0 leaves the weights; skipLargeUpdates skips a window by its norm', async () => {
    const data = makeData([4, 4, 4]);
    for (const extra of [{ learningRate: () => 0 }, { skipLargeUpdates: { maxNorm: 1e-9 } }]) {
      const model = makeModel('mlp', 'none');
      const initial = trainable(model);
      const acc = await ParallelAccumulator.create(args(model, extra));
      let last;
      for (const d of data) last = await acc.step(batchOf(d));
      assert.deepEqual(trainable(model), initial, JSON.stringify(Object.keys(extra)));
      if ('skipLargeUpdates' in extra) assert.deepEqual([last?.skipped, acc.skippedLargeUpdates, acc.updateStep], ['large-update', 1, 0]);
      await acc.dispose();
      model.dispose();
    }
  });

  it('clipNorm, a learning-rate schedule, weightDecay, an accumulation schedule and ema give the single-thread run', async () => {
    const data = makeData([4, 3, 5, 4, 2, 4, 4]);
    const options = {
      clipNorm: 0.05,
      learningRate: (step: number) => 0.2 / (1 + step),
      weightDecay: { rate: 0.1 },
      accumulationSteps: ({ updateStep }: { updateStep: number }) => (updateStep === 0 ? 2 : 3),
      ema: { decay: 0.5 },
    };
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { ...options, optimizer: tf.train.adam(0.01), workers: 3 }));
    for (const d of data) await acc.step(batchOf(d));
    await acc.flush();
    const averaged = await acc.withAveragedWeights(() => trainable(model));
    const reference = makeModel('mlp', 'none');
    const single = singleThreadRun(reference, tf.train.adam(0.01), data, options);
    const expectedAverage = await single.withAveragedWeights(() => trainable(reference));
    assert.deepEqual([acc.updateStep, acc.microStep], [single.updateStep, single.microStep]);
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE, 'weights');
    assert.ok(maxRelativeDifference(averaged, expectedAverage) <= TOLERANCE, 'EMA');
    single.dispose();
    await acc.dispose();
  });
});

describe('ParallelAccumulator: endEpoch options (item 5)', () => {
  it('refuses { flsh: false } with the accepted key, flushing nothing', async () => {
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model));
    await acc.step(batchOf(makeData([4])[0]));
    await assert.rejects(acc.endEpoch({ flsh: false } as never), /endEpoch: options has an unknown key "flsh"; the accepted keys are "flush"/);
    assert.deepEqual([acc.pendingMicroBatches, acc.epoch, acc.updateStep], [1, 0, 0]);
    // Issue 32, item 9: a flag that is not a boolean is refused too, before any round is reduced.
    await assert.rejects(acc.endEpoch({ flush: 'no' } as never), /flush must be true, false or left out; got "no"/);
    assert.equal(await acc.endEpoch({ flush: false }), null);
    assert.deepEqual([acc.pendingMicroBatches, acc.epoch], [1, 1], 'the window is carried into the next epoch');
    await acc.dispose();
  });
});

describe('ParallelAccumulator: a window is decided before its micro-batches leave (issue 32, item 2)', () => {
  it('keeps its size across endEpoch({ flush: false }) under a shrinking epochSchedule: { 0: 3, 1: 2 } and { 0: 4, 1: 2 } give the single-thread run', async () => {
    const data = makeData([4, 3, 5, 4, 2, 4, 3]);
    for (const table of [{ 0: 3, 1: 2 }, { 0: 4, 1: 2 }]) {
      // Two micro-batches are in the workers when the epoch ends; the window they belong to keeps table[0].
      const model = makeModel('mlp', 'none');
      const acc = await ParallelAccumulator.create(args(model, { accumulationSteps: epochSchedule(table) }));
      const applied: boolean[] = [];
      for (const [i, d] of data.entries()) {
        if (i === 2) await acc.endEpoch({ flush: false });
        applied.push((await acc.step(batchOf(d))).applied);
      }
      await acc.flush();
      const reference = makeModel('mlp', 'none');
      const single = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: epochSchedule(table), varList: reference.trainableWeights });
      const singleApplied = data.map((d, i) => {
        if (i === 2) single.endEpoch({ flush: false });
        return tf.tidy(() => single.step(() => tf.losses.softmaxCrossEntropy(tf.tensor(d.ys, [d.n, CLASSES]), reference.apply(tf.tensor(d.xs, [d.n, ...INPUT]), { training: true }) as tf.Tensor), { sampleCount: d.n }).applied);
      });
      single.flush();
      assert.deepEqual(applied, singleApplied, JSON.stringify(table));
      assert.equal(applied[table[0] - 1], true, 'the first window closes on its own size');
      assert.deepEqual([acc.updateStep, acc.microStep, acc.epoch], [single.updateStep, single.microStep, 1]);
      assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE, JSON.stringify(table));
      single.dispose();
      await acc.dispose();
      [model, reference].forEach((m) => m.dispose());
    }
  });
});

/** A mid-window state in the format the parallel trainer wrote before it saved the core's. */
function legacyState(state: Awaited<ReturnType<ParallelAccumulator['getState']>>): Record<string, unknown> {
  const { skippedLargeUpdates: _, ...counters } = state.counters;
  return {
    format: PARALLEL_STATE_FORMAT,
    averaging: state.averaging,
    counters,
    window: { size: state.window.size, microBatches: state.window.microBatches, weight: state.window.weight, poisoned: state.window.poisoned, touched: state.accumulators.map((a) => state.window.touched.includes(a.name)) },
    sums: state.accumulators,
    accumulator: { ...state, window: { ...state.window, microBatches: 0 } },
  };
}

describe('ParallelAccumulator: state (item 6, and one format)', () => {
  it('refuses corrupt states of the old parallel format by name and changes nothing; a good one resumes', async () => {
    const data = makeData([4, 3, 5, 4, 2]);
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model));
    for (const d of data.slice(0, 2)) await acc.step(batchOf(d));
    const legacy = legacyState(JSON.parse(JSON.stringify(await acc.getState())));
    const corrupt = (edit: (s: any) => void) => { // eslint-disable-line @typescript-eslint/no-explicit-any
      const s = JSON.parse(JSON.stringify(legacy));
      edit(s);
      return s;
    };
    const cases: [ReturnType<typeof corrupt>, RegExp][] = [
      [corrupt((s) => (s.sums[0].values[0] = 'x')), /state\.accumulators\[0\].*values\[0\] must be a finite number; got "x"/],
      [corrupt((s) => (s.sums[0].values[1] = null)), /values\[1\] must be a finite number; got null/],
      [corrupt((s) => (s.sums[1].values[0] = Number.NaN)), /state\.accumulators\[1\].*values\[0\] must be a finite number; got NaN/],
      [corrupt((s) => (s.window.weight = Infinity)), /state\.window\.weight must be a finite number ≥ 0/],
      [corrupt((s) => (s.window.microBatches = s.counters.microStep + 1)), /state\.window\.microBatches must be at most counters\.microStep/],
      [corrupt((s) => (s.window.touched[0] = 'yes')), /state\.window\.touched must be one true or false per trainable weight/],
    ];
    const before = trainable(model);
    for (const [state, message] of cases) {
      await assert.rejects(acc.setState(state), message);
      assert.deepEqual([acc.microStep, acc.pendingMicroBatches], [2, 2], String(message));
    }
    assert.deepEqual(trainable(model), before);
    await acc.setState(legacy as never);
    for (const d of data.slice(2)) await acc.step(batchOf(d));
    await acc.flush();
    await acc.dispose();
    const reference = makeModel('mlp', 'none');
    singleThread(reference, tf.train.sgd(0.1), data);
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
  });

  it('a state saved by the single-thread accumulator resumes at 3 workers, and one saved at 2 workers resumes on one thread', async () => {
    const data = makeData([4, 3, 5, 4, 2, 4, 4, 3]);
    const reference = makeModel('mlp', 'group');
    singleThreadRun(reference, tf.train.adam(0.01), data).dispose();
    const expected = trainable(reference);

    // One thread for 4 micro-batches, then 3 workers.
    const first = makeModel('mlp', 'group');
    const single = singleThreadRun(first, tf.train.adam(0.01), data.slice(0, 4), { flush: false });
    const saved = JSON.parse(JSON.stringify(await single.getState()));
    single.dispose();
    const parallel = await ParallelAccumulator.create(args(first, { optimizer: tf.train.adam(0.01), workers: 3 }));
    await parallel.setState(saved);
    for (const d of data.slice(4)) await parallel.step(batchOf(d));
    await parallel.flush();
    await parallel.dispose();
    assert.ok(maxRelativeDifference(trainable(first), expected) <= TOLERANCE, 'one thread, then 3 workers');

    // 2 workers for 5 micro-batches, then one thread.
    const second = makeModel('mlp', 'group');
    const workers = await ParallelAccumulator.create(args(second, { optimizer: tf.train.adam(0.01) }));
    for (const d of data.slice(0, 5)) await workers.step(batchOf(d));
    const state = JSON.parse(JSON.stringify(await workers.getState()));
    await workers.dispose();
    const resumed = new GradientAccumulator({ optimizer: tf.train.adam(0.01), accumulationSteps: 3, varList: second.trainableWeights });
    await resumed.setState(state);
    for (const d of data.slice(5)) {
      tf.tidy(() => {
        const [xs, ys] = [tf.tensor(d.xs, [d.n, ...INPUT]), tf.tensor(d.ys, [d.n, CLASSES])];
        resumed.step(() => tf.losses.softmaxCrossEntropy(ys, second.apply(xs, { training: true }) as tf.Tensor), { sampleCount: d.n });
      });
    }
    resumed.flush();
    resumed.dispose();
    assert.ok(maxRelativeDifference(trainable(second), expected) <= TOLERANCE, '2 workers, then one thread');
  });
});

describe('ParallelAccumulator: dispose during a step (item 7)', () => {
  it('rejects the step waiting for its workers with AccumulatorDisposedError instead of leaving it pending', async () => {
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { accumulationSteps: 1 }));
    const inFlight = assert.rejects(within(acc.step(batchOf(makeData([4])[0])), 20_000), AccumulatorDisposedError);
    await acc.dispose();
    await inFlight;
    await assert.rejects(acc.step(batchOf(makeData([4])[0])), AccumulatorDisposedError);
    model.dispose();
  });
});

after(() => {
  tf.disposeVariables();
});
