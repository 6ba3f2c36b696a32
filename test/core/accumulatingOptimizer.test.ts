import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer, MissingCallbackError } from '../../src/core/accumulatingOptimizer';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { epochSchedule } from '../../src/core/schedule';
import { assertBitIdentical, assertChanged, assertThrowsMentioning, batch, denseModel, maxRelativeDifference, meanLoss, perSampleLoss, split, weightsOf } from '../helpers';

const TOLERANCE = 1e-5;

/** Fits a fresh seeded model for one epoch and returns its weights. */
async function fitWeights(
  optimizer: tf.Optimizer,
  data: { xs: tf.Tensor; ys: tf.Tensor },
  batchSize: number,
  options: { shuffle?: boolean; callbacks?: tf.CustomCallback[]; epochs?: number } = {},
): Promise<Float32Array[]> {
  const model = denseModel();
  model.compile({ optimizer, loss: 'meanSquaredError' });
  await model.fit(data.xs, data.ys, { batchSize, epochs: options.epochs ?? 1, shuffle: options.shuffle ?? false, verbose: 0, callbacks: options.callbacks });
  const weights = weightsOf(model);
  model.dispose();
  return weights;
}

describe('AccumulatingOptimizer with model.fit', () => {
  for (const [name, make] of [
    ['SGD', () => tf.train.sgd(0.1)],
    ['Adam', () => tf.train.adam(0.01)],
  ] as const) {
    it(`fit with batch 16 × accumulationSteps 4 equals fit with batch 64 (${name})`, async () => {
      const data = batch(64);
      const reference = await fitWeights(make(), data, 64);
      assertChanged(weightsOf(denseModel()), reference);
      for (const shuffle of [false, true]) {
        const optimizer = new AccumulatingOptimizer({ optimizer: make(), accumulationSteps: 4 });
        const weights = await fitWeights(optimizer, data, 16, { shuffle, callbacks: [optimizer.callback()] });
        const difference = maxRelativeDifference(weights, reference);
        assert.ok(difference <= TOLERANCE, `${name}, shuffle=${shuffle}: relative difference ${difference}`);
        assert.equal(optimizer.iterations, 1);
        assert.equal(optimizer.accumulator.microStep, 4);
        optimizer.dispose();
      }
    });
  }

  it('with its callback, weights an uneven last batch exactly (16, 16, 16, 7 = 55)', async () => {
    const data = batch(55);
    const reference = await fitWeights(tf.train.sgd(0.1), data, 55);
    const withCallback = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const exact = await fitWeights(withCallback, data, 16, { callbacks: [withCallback.callback()] });
    assert.ok(maxRelativeDifference(exact, reference) <= TOLERANCE);
    // Without the callback fit cannot tell batch sizes apart: refused by name (issue 32, item 14), not inexact.
    const without = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    await assert.rejects(fitWeights(without, data, 16), MissingCallbackError);
    assert.deepEqual([without.accumulator.microStep, without.iterations], [0, 0]);
    withCallback.dispose();
    without.dispose();
  });

  it('with its callback, flushes a short window at the end of each epoch', async () => {
    // 80 samples in batches of 16 with accumulationSteps 4: a full window of 64 and a short one
    // of 16, flushed at the epoch's end. Reference: plain updates on batches of 64 then 16.
    const data = batch(80);
    const [first, second] = split(data, [64, 16]);
    const model = denseModel();
    model.compile({ optimizer: tf.train.adam(0.01), loss: 'meanSquaredError' });
    await model.fit(first.xs, first.ys, { batchSize: 64, verbose: 0 });
    await model.fit(second.xs, second.ys, { batchSize: 16, verbose: 0 });
    const reference = weightsOf(model);
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 4 });
    const weights = await fitWeights(optimizer, data, 16, { callbacks: [optimizer.callback()] });
    assert.ok(maxRelativeDifference(weights, reference) <= TOLERANCE);
    assert.deepEqual([optimizer.iterations, optimizer.accumulator.epoch, optimizer.accumulator.pendingMicroBatches], [2, 1, 0]);
    optimizer.dispose();
    model.dispose();
  });

  it('leaks nothing over 200 batches of fit', async () => {
    const data = batch(16 * 20);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 3, clipNorm: 1 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const callbacks = [optimizer.callback()];
    await model.fit(data.xs, data.ys, { batchSize: 16, epochs: 1, verbose: 0, callbacks });
    const before = tf.memory().numTensors;
    await model.fit(data.xs, data.ys, { batchSize: 16, epochs: 10, verbose: 0, callbacks });
    assert.equal(tf.memory().numTensors, before);
    assert.equal(optimizer.accumulator.microStep, 220);
    optimizer.dispose();
    model.dispose();
  });

  it('rejects varList, which model.fit decides', () => {
    assertThrowsMentioning(
      () => new AccumulatingOptimizer({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [] } as never),
      'varList',
    );
    assertThrowsMentioning(() => new AccumulatingOptimizer({ optimizer: tf.train.sgd(1), accumulationSteps: 0 }), 'accumulationSteps');
  });

  it('describes itself and its wrapped optimizer', () => {
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.5), accumulationSteps: 2, clipNorm: 3 });
    assert.equal(optimizer.getClassName(), 'AccumulatingOptimizer');
    assert.deepEqual(optimizer.getConfig(), {
      optimizer: { className: 'SGD', config: { learningRate: 0.5 } },
      accumulationSteps: 2,
      averaging: 'per-sample',
      clipNorm: 3,
      nonFinite: 'error',
    });
    optimizer.dispose();
  });
});

