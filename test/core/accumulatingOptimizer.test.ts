import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';
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
        const weights = await fitWeights(optimizer, data, 16, { shuffle });
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
    // Without the callback fit cannot tell batch sizes apart, so each batch counts once.
    const without = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
    const inexact = await fitWeights(without, data, 16);
    assert.ok(maxRelativeDifference(inexact, reference) > 100 * TOLERANCE);
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

describe('AccumulatingOptimizer: save and load with the model', () => {
  /** Saves to memory with the optimizer and loads it back. */
  async function roundTrip(model: tf.LayersModel): Promise<tf.LayersModel> {
    let artifacts: tf.io.ModelArtifacts | null = null;
    await model.save(tf.io.withSaveHandler(async (a) => {
      artifacts = a;
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    }), { includeOptimizer: true });
    return tf.loadLayersModel(tf.io.fromMemory(artifacts as unknown as tf.io.ModelArtifacts));
  }

  it('restores the wrapper, its accumulationSteps, options and the wrapped Adam with its slots; training continues identically', async () => {
    const data = batch(64);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 4, clipNorm: 2, averaging: 'per-micro-batch', nonFinite: 'skip-window' });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    await model.fit(data.xs, data.ys, { batchSize: 16, epochs: 2, shuffle: false, verbose: 0, callbacks: [optimizer.callback()] });
    const loaded = await roundTrip(model);
    const restored = loaded.optimizer as AccumulatingOptimizer;
    assert.ok(restored instanceof AccumulatingOptimizer, `got ${restored?.getClassName?.()}`);
    assert.equal(restored.accumulator.accumulationSteps, 4);
    assert.equal(restored.accumulator.clipNorm, 2);
    assert.equal(restored.accumulator.averaging, 'per-micro-batch');
    assert.equal(restored.accumulator.nonFinite, 'skip-window');
    assert.deepEqual(restored.inner.getConfig(), optimizer.inner.getConfig());
    const slots = async (o: tf.Optimizer) => (await o.getWeights()).map((w) => [w.name.replace(/^.*?(\/[mv])$/, '$1'), Array.from(w.tensor.dataSync())]);
    assert.deepEqual(await slots(restored), await slots(optimizer));
    for (const m of [model, loaded]) {
      await m.fit(data.xs, data.ys, { batchSize: 16, epochs: 1, shuffle: false, verbose: 0, callbacks: [(m.optimizer as AccumulatingOptimizer).callback()] });
    }
    // Bit for bit (issue 23, item 17): Adam's β₁ᵗ and β₂ᵗ are saved beside its slots; tfjs's own
    // Adam.setWeights would recompute them with pow and land about 1e-7 away.
    assertBitIdentical(weightsOf(loaded), weightsOf(model));
    optimizer.dispose();
    restored.dispose();
    [model, loaded].forEach((m) => m.dispose());
  });

  it('with Adamax, whose tfjs getWeights is not implemented, save and load work and training continues bit for bit', async () => {
    const data = batch(32);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adamax(0.01), accumulationSteps: 2 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    await model.fit(data.xs, data.ys, { batchSize: 8, epochs: 2, shuffle: false, verbose: 0, callbacks: [optimizer.callback()] });
    const loaded = await roundTrip(model);
    for (const m of [model, loaded]) {
      await m.fit(data.xs, data.ys, { batchSize: 8, epochs: 1, shuffle: false, verbose: 0, callbacks: [(m.optimizer as AccumulatingOptimizer).callback()] });
    }
    assertBitIdentical(weightsOf(loaded), weightsOf(model));
    optimizer.dispose();
    (loaded.optimizer as AccumulatingOptimizer).dispose();
    [model, loaded].forEach((m) => m.dispose());
    tf.dispose([data.xs, data.ys]);
  });

  it('saves an epochSchedule as its table; refuses to save any other schedule function, by name', async () => {
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: epochSchedule({ 0: 4, 2: 2 }) });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const loaded = await roundTrip(model);
    const steps = (loaded.optimizer as AccumulatingOptimizer).accumulator.accumulationSteps;
    assert.equal(typeof steps, 'function');
    assert.deepEqual([0, 1, 2, 5].map((epoch) => (steps as (p: { epoch: number; updateStep: number }) => number)({ epoch, updateStep: 0 })), [4, 4, 2, 2]);
    const custom = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: () => 3 });
    assertThrowsMentioning(() => custom.getConfig(), 'schedule function cannot be saved', 'epochSchedule');
    [optimizer, custom, loaded.optimizer].forEach((o) => o.dispose());
    [model, loaded].forEach((m) => m.dispose());
  });
});

describe('AccumulatingOptimizer: the training options through model.fit and save/load', () => {
  it('saves skipLargeUpdates, weightDecay and ema; refuses a learningRate function by name', async () => {
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 2, skipLargeUpdates: { maxNorm: 50 }, weightDecay: { rate: 0.01 }, ema: { decay: 0.9 } });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const data = batch(32);
    await model.fit(data.xs, data.ys, { batchSize: 8, epochs: 1, shuffle: false, verbose: 0, callbacks: [optimizer.callback()] });
    assert.equal(optimizer.iterations, 2);
    let artifacts: tf.io.ModelArtifacts | null = null;
    await model.save(tf.io.withSaveHandler(async (a) => {
      artifacts = a;
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    }), { includeOptimizer: true });
    const loaded = await tf.loadLayersModel(tf.io.fromMemory(artifacts as unknown as tf.io.ModelArtifacts));
    const options = (loaded.optimizer as AccumulatingOptimizer).accumulator.options;
    assert.deepEqual(options.skipLargeUpdates, { maxNorm: 50, factor: null, history: 20 });
    assert.equal(options.weightDecay?.rate, 0.01);
    assert.deepEqual(options.ema, { decay: 0.9 });
    const scheduled = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2, learningRate: () => 0.1 });
    assertThrowsMentioning(() => scheduled.getConfig(), 'learningRate schedule', 'cannot be saved');
    [optimizer, scheduled, loaded.optimizer].forEach((o) => o.dispose());
    [model, loaded].forEach((m) => m.dispose());
  });
});
