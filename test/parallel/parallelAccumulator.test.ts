import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import os from 'node:os';
import { loadNativeBlas, NativeAddon, setNativeThreads } from '../../src/backend/kernels/nativeBlas';
import { selectBackend } from '../../src/backend/selectBackend';
import { checkEquivalence } from '../../src/core/equivalence';
import { GradientAccumulator, NonFiniteGradientError } from '../../src/core/gradientAccumulator';
import { ParallelAccumulator, ParallelAccumulatorArgs, WorkerExitedError, WorkerFailedError } from '../../src/parallel';
import { assertChanged, maxRelativeDifference } from '../helpers';
import { CLASSES, FIXTURES, INPUT, SIZES, TOLERANCE, args, batchOf, makeData, makeModel, singleThread, threadCount, trainable } from '../helpers/parallel';
import type { Data } from '../helpers/parallel';
import { nativeAvailable } from '../helpers/kernelParity';

/**
 * ParallelAccumulator against the single-thread GradientAccumulator on the same micro-batches.
 * Small 8x8 digit models keep every case under a few seconds; main thread and workers both run
 * wasm + kernels so the comparison measures the reduction, not a difference of backends.
 */

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

describe('ParallelAccumulator: exactness against the single-thread accumulator', () => {
  let data: Data;
  before(() => {
    data = makeData();
  });
  for (const kind of ['mlp', 'cnn'] as const) {
    for (const normalization of ['group', 'none'] as const) {
      it(`${kind} with ${normalization} normalization: W = 1, 2, 3 give its weights within ${TOLERANCE}`, async () => {
        const reference = makeModel(kind, normalization);
        const initial = trainable(reference);
        singleThread(reference, tf.train.sgd(0.1), data);
        const expected = trainable(reference);
        assertChanged(initial, expected);
        for (const workers of [1, 2, 3]) {
          const model = makeModel(kind, normalization);
          const acc = await ParallelAccumulator.create(args(model, { workers }));
          const applied = [];
          for (const d of data) applied.push((await acc.step(batchOf(d))).applied);
          assert.deepEqual(applied, [false, false, true, false, false, true, false]);
          const flushed = await acc.flush();
          assert.equal(flushed.applied, true);
          assert.equal(flushed.weight, SIZES[6], 'the short window is averaged over its own samples');
          assert.deepEqual([acc.microStep, acc.updateStep, acc.pendingMicroBatches], [7, 3, 0]);
          await acc.dispose();
          const difference = maxRelativeDifference(trainable(model), expected);
          assert.ok(difference <= TOLERANCE, `W = ${workers}: relative difference ${difference}`);
          model.dispose();
        }
        reference.dispose();
      });
    }
  }

  it('BatchNorm: the parallel update is the accumulator\'s, and checkEquivalence reports both not equivalent to the big batch', async () => {
    const reference = makeModel('cnn', 'batch');
    const xs = tf.tensor(Float32Array.from(data.slice(0, 3).flatMap((d) => [...d.xs])), [12, ...INPUT]);
    const ys = tf.tensor(Float32Array.from(data.slice(0, 3).flatMap((d) => [...d.ys])), [12, CLASSES]);
    const report = checkEquivalence({ model: reference, xs, ys, accumulationSteps: 3, loss: (t, p) => tf.losses.softmaxCrossEntropy(t, p) });
    tf.dispose([xs, ys]);
    assert.equal(report.equivalent, false);
    assert.ok(report.suspects.some((s) => s.className === 'BatchNormalization'), JSON.stringify(report.suspects));
    singleThread(reference, tf.train.sgd(0.1), data);
    const model = makeModel('cnn', 'batch');
    const acc = await ParallelAccumulator.create(args(model));
    for (const d of data) await acc.step(batchOf(d));
    await acc.flush();
    await acc.dispose();
    // Each worker normalizes each micro-batch with its own statistics, as one thread does.
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
    tf.dispose([model, reference].map((m) => m.weights.map((w) => w.read())));
  });
});

