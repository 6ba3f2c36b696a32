import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator, NonFiniteGradientError } from '../../src/core/gradientAccumulator';
import { epochSchedule } from '../../src/core/schedule';
import {
  assertChanged,
  assertNoLeak,
  assertThrowsMentioning,
  batch,
  denseModel,
  maxRelativeDifference,
  meanLoss,
  perSampleLoss,
  split,
  weightsOf,
} from '../helpers';

/** A scalar variable whose loss `w · g` has gradient exactly g: the hand-checkable case. */
function scalarProblem(learningRate = 0.5) {
  const w = tf.variable(tf.scalar(0));
  const lossFor = (g: number) => () => tf.mul(w, g) as tf.Scalar;
  return { w, lossFor, optimizer: tf.train.sgd(learningRate) };
}

/** Trains `model` for one update on the whole batch with a plain optimizer: the reference. */
function bigBatchUpdate(model: tf.LayersModel, optimizer: tf.Optimizer, data: { xs: tf.Tensor; ys: tf.Tensor }) {
  tf.tidy(() => {
    optimizer.minimize(() => meanLoss(model, data.xs, data.ys));
  });
}

const TOLERANCE = 1e-5;

describe('GradientAccumulator: the hand-checkable case', () => {
  it('gradients 1, 2, 3, 4 with accumulationSteps 4 give one update of 2.5 × learningRate', () => {
    const { w, lossFor, optimizer } = scalarProblem(0.5);
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 4, varList: [w] });
    const results = [1, 2, 3, 4].map((g) => acc.step(lossFor(g)));
    assert.deepEqual(results.map((r) => r.applied), [false, false, false, true]);
    // Hand derivation: w = 0 − 0.5 · (1 + 2 + 3 + 4) / 4 = −1.25, exact in float32.
    assert.equal(w.dataSync()[0], -1.25);
    assert.deepEqual(results.map((r) => r.windowPosition), [1, 2, 3, 4]);
    assert.equal(results[3].updateStep, 1);
    assert.equal(optimizer.iterations, 1, "the wrapped optimizer's counter counts updates, not micro-steps");
    // The accumulators were zeroed: the next window starts from nothing.
    [4, 4, 4, 4].forEach((g) => acc.step(lossFor(g)));
    assert.equal(w.dataSync()[0], -1.25 - 2);
    acc.dispose();
  });

  it('reports the unscaled micro-batch loss, not the loss divided by accumulationSteps', () => {
    const { w, optimizer } = scalarProblem();
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 4, varList: [w] });
    const r = acc.step(() => tf.add(tf.mul(w, 1), 8) as tf.Scalar);
    assert.equal(r.loss, 8);
    acc.dispose();
  });
});