/** A model's weights layer by layer, in an order that freezing does not change (model.weights puts trainable ones first). */
function layerWeights(model: tf.LayersModel): Float32Array[] {
  return model.layers.flatMap((l) => l.weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array)));
}

/** Sets a layer's trainability and recompiles with the same optimizer, as fine-tuning does. */
function setTrainable(model: tf.LayersModel, layer: number, trainable: boolean, optimizer: tf.Optimizer) {
  model.layers[layer].trainable = trainable;
  model.compile({ optimizer, loss: 'meanSquaredError' });
}

describe('AccumulatingOptimizer: the variables follow what model.fit hands over', () => {
  it('freeze / unfreeze / freeze cycles with the same SGD optimizer equal plain big-batch fits', async () => {
    const data = batch(64);
    const fitWith = async (optimizer: tf.Optimizer, batchSize: number, callbacks: tf.CustomCallback[]) => {
      const model = denseModel();
      const initial = layerWeights(model);
      const phases: Float32Array[][] = [];
      for (const trainable of [false, true, false, true]) {
        setTrainable(model, 0, trainable, optimizer);
        await model.fit(data.xs, data.ys, { batchSize, epochs: 1, shuffle: false, verbose: 0, callbacks });
        phases.push(layerWeights(model));
      }
      model.dispose();
      return { initial, phases };
    };
    const reference = await fitWith(tf.train.sgd(0.1), 64, []);
    const accumulating = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const result = await fitWith(accumulating, 16, [accumulating.callback()]);
    result.phases.forEach((weights, i) => {
      const difference = maxRelativeDifference(weights, reference.phases[i]);
      assert.ok(difference <= TOLERANCE, `phase ${i}: relative difference ${difference}`);
    });
    // The first layer was frozen in phase 0 and trained in phase 1: it must have moved then.
    assert.ok(maxRelativeDifference([result.phases[1][0]], [result.phases[0][0]]) > 1e-4, 'the unfrozen layer never trained');
    assertBitIdentical([result.phases[0][0]], [result.initial[0]]);
    assertBitIdentical([result.phases[2][0]], [result.phases[1][0]]);
    assert.equal(accumulating.iterations, 4);
    accumulating.dispose();
  });

  it('with Adam, keeps each variable\'s slots through freeze / unfreeze (a big-batch loop over a fixed variable order is the reference)', async () => {
    const data = batch(64);
    // Reference: the big batch, Adam fed every variable in the order first seen, null when frozen.
    const model = denseModel();
    const adam = tf.train.adam(0.01);
    const order: tf.Variable[] = [];
    const phasesRef: Float32Array[][] = [];
    for (const trainable of [false, true, false, true]) {
      model.layers[0].trainable = trainable;
      const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
      for (const v of vars) if (!order.includes(v)) order.push(v);
      tf.tidy(() => {
        const { grads } = tf.variableGrads(() => meanLoss(model, data.xs, data.ys), vars);
        adam.applyGradients(Object.fromEntries(order.map((v) => [v.name, grads[v.name] ?? null])) as never);
      });
      phasesRef.push(layerWeights(model));
    }
    const accumulating = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 4 });
    const other = denseModel();
    for (const [i, trainable] of [false, true, false, true].entries()) {
      setTrainable(other, 0, trainable, accumulating);
      await other.fit(data.xs, data.ys, { batchSize: 16, epochs: 1, shuffle: false, verbose: 0, callbacks: [accumulating.callback()] });
      const difference = maxRelativeDifference(layerWeights(other), phasesRef[i]);
      assert.ok(difference <= TOLERANCE, `phase ${i}: relative difference ${difference}`);
    }
    adam.dispose();
    accumulating.dispose();
    [model, other].forEach((m) => m.dispose());
  });

  it('a variable frozen mid-window stops receiving gradient; the rest keep exact weighting', () => {
    const data = batch(64);
    const parts = split(data, [16, 16, 16, 16]);
    const model = denseModel();
    const reference = denseModel();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const frozenBefore = layerWeights(model).slice(0, 2);
    parts.forEach(({ xs, ys }, k) => {
      if (k === 2) model.layers[0].trainable = false; // frozen after 2 of 4 micro-batches
      acc.step(() => perSampleLoss(model, xs, ys));
    });
    // Reference: the last layer trained on the whole batch of 64, the first one untouched.
    tf.tidy(() => {
      tf.train.sgd(0.1).minimize(() => meanLoss(reference, data.xs, data.ys), false, reference.layers[1].trainableWeights.map((w) => w.read() as tf.Variable));
    });
    assertBitIdentical(layerWeights(model).slice(0, 2), frozenBefore);
    const difference = maxRelativeDifference(layerWeights(model).slice(2), layerWeights(reference).slice(2));
    assert.ok(difference <= TOLERANCE, `relative difference ${difference}`);
    acc.dispose();
    [model, reference].forEach((m) => m.dispose());
  });
});