describe('ParallelAccumulator: averaging and synchronization', () => {
  it('"per-micro-batch" gives the single-thread mean of micro-batch means, which differs from "per-sample" on uneven micro-batches', async () => {
    const data = makeData([6, 2, 4]);
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { averaging: 'per-micro-batch' }));
    for (const d of data) await acc.step(batchOf(d));
    await acc.dispose();
    // One thread, each micro-batch's mean loss counted once: no sampleCount, a scalar loss.
    const reference = makeModel('mlp', 'none');
    const single = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: reference.trainableWeights });
    for (const d of data) {
      tf.tidy(() => {
        const [xs, ys] = [tf.tensor(d.xs, [d.n, ...INPUT]), tf.tensor(d.ys, [d.n, CLASSES])];
        single.step(() => tf.losses.softmaxCrossEntropy(ys, reference.apply(xs, { training: true }) as tf.Tensor));
      });
    }
    single.dispose();
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
    const perSample = makeModel('mlp', 'none');
    singleThread(perSample, tf.train.sgd(0.1), data);
    assert.ok(maxRelativeDifference(trainable(model), trainable(perSample)) > 1e-3, 'the two averagings are told apart');
  });

  it('syncEvery reduces every round and still applies the same update', async () => {
    const data = makeData([4, 3, 5, 4, 2, 4]);
    const model = makeModel('mlp', 'group');
    const acc = await ParallelAccumulator.create(args(model, { syncEvery: 2 }));
    const rounds = [];
    for (const d of data) rounds.push((await acc.step(batchOf(d))).round !== null);
    await acc.dispose();
    assert.deepEqual(rounds, [false, true, true, false, true, true], 'a reduction after every 2 micro-batches and at the end of each window');
    const reference = makeModel('mlp', 'group');
    singleThread(reference, tf.train.sgd(0.1), data);
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
  });
});

describe('ParallelAccumulator: memory and threads', () => {
  it('leaks no tensor in the main thread or in a worker, and dispose ends every thread', async () => {
    const threadsBefore = threadCount();
    const model = makeModel('cnn', 'group');
    const tensorsBefore = tf.memory().numTensors;
    const acc = await ParallelAccumulator.create(args(model, { optimizer: tf.train.adam(0.01) }));
    assert.ok(threadCount() > threadsBefore, 'the workers run in threads of this process');
    const data = makeData([4, 4, 4]);
    const window = async () => {
      for (const d of data) await acc.step(batchOf(d));
    };
    await window(); // creates the optimizer's slots and the inner accumulators
    const main = tf.memory().numTensors;
    const workers = await acc.workerTensorCounts();
    await window();
    await window();
    assert.equal(tf.memory().numTensors, main, 'main thread');
    assert.deepEqual(await acc.workerTensorCounts(), workers, 'workers');
    await acc.dispose();
    assert.equal(tf.memory().numTensors, tensorsBefore, 'dispose frees the optimizer and the accumulators');
    assert.equal(threadCount(), threadsBefore, 'no thread is left behind');
    model.dispose();
  });
});

describe('ParallelAccumulator: failures', () => {
  it('a worker that throws fails the round: no update, counters rolled back, then training goes on exactly', async () => {
    const model = makeModel('mlp', 'none');
    const initial = trainable(model);
    const acc = await ParallelAccumulator.create(args(model, { loss: { module: FIXTURES, export: 'crossEntropyOrThrow' } }));
    const data = makeData([4, 4, 4, 4, 4, 4]);
    const bad = batchOf(data[0]);
    bad.ys.values[0] = -1;
    await acc.step(batchOf(data[0]));
    await acc.step(bad);
    await assert.rejects(acc.step(batchOf(data[2])), (e: Error) => e instanceof WorkerFailedError && /on purpose/.test(e.message));
    assert.deepEqual(trainable(model), initial, 'no partial update');
    assert.deepEqual([acc.microStep, acc.updateStep, acc.pendingMicroBatches], [0, 0, 0]);
    for (const d of data) await acc.step(batchOf(d));
    await acc.dispose();
    const reference = makeModel('mlp', 'none');
    singleThread(reference, tf.train.sgd(0.1), data);
    assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE);
  });

  it('a worker that dies shuts every worker down cleanly; getState still resumes from before the round', async () => {
    const threadsBefore = threadCount();
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { loss: { module: FIXTURES, export: 'crossEntropyOrExit' } }));
    const data = makeData([4, 4, 4, 4, 4, 4]);
    for (const d of data.slice(0, 3)) await acc.step(batchOf(d));
    const afterFirstWindow = trainable(model);
    const bad = batchOf(data[3]);
    bad.ys.values[0] = -1;
    await acc.step(bad);
    await acc.step(batchOf(data[4]));
    await assert.rejects(acc.step(batchOf(data[5])), WorkerExitedError);
    assert.deepEqual(trainable(model), afterFirstWindow, 'no partial update');
    await assert.rejects(acc.step(batchOf(data[5])), WorkerExitedError, 'a shut-down accumulator refuses work');
    const state = await acc.getState();
    assert.deepEqual([state.counters.microStep, state.counters.updateStep, state.window.microBatches], [3, 1, 0]);
    await acc.dispose();
    assert.equal(threadCount(), threadsBefore, 'no thread is left behind');
  });
});