describe('GradientAccumulator: equivalence with the big batch', () => {
  for (const [name, makeOptimizer] of [
    ['SGD', () => tf.train.sgd(0.1)],
    ['Adam', () => tf.train.adam(0.01)],
  ] as const) {
    it(`4 micro-batches of 16 equal one batch of 64 (${name}, scalar mean loss and per-sample loss)`, () => {
      const data = batch(64);
      const reference = denseModel();
      const before = weightsOf(reference);
      bigBatchUpdate(reference, makeOptimizer(), data);
      for (const perSample of [false, true]) {
        const model = denseModel();
        const acc = new GradientAccumulator({ optimizer: makeOptimizer(), accumulationSteps: 4 , varList: model.trainableWeights });
        const applied = split(data, [16, 16, 16, 16]).map(({ xs, ys }) =>
          acc.step(() => (perSample ? perSampleLoss(model, xs, ys) : meanLoss(model, xs, ys))).applied,
        );
        assert.deepEqual(applied, [false, false, false, true]);
        const difference = maxRelativeDifference(weightsOf(model), weightsOf(reference));
        assert.ok(difference <= TOLERANCE, `${name}, perSample=${perSample}: relative difference ${difference}`);
        acc.dispose();
        model.dispose();
      }
      assertChanged(before, weightsOf(reference));
      reference.dispose();
    });
  }

  it('uneven micro-batches (16, 16, 16, 7) equal one batch of 55 under "per-sample"', () => {
    const data = batch(55);
    const reference = denseModel();
    bigBatchUpdate(reference, tf.train.sgd(0.1), data);
    const parts = split(data, [16, 16, 16, 7]);
    // Both ways of telling the sample count: a per-sample loss, or sampleCount with a mean loss.
    for (const how of ['per-sample loss', 'sampleCount'] as const) {
      const model = denseModel();
      const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4, varList: model.trainableWeights });
      for (const { xs, ys } of parts) {
        if (how === 'per-sample loss') acc.step(() => perSampleLoss(model, xs, ys));
        else acc.step(() => meanLoss(model, xs, ys), { sampleCount: xs.shape[0] });
      }
      const difference = maxRelativeDifference(weightsOf(model), weightsOf(reference));
      assert.ok(difference <= TOLERANCE, `${how}: relative difference ${difference}`);
      acc.dispose();
      model.dispose();
    }
    reference.dispose();
  });

  it('"per-micro-batch" is measurably wrong for uneven micro-batches (the textbook rule)', () => {
    const data = batch(55);
    const reference = denseModel();
    bigBatchUpdate(reference, tf.train.sgd(0.1), data);
    const model = denseModel();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4, averaging: 'per-micro-batch', varList: model.trainableWeights });
    for (const { xs, ys } of split(data, [16, 16, 16, 7])) acc.step(() => meanLoss(model, xs, ys));
    const difference = maxRelativeDifference(weightsOf(model), weightsOf(reference));
    assert.ok(difference > 100 * TOLERANCE, `expected a visible error, got ${difference}`);
    acc.dispose();
    model.dispose();
    reference.dispose();
  });

  it('a short last window, flushed, equals the big-batch update of the samples it holds', () => {
    // 6 micro-batches with accumulationSteps 4: one full window (64 samples) and a short one
    // holding 16 + 7 samples. Reference: two plain updates on batches of 64 and 23.
    const data = batch(87);
    const sizes = [16, 16, 16, 16, 16, 7];
    const reference = denseModel();
    const referenceOptimizer = tf.train.adam(0.01);
    const [first, second] = split(data, [64, 23]);
    bigBatchUpdate(reference, referenceOptimizer, first);
    bigBatchUpdate(reference, referenceOptimizer, second);

    const model = denseModel();
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.01), accumulationSteps: 4, varList: model.trainableWeights });
    for (const { xs, ys } of split(data, sizes)) acc.step(() => perSampleLoss(model, xs, ys));
    assert.equal(acc.pendingMicroBatches, 2);
    const update = acc.flush();
    assert.deepEqual([update.applied, update.microBatches, update.weight, update.updateStep], [true, 2, 23, 2]);
    const difference = maxRelativeDifference(weightsOf(model), weightsOf(reference));
    assert.ok(difference <= TOLERANCE, `relative difference ${difference}`);
    assert.equal(acc.flush().applied, false, 'flushing an empty window does nothing');
    acc.dispose();
    model.dispose();
    reference.dispose();
  });

  it('trains the variables the loss depends on when varList is left out, and no others', () => {
    const model = denseModel();
    const bystander = denseModel(5); // another model in memory must get no accumulators
    const data = batch(8);
    const before = weightsOf(model);
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 1 });
    acc.step(() => meanLoss(model, data.xs, data.ys));
    assert.deepEqual(acc.variables, model.trainableWeights.map((w) => w.read()));
    assertChanged(before, weightsOf(model));
    acc.dispose();
    model.dispose();
    bystander.dispose();
  });

  it('addGradients accumulates gradients computed elsewhere', () => {
    const { w, optimizer } = scalarProblem(0.5);
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [w] });
    // Means 1 over 3 samples and 4 over 1 sample: (3·1 + 1·4) / 4 = 1.75, times 0.5.
    acc.addGradients({ [w.name]: tf.scalar(1) }, 3);
    const r = acc.addGradients({ [w.name]: tf.scalar(4) }, 1);
    assert.equal(r.applied, true);
    assert.equal(w.dataSync()[0], -0.875);
    acc.dispose();
  });
});