describe('AccumulatingOptimizer: what model.fit logs at epoch end describes the weights after the epoch', () => {
  it('val_loss equals that of a plain big-batch fit (80 samples: windows of 64 and 16)', async () => {
    const data = batch(80);
    const validation = batch(32, 99);
    const fit = async (optimizer: tf.Optimizer, batchSize: number, callbacks: tf.CustomCallback[]) => {
      const model = denseModel();
      model.compile({ optimizer, loss: 'meanSquaredError' });
      const history = await model.fit(data.xs, data.ys, { batchSize, epochs: 3, shuffle: false, verbose: 0, validationData: [validation.xs, validation.ys], callbacks });
      const evaluated = (model.evaluate(validation.xs, validation.ys) as tf.Scalar);
      const last = evaluated.dataSync()[0];
      evaluated.dispose();
      model.dispose();
      return { valLoss: history.history.val_loss as number[], last };
    };
    const reference = await fit(tf.train.sgd(0.1), 64, []);
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const result = await fit(optimizer, 16, [optimizer.callback()]);
    result.valLoss.forEach((v, i) => assert.ok(Math.abs(v - reference.valLoss[i]) <= 1e-5 * Math.abs(reference.valLoss[i]), `epoch ${i}: ${v} vs ${reference.valLoss[i]}`));
    assert.ok(Math.abs(result.valLoss[2] - result.last) <= 1e-6 * result.last, 'the last val_loss is not that of the final weights');
    assert.equal(optimizer.iterations, 6);
    assert.equal(optimizer.accumulator.epoch, 3);
    optimizer.dispose();
  });

  it('fitDataset of known size: the same; of unknown size with validation: a named error before training', async () => {
    const data = batch(80);
    const validation = batch(32, 99);
    const xs = tf.data.array(tf.unstack(data.xs));
    const ys = tf.data.array(tf.unstack(data.ys));
    const dataset = tf.data.zip({ xs, ys }).batch(16);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const history = await model.fitDataset(dataset, { epochs: 2, verbose: 0, validationData: [validation.xs, validation.ys], callbacks: [optimizer.callback()] });
    const reference = denseModel();
    reference.compile({ optimizer: tf.train.sgd(0.1), loss: 'meanSquaredError' });
    const refHistory = await reference.fit(data.xs, data.ys, { batchSize: 64, epochs: 2, shuffle: false, verbose: 0, validationData: [validation.xs, validation.ys] });
    (history.history.val_loss as number[]).forEach((v, i) => assert.ok(Math.abs(v - (refHistory.history.val_loss[i] as number)) <= 1e-5 * v, `epoch ${i}`));
    const unknown = tf.data.generator(function* () {
      for (let i = 0; i < 5; i++) yield { xs: data.xs.slice(16 * i, 16), ys: data.ys.slice(16 * i, 16) };
    });
    await assert.rejects(
      model.fitDataset(unknown, { epochs: 1, verbose: 0, validationData: [validation.xs, validation.ys], callbacks: [optimizer.callback()] }),
      /number of batches per epoch must be known/,
    );
    optimizer.dispose();
    [model, reference].forEach((m) => m.dispose());
  });
});