describe('ParallelAccumulator: bad arguments', () => {
  it('create rejects bad arguments with named errors, before starting any thread', async () => {
    const model = makeModel('mlp', 'none');
    const threads = threadCount();
    const cases: [Partial<ParallelAccumulatorArgs> & Record<string, unknown>, string][] = [
      [{ model: {} as tf.LayersModel }, 'ParallelAccumulator: model must be a tf.LayersModel'],
      [{ optimizer: 'sgd' as unknown as tf.Optimizer }, 'optimizer must be a tf.Optimizer'],
      [{ accumulationSteps: 0 }, 'accumulationSteps must be a positive integer'],
      [{ workers: 0 }, 'workers must be an integer from 1 to'],
      [{ loss: 'meanSquaredErr' }, 'loss must be one of "meanSquaredError"'],
      [{ loss: { module: './no/such/module', export: 'f' } }, 'loss.module must be a module that resolves'],
      [{ loss: { module: FIXTURES, export: 'notALoss' } }, 'loss.export must be the name of a function'],
      [{ averaging: 'mean' as never }, 'averaging must be "per-sample" or "per-micro-batch"'],
      [{ nonFinite: 'ignore' as never }, 'nonFinite must be "error"'],
      [{ clipNorm: -1 }, 'clipNorm must be a finite number > 0'],
    ];
    for (const [extra, fragment] of cases) {
      await assert.rejects(ParallelAccumulator.create(args(model, extra)), (e: Error) => e.message.includes(fragment) || assert.fail(`"${e.message}" lacks "${fragment}"`));
    }
    assert.equal(threadCount(), threads);
  });

  it('nativeThreads: workers x BLAS threads never exceed the cores; within them the workers get that count', async () => {
    const cores = os.cpus().length;
    const model = makeModel('mlp', 'none');
    const threads = threadCount();
    // Every worker at 2 BLAS threads, with one worker per core: twice the cores.
    const over = cores === 1 ? { workers: 1, nativeThreads: 2 } : { workers: cores, nativeThreads: 2 };
    const expected = cores === 1 ? /nativeThreads must be an integer from 1 to 1 \(this machine's cores\), "all", or left out; got 2/ : new RegExp(`nativeThreads must be an integer from 1 to 1 \\(${cores} workers each running the BLAS at that count: at most ${cores} cores / ${cores} workers, never more threads than cores\\), or left out; got 2`);
    await assert.rejects(ParallelAccumulator.create(args(model, { ...over, backend: 'native' })), expected);
    if (cores > 1) await assert.rejects(ParallelAccumulator.create(args(model, { workers: 2, nativeThreads: 'all' as never })), /nativeThreads must be an integer from 1 to/);
    await assert.rejects(ParallelAccumulator.create(args(model, { workers: 1, nativeThreads: 0 })), /nativeThreads must be an integer from 1 to/);
    assert.equal(threadCount(), threads, 'refused before any thread started');
    // Within the budget: one worker may have every core for its BLAS, and it gets them.
    if (!nativeAvailable()) return;
    const acc = await ParallelAccumulator.create(args(model, { workers: 1, nativeThreads: cores, backend: 'native' }));
    try {
      const { addon } = loadNativeBlas() as { addon: NativeAddon };
      // OpenBLAS keeps one count per process: the worker's setting is what this thread reads.
      if (addon.info().blas === 'OpenBLAS') assert.equal(addon.info().threads, cores);
    } finally {
      await acc.dispose();
      setNativeThreads(1);
      model.dispose();
    }
  });

  it('step rejects a micro-batch that does not fit, sending nothing and counting nothing', async () => {
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { workers: 1 }));
    const [d] = makeData([4]);
    const wrongShape = { xs: { values: d.xs, shape: [4, 64] }, ys: { values: d.ys, shape: [4, CLASSES] } };
    await assert.rejects(acc.step(wrongShape), /batch\.xs must be a batch of the model's input shape \[batch, 8, 8, 1\]; got shape \[4, 64\]/);
    const wrongCount = { xs: { values: d.xs, shape: [4, 8, 8, 2] }, ys: { values: d.ys, shape: [4, CLASSES] } };
    await assert.rejects(acc.step(wrongCount), /batch\.xs must be a tf\.Tensor or \{ values/);
    const mismatch = { xs: { values: d.xs, shape: [4, ...INPUT] }, ys: { values: d.ys.slice(0, 8), shape: [2, CLASSES] } };
    await assert.rejects(acc.step(mismatch), /batch\.ys must be a batch of the same size as xs \(4\)/);
    await assert.rejects(acc.step(null as never), /batch must be an object/);
    assert.deepEqual([acc.microStep, acc.pendingMicroBatches], [0, 0]);
    assert.equal(d.xs.length, 4 * 64, 'a rejected micro-batch is not transferred');
    await acc.dispose();
    await assert.rejects(acc.step(batchOf(d)), /was disposed/);
  });
});

describe('ParallelAccumulator: non-finite policies', () => {
  let data: Data;
  before(() => {
    data = makeData([4, 4, 4, 4]);
  });
  const poisoned = () => {
    const b = batchOf(data[1]);
    b.xs.values[0] = Number.NaN;
    return b;
  };

  it('"error" throws NonFiniteGradientError and does not count the micro-batch; "skip-micro-batch" waits for one more', async () => {
    for (const nonFinite of ['error', 'skip-micro-batch'] as const) {
      const model = makeModel('mlp', 'none');
      const acc = await ParallelAccumulator.create(args(model, { nonFinite }));
      await acc.step(batchOf(data[0]));
      await acc.step(poisoned());
      const last = acc.step(batchOf(data[2]));
      if (nonFinite === 'error') await assert.rejects(last, NonFiniteGradientError);
      else assert.equal((await last).skipped, 'micro-batch');
      assert.equal(acc.pendingMicroBatches, 2);
      assert.equal((await acc.step(batchOf(data[3]))).applied, true);
      await acc.dispose();
      const reference = makeModel('mlp', 'none');
      singleThread(reference, tf.train.sgd(0.1), [data[0], data[2], data[3]]);
      assert.ok(maxRelativeDifference(trainable(model), trainable(reference)) <= TOLERANCE, nonFinite);
      assert.equal(acc.skippedMicroBatches, nonFinite === 'error' ? 0 : 1);
    }
  });

  it('"skip-window" drops the whole window and leaves the weights as they were', async () => {
    const model = makeModel('mlp', 'none');
    const initial = trainable(model);
    const acc = await ParallelAccumulator.create(args(model, { nonFinite: 'skip-window' }));
    await acc.step(batchOf(data[0]));
    await acc.step(poisoned());
    const result = await acc.step(batchOf(data[2]));
    assert.deepEqual([result.applied, result.skipped, acc.skippedWindows, acc.skippedMicroBatches], [false, 'window', 1, 1]);
    assert.deepEqual(trainable(model), initial);
    await acc.dispose();
  });
});

describe('ParallelAccumulator: resume', () => {
  it('getState mid-window, a new model and accumulator, setState: the run ends as the uninterrupted single-thread one', async () => {
    const data = makeData([4, 3, 5, 4, 2, 4, 4, 3]);
    const first = makeModel('cnn', 'group');
    const acc = await ParallelAccumulator.create(args(first, { optimizer: tf.train.adam(0.01) }));
    for (const d of data.slice(0, 5)) await acc.step(batchOf(d));
    const state = JSON.parse(JSON.stringify(await acc.getState()));
    const weights = first.weights.map((w) => w.read().clone());
    await acc.dispose();
    assert.deepEqual([state.counters.microStep, state.counters.updateStep, state.window.microBatches], [5, 1, 2]);

    const second = makeModel('cnn', 'group');
    second.setWeights(weights);
    tf.dispose(weights);
    const resumed = await ParallelAccumulator.create(args(second, { optimizer: tf.train.adam(0.01), workers: 3 }));
    await assert.rejects(resumed.setState({ ...state, format: 'other' }), /state must be an object from getState\(\) \(format "tfjs-accumulate\/state@3"\)/);
    await assert.rejects(resumed.setState({ ...state, accumulators: state.accumulators.slice(1) }, { matchBy: 'order' }), /setState: /);
    await resumed.setState(state, { matchBy: 'order' });
    for (const d of data.slice(5)) await resumed.step(batchOf(d));
    await resumed.endEpoch();
    assert.deepEqual([resumed.microStep, resumed.updateStep, resumed.epoch], [8, 3, 1]);
    await resumed.dispose();

    const reference = makeModel('cnn', 'group');
    singleThread(reference, tf.train.adam(0.01), data);
    assert.ok(maxRelativeDifference(trainable(second), trainable(reference)) <= TOLERANCE);
  });
});

after(() => {
  tf.disposeVariables();
});