describe('GradientAccumulator: counters and schedules', () => {
  it('keeps micro-steps, update steps and epochs apart', () => {
    const { w, lossFor, optimizer } = scalarProblem();
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 3, varList: [w] });
    for (let i = 0; i < 7; i++) acc.step(lossFor(1));
    assert.deepEqual([acc.microStep, acc.updateStep, acc.epoch, acc.pendingMicroBatches], [7, 2, 0, 1]);
    const flushed = acc.endEpoch();
    assert.equal(flushed?.applied, true);
    assert.deepEqual([acc.microStep, acc.updateStep, acc.epoch, acc.pendingMicroBatches], [7, 3, 1, 0]);
    acc.step(lossFor(1));
    assert.equal(acc.endEpoch({ flush: false }), null);
    assert.deepEqual([acc.updateStep, acc.epoch, acc.pendingMicroBatches], [3, 2, 1]);
    acc.dispose();
  });

  it('evaluates a schedule at the start of every window', () => {
    const { w, lossFor, optimizer } = scalarProblem();
    const seen: number[] = [];
    const acc = new GradientAccumulator({
      optimizer,
      varList: [w],
      accumulationSteps: ({ updateStep }) => (seen.push(updateStep), updateStep === 0 ? 2 : 3),
    });
    const applied = Array.from({ length: 8 }, () => acc.step(lossFor(1)).applied);
    assert.deepEqual(applied, [false, true, false, false, true, false, false, true]);
    assert.deepEqual(seen, [0, 1, 2]);
    acc.dispose();
  });

  it('follows an epoch schedule', () => {
    const { w, lossFor, optimizer } = scalarProblem();
    const acc = new GradientAccumulator({ optimizer, varList: [w], accumulationSteps: epochSchedule({ 0: 4, 1: 2 }) });
    const sizes: number[] = [];
    for (let epoch = 0; epoch < 2; epoch++) {
      for (let i = 0; i < 4; i++) sizes.push(acc.step(lossFor(1)).accumulationSteps);
      acc.endEpoch();
    }
    assert.deepEqual(sizes, [4, 4, 4, 4, 2, 2, 2, 2]);
    assert.equal(acc.updateStep, 3);
    acc.dispose();
  });

  it('rejects a bad schedule value without changing anything', () => {
    const { w, lossFor, optimizer } = scalarProblem();
    const acc = new GradientAccumulator({ optimizer, varList: [w], accumulationSteps: () => 0 });
    assertThrowsMentioning(() => acc.step(lossFor(1)), 'accumulationSteps', 'positive integer', 'got 0');
    assert.deepEqual([acc.microStep, w.dataSync()[0]], [0, 0]);
    acc.dispose();
  });
});

describe('GradientAccumulator: clipping', () => {
  it('clips the accumulated gradient, not each micro-batch', () => {
    const w = tf.variable(tf.zeros([2]));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, clipNorm: 1, varList: [w] });
    // Micro-batch gradients (30, 40) and (−24, −32) average to (3, 4), norm 5, clipped to
    // (0.6, 0.8). Clipping each micro-batch first would give (0.6, 0.8) and (−0.6, −0.8): zero.
    acc.step(() => tf.sum(tf.mul(w, tf.tensor1d([30, 40]))) as tf.Scalar);
    const r = acc.step(() => tf.sum(tf.mul(w, tf.tensor1d([-24, -32]))) as tf.Scalar);
    assert.equal(r.gradientNorm, 5);
    const [a, b] = w.dataSync();
    assert.ok(Math.abs(a + 0.6) < 1e-7 && Math.abs(b + 0.8) < 1e-7, `got ${a}, ${b}`);
    acc.dispose();
  });
});

describe('GradientAccumulator: non-finite gradients', () => {
  const nanOr = (w: tf.Variable, g: number) => () => (Number.isFinite(g) ? tf.mul(w, g) : tf.mul(w, tf.scalar(g))) as tf.Scalar;

  it('"error" throws and leaves weights, accumulators and counters as they were', async () => {
    const { w, optimizer } = scalarProblem();
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 4, varList: [w] });
    acc.step(nanOr(w, 1));
    const state = await acc.getState();
    assert.throws(() => acc.step(nanOr(w, NaN)), NonFiniteGradientError);
    assert.throws(() => acc.step(() => tf.add(tf.mul(w, 1), Infinity) as tf.Scalar), /non-finite/);
    assert.deepEqual(await acc.getState(), state);
    assert.equal(w.dataSync()[0], 0);
    acc.dispose();
  });

  it('"skip-micro-batch" drops the micro-batch and waits for a good one', () => {
    const { w, optimizer } = scalarProblem(0.5);
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 4, varList: [w], nonFinite: 'skip-micro-batch' });
    const results = [1, NaN, 2, Infinity, 3, 4].map((g) => acc.step(nanOr(w, g)));
    assert.deepEqual(results.map((r) => r.skipped), [null, 'micro-batch', null, 'micro-batch', null, null]);
    assert.deepEqual(results.map((r) => r.applied), [false, false, false, false, false, true]);
    assert.equal(w.dataSync()[0], -1.25);
    assert.deepEqual([acc.skippedMicroBatches, acc.skippedWindows, acc.microStep], [2, 0, 6]);
    acc.dispose();
  });

  it('"skip-window" drops the whole window but keeps its length', () => {
    const { w, optimizer } = scalarProblem(0.5);
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [w], nonFinite: 'skip-window' });
    const results = [1, NaN, 3, 5].map((g) => acc.step(nanOr(w, g)));
    assert.deepEqual(results.map((r) => [r.applied, r.skipped]), [[false, null], [false, 'window'], [false, null], [true, null]]);
    assert.equal(w.dataSync()[0], -2); // only the second window: 0.5 · (3 + 5) / 2
    assert.deepEqual([acc.skippedMicroBatches, acc.skippedWindows, acc.updateStep], [1, 1, 1]);
    acc.dispose();
  });

  it('applies finite gradients whose sum is beyond float32 (issue 32, item 11): 3e38 and 3e38 average to 3e38, clipped to 1', () => {
    const { w, optimizer } = scalarProblem(); // the sums are held times 2^-1: 1.5e38 + 1.5e38, not Infinity
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [w], nonFinite: 'skip-micro-batch', clipNorm: 1 });
    const second = [3e38, 3e38].map((g) => acc.step(nanOr(w, g)))[1];
    assert.deepEqual([second.skipped, second.applied, second.gradientNorm], [null, true, Math.fround(3e38)]);
    assert.equal(w.dataSync()[0], -0.5); // 0 − 0.5 · 1
    acc.dispose();
  });
});