describe('AccumulatingOptimizer: every batch announced by its own callback, one model at a time (issue 32, items 4, 5 and 14)', () => {
  const fitArgs = { batchSize: 4, shuffle: false, verbose: 0 as const };

  it('refuses a batch without its callback by name (fit, fitDataset, trainOnBatch), changing nothing', async () => {
    const data = batch(16);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: epochSchedule({ 0: 2, 1: 1 }) });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const weights = weightsOf(model);
    // Item 4: without the callback the epoch never advanced (6 updates instead of 14); item 14: fitDataset made 31 updates, trainOnBatch could not weigh batch sizes.
    await assert.rejects(model.fit(data.xs, data.ys, { ...fitArgs, epochs: 3 }), MissingCallbackError);
    const dataset = tf.data.zip({ xs: tf.data.array(tf.unstack(data.xs)), ys: tf.data.array(tf.unstack(data.ys)) }).batch(4);
    await assert.rejects(model.fitDataset(dataset, { epochs: 1, verbose: 0 }), MissingCallbackError);
    await assert.rejects(model.trainOnBatch(data.xs, data.ys), /trainOnBatch and optimizer.minimize cannot tell it/);
    const tensors = tf.memory().numTensors;
    assert.throws(() => optimizer.applyGradients({}), MissingCallbackError);
    assert.equal(tf.memory().numTensors, tensors);
    assertBitIdentical(weightsOf(model), weights);
    assert.deepEqual([optimizer.accumulator.microStep, optimizer.iterations, optimizer.accumulator.epoch], [0, 0, 0]);
    optimizer.dispose();
    model.dispose();
  });

  it('advances an epochSchedule by the fit\'s epochs, from initialEpoch on (4 samples per batch, 4 batches: 2 + 4 + 4 updates)', async () => {
    const data = batch(16);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: epochSchedule({ 0: 2, 1: 1 }) });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    await model.fit(data.xs, data.ys, { ...fitArgs, epochs: 3, callbacks: [optimizer.callback()] });
    assert.deepEqual([optimizer.iterations, optimizer.accumulator.epoch], [10, 3]);
    const resumed = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: epochSchedule({ 0: 2, 1: 1 }) });
    model.compile({ optimizer: resumed, loss: 'meanSquaredError' });
    await model.fit(data.xs, data.ys, { ...fitArgs, epochs: 3, initialEpoch: 2, callbacks: [resumed.callback()] });
    assert.deepEqual([resumed.iterations, resumed.accumulator.epoch], [4, 3], 'epoch 2 accumulates 1 batch per update');
    [optimizer, resumed].forEach((o) => o.dispose());
    model.dispose();
  });

  it('refuses another optimizer\'s callback, and an AccumulatingOptimizer inside an accumulator, by name', async () => {
    const data = batch(8);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2 });
    const other = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    await assert.rejects(model.fit(data.xs, data.ys, { ...fitArgs, callbacks: [other.callback()] }), /callbacks must be the callback of the optimizer the model was compiled with/);
    assert.equal(optimizer.accumulator.microStep, 0);
    assertThrowsMentioning(() => new GradientAccumulator({ optimizer, accumulationSteps: 2 }), 'optimizer must be an optimizer that applies its gradients', 'an AccumulatingOptimizer');
    assertThrowsMentioning(() => new AccumulatingOptimizer({ optimizer: other, accumulationSteps: 2 }), 'only accumulates');
    [optimizer, other].forEach((o) => o.dispose());
    model.dispose();
  });

  it('refuses to fit a second model while the first one\'s window is open; after flush() both train exactly', async () => {
    const data = batch(16);
    const [a, b] = [denseModel(1), denseModel(2)];
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    a.compile({ optimizer, loss: 'meanSquaredError' });
    b.compile({ optimizer, loss: 'meanSquaredError' });
    // A's fit stops after 2 of its window's 4 batches (a callback throws): those 2 stay pending.
    const stop = new tf.CustomCallback({ onBatchEnd: async (i) => { if (i === 1) throw new Error('stopped'); } });
    await assert.rejects(a.fit(data.xs, data.ys, { ...fitArgs, callbacks: [optimizer.callback(), stop] }), /stopped/);
    assert.equal(optimizer.accumulator.pendingMicroBatches, 2);
    const weightsB = weightsOf(b);
    await assert.rejects(b.fit(data.xs, data.ys, { ...fitArgs, callbacks: [optimizer.callback()] }), /the open window holds sums for "dense_Dense\d+\/kernel", which is no weight of the model being fit/);
    assertBitIdentical(weightsOf(b), weightsB);
    optimizer.flush();
    await b.fit(data.xs, data.ys, { ...fitArgs, callbacks: [optimizer.callback()] });
    const reference = denseModel(2);
    reference.compile({ optimizer: tf.train.sgd(0.1), loss: 'meanSquaredError' });
    await reference.fit(data.xs, data.ys, { ...fitArgs, batchSize: 16 });
    assert.ok(maxRelativeDifference(weightsOf(b), weightsOf(reference)) <= TOLERANCE);
    optimizer.dispose();
    [a, b, reference].forEach((m) => m.dispose());
  });
});

describe('AccumulatingOptimizer: finite gradients near float32\'s largest value (issue 32, item 11)', () => {
  it('are averaged and clipped, not called non-finite: batches of 4 with mean gradient −3e38 step w by exactly the rate', async () => {
    // y = w·x with w = 0 and x = 1, loss = −3e38 · mean(y): value 0, gradient −3e38 per batch.
    // Summed over 8 samples that is −2.4e39, beyond float32; the window holds it times 2^−3.
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [1], useBias: false, kernelInitializer: 'zeros' })] });
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.25), accumulationSteps: 2, clipNorm: 1 });
    model.compile({ optimizer, loss: (_: tf.Tensor, y: tf.Tensor) => tf.mul(tf.mean(y), -3e38) });
    const [xs, ys] = [tf.ones([8, 1]), tf.zeros([8, 1])];
    await model.fit(xs, ys, { batchSize: 4, epochs: 1, shuffle: false, verbose: 0, callbacks: [optimizer.callback()] });
    assert.deepEqual([optimizer.iterations, optimizer.lastStep?.gradientNorm], [1, Math.fround(3e38)]);
    assert.equal(model.trainableWeights[0].read().dataSync()[0], 0.25); // 0 − 0.25 · (−1)
    optimizer.dispose();
    model.dispose();
    tf.dispose([xs, ys]);
  });
});