describe('GradientAccumulator: bad input', () => {
  const optimizer = tf.train.sgd(0.1);

  it('rejects bad accumulationSteps, naming it and what is accepted', () => {
    for (const bad of [0, -1, 2.5, NaN, Infinity, '4', undefined]) {
      assertThrowsMentioning(
        () => new GradientAccumulator({ optimizer, accumulationSteps: bad as number }),
        'accumulationSteps',
        'positive integer',
      );
    }
  });

  it('rejects bad options', () => {
    const w = tf.variable(tf.scalar(0));
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer: {} as tf.Optimizer, accumulationSteps: 2 }), 'optimizer', 'tf.Optimizer');
    for (const clipNorm of [0, -1, NaN, Infinity]) {
      assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, clipNorm }), 'clipNorm', '> 0');
    }
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, averaging: 'mean' as never }), 'averaging', '"per-sample"');
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, nonFinite: 'ignore' as never }), 'nonFinite', '"skip-window"');
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [] }), 'varList', 'non-empty');
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [tf.scalar(1) as never] }), 'varList[0]', 'tf.Variable');
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [w, w] }), 'varList[1]', 'once');
    const gone = tf.variable(tf.scalar(1));
    gone.dispose();
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [gone] }), 'varList[0]', 'unknown or disposed');
    const frozen = tf.variable(tf.scalar(1), false);
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [frozen] }), 'varList[0]', 'trainable');
    tf.dispose([w, frozen]);
  });

  it('rejects a bad loss and leaves weights and accumulators exactly as they were', async () => {
    const w = tf.variable(tf.tensor1d([1, 2]));
    for (const averaging of ['per-sample', 'per-micro-batch'] as const) {
      const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4, varList: [w], averaging });
      acc.step(() => tf.sum(tf.square(w)) as tf.Scalar);
      const state = await acc.getState();
      const weights = Array.from(w.dataSync());
      const tensors = tf.memory().numTensors;
      const bad: [() => unknown, ...string[]][] = [
        [() => acc.step(() => undefined as never), 'lossFn', 'tf.Tensor', 'undefined'],
        [() => acc.step(() => 3 as never), 'lossFn', 'tf.Tensor', 'returned 3'],
        [() => acc.step(() => tf.square(w).reshape([1, 2])), 'lossFn', 'shape [1, 2]'],
        [() => acc.step('loss' as never), 'lossFn', 'a function'],
        [() => acc.step(() => tf.sum(w) as tf.Scalar, { sampleCount: 0 }), 'sampleCount', 'positive integer'],
        [() => acc.step(() => tf.sum(w) as tf.Scalar, { sampleCount: 2.5 }), 'sampleCount', 'positive integer'],
      ];
      if (averaging === 'per-micro-batch') {
        bad.push([() => acc.step(() => tf.square(w)), 'lossFn', 'scalar', 'shape [2]']);
      } else {
        bad.push([() => acc.step(() => tf.square(w), { sampleCount: 3 }), 'sampleCount', 'length (2)']);
        bad.push([() => acc.step(() => tf.square(w), {}), 'every micro-batch of a window']);
      }
      for (const [call, ...fragments] of bad) assertThrowsMentioning(call, ...fragments);
      assert.deepEqual(await acc.getState(), state);
      assert.deepEqual(Array.from(w.dataSync()), weights);
      assert.equal(tf.memory().numTensors, tensors, 'a failed step leaked tensors');
      acc.dispose();
    }
    w.dispose();
  });

  it('disposes its accumulators and, unless told to keep it, the wrapped optimizer', () => {
    const w = tf.variable(tf.zeros([5]));
    const before = tf.memory().numTensors;
    for (const keepOptimizer of [false, true]) {
      const optimizer = tf.train.adam(0.1);
      const acc = new GradientAccumulator({ optimizer, accumulationSteps: 1, varList: [w] });
      acc.step(() => tf.sum(w) as tf.Scalar); // creates the accumulator and Adam's slots
      acc.dispose({ keepOptimizer });
      assert.equal(tf.memory().numTensors > before, keepOptimizer, `keepOptimizer=${keepOptimizer}`);
      optimizer.dispose();
      assert.equal(tf.memory().numTensors, before);
    }
    w.dispose();
  });

  it('refuses to work after dispose', () => {
    const { w, lossFor, optimizer } = scalarProblem();
    const acc = new GradientAccumulator({ optimizer, accumulationSteps: 2, varList: [w] });
    acc.step(lossFor(1));
    acc.dispose();
    assertThrowsMentioning(() => acc.step(lossFor(1)), 'disposed');
  });
});

describe('GradientAccumulator: no leaks on any path (200 micro-steps each)', () => {
  const data = batch(16);
  const model = denseModel();
  const varList = model.trainableWeights;
  const path = (args: Partial<ConstructorParameters<typeof GradientAccumulator>[0]>, micro: (acc: GradientAccumulator, i: number) => void) => () => {
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.001), accumulationSteps: 4, varList, ...args });
    let i = 0;
    // 1 warm-up call + 19 measured calls of 10 micro-steps = 200 micro-steps.
    assertNoLeak(() => {
      for (let k = 0; k < 10; k++) micro(acc, i++);
    }, 19);
    assert.equal(acc.microStep, 200);
    acc.dispose();
  };
  const mean = (acc: GradientAccumulator) => acc.step(() => meanLoss(model, data.xs, data.ys));

  it('step with a mean loss', path({}, mean));
  it('step with a per-sample loss', path({}, (acc) => acc.step(() => perSampleLoss(model, data.xs, data.ys))));
  it('step with sampleCount under "per-micro-batch"', path({ averaging: 'per-micro-batch' }, (acc) => acc.step(() => meanLoss(model, data.xs, data.ys), { sampleCount: 16 })));
  it('flush', path({}, (acc, i) => (mean(acc), i % 3 === 2 && acc.flush())));
  it('endEpoch', path({ accumulationSteps: epochSchedule({ 0: 3, 2: 5 }) }, (acc, i) => (mean(acc), i % 7 === 6 && acc.endEpoch())));
  it('clip', path({ clipNorm: 0.01 }, mean));
  it('schedule', path({ accumulationSteps: ({ updateStep }) => 1 + (updateStep % 5) }, mean));
  const poisoned = (acc: GradientAccumulator, i: number) =>
    acc.step(() => (i % 7 === 3 ? tf.mul(meanLoss(model, data.xs, data.ys), NaN) : meanLoss(model, data.xs, data.ys)) as tf.Scalar);
  it('skip-micro-batch', path({ nonFinite: 'skip-micro-batch' }, poisoned));
  it('skip-window', path({ nonFinite: 'skip-window' }, poisoned));
  it('rejected steps', path({}, (acc) => {
    // Every good micro-step is followed by a rejected one, which must leave no tensor behind.
    mean(acc);
    assert.throws(() => acc.step(() => tf.ones([2, 2])), /lossFn/);
    assert.throws(() => acc.step(() => { tf.square(tf.ones([3])); throw new Error('user bug'); }), /user bug/);
  }));
});

describe('GradientAccumulator: the window\'s sample-weighted mean loss', () => {
  it('is Σ loss × samples / Σ samples over the window, on step results and on flush', () => {
    const w = tf.variable(tf.scalar(0));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: [w] });
    // Per-sample losses (w + c) with w = 0: micro-batch means 1 (3 samples) and 4 (1 sample).
    const r1 = acc.step(() => tf.add(w, tf.tensor1d([0, 1, 2])));
    const r2 = acc.step(() => tf.add(w, tf.tensor1d([4])));
    assert.equal(r1.windowLoss, 1);
    assert.equal(r2.windowLoss, (1 * 3 + 4 * 1) / 4); // 1.75, not the mean of means 2.5
    const update = acc.flush();
    assert.equal(update.loss, 1.75);
    assert.equal(update.weight, 4);
    acc.dispose();
    w.dispose();
  });
});
