import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';
import { isStateWeight, stateFromWeights, stateToWeights } from '../../src/core/modelState';
import { epochSchedule } from '../../src/core/schedule';
import { AccumulatorCore, AccumulatorState, ACCUMULATOR_STATE_FORMAT, emptyWindow, initialCore } from '../../src/core/state';
import { assertBitIdentical, assertThrowsMentioning, batch, denseModel, saveToMemory, weightsOf } from '../helpers';

/**
 * `model.save(…, { includeOptimizer: true })` carries the whole accumulator state
 * (modelState.ts), and `tf.loadLayersModel` + `fit` continues bit for bit.
 */

const load = (artifacts: tf.io.ModelArtifacts) => tf.loadLayersModel(tf.io.fromMemory(artifacts));
/** The state's tensors without their variables' names (which differ between a model and its loaded copy). */
const unnamed = (s: AccumulatorState) => ({ ...s, window: { ...s.window, touched: s.window.touched.length }, accumulators: s.accumulators.map((a) => a.values), ema: s.ema?.map((e) => e?.values ?? null) });

describe('stateToWeights / stateFromWeights', () => {
  const state = (): AccumulatorState => ({
    format: ACCUMULATOR_STATE_FORMAT,
    averaging: 'per-sample',
    ...initialCore(),
    counters: { ...initialCore().counters, microStep: 3, epoch: 1 },
    window: { ...emptyWindow(), size: 4, scale: 3, microBatches: 3, weight: 3, unit: 'samples', touched: ['a'], lossSum: 1.5 },
    recentNorms: [0.25],
    // 6e38 is beyond float32; held times 2^-3 it fits, and comes back exactly.
    accumulators: [{ name: 'a', shape: [2], dtype: 'float32', values: [Math.fround(7.5e37) * 8, 0.5] }],
    optimizer: null,
    optimizerInternals: null,
    ema: [{ name: 'a', shape: [2], dtype: 'float32', values: [1, 2] }],
  });

  it('round-trips a state exactly, sums beyond float32 included, under the names given', async () => {
    const weights = stateToWeights(state(), (n) => `layer/${n}`);
    assert.ok(weights.every((w) => isStateWeight(w.name)));
    const back = await stateFromWeights('test', weights);
    assert.deepEqual(back, { ...state(), window: { ...state().window, touched: ['layer/a'] }, accumulators: [{ ...state().accumulators[0], name: 'layer/a' }], ema: [{ ...state().ema![0]!, name: 'layer/a' }] });
    tf.dispose(weights.map((w) => w.tensor));
  });

  it('finds no state in an older model, and names what is missing or malformed', async () => {
    assert.equal(await stateFromWeights('test', []), null);
    const weights = stateToWeights(state(), (n) => n);
    await assert.rejects(stateFromWeights('test', weights.slice(0, 1)), /a weight "tfjs-accumulate\/accumulators\/a"/);
    const text = tf.scalar('{', 'string');
    await assert.rejects(stateFromWeights('test', [{ name: 'tfjs-accumulate/state', tensor: text }]), /not JSON/);
    tf.dispose([text, ...weights.map((w) => w.tensor)]);
  });
});

describe('AccumulatingOptimizer: model.save mid-window, tf.loadLayersModel, fit (issue 32, acceptance and item 1)', () => {
  it('equals the unbroken fit bit for bit, with EMA, an epochSchedule, skipLargeUpdates and a pending window', async () => {
    const data = batch(40);
    // Batch 8, right after the save, has targets 1000 times larger: its window is skipped only if
    // the norm history survived the save (a loaded accumulator without history would apply it).
    const ys = tf.tidy(() => tf.concat([data.ys.slice(0, 32), tf.mul(data.ys.slice(32, 4), 1000), data.ys.slice(36)]));
    const make = () => new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: epochSchedule({ 0: 3, 1: 2 }), ema: { decay: 0.9 }, skipLargeUpdates: { factor: 3, history: 2 } });
    const fit = { batchSize: 4, shuffle: false, verbose: 0 as const };
    const unbroken = denseModel();
    const optimizer = make();
    unbroken.compile({ optimizer, loss: 'meanSquaredError' });
    let artifacts: tf.io.ModelArtifacts | null = null;
    let atSave: AccumulatorState | null = null;
    // After batch 7 of epoch 0: 2 windows of 3 applied, batches 6 and 7 pending in the third.
    const saveMidWindow = new tf.CustomCallback({
      onBatchEnd: async (b) => {
        if (b !== 7 || artifacts !== null) return;
        atSave = await optimizer.accumulator.getState();
        artifacts = await saveToMemory(unbroken);
      },
    });
    await unbroken.fit(data.xs, ys, { ...fit, epochs: 2, callbacks: [optimizer.callback(), saveMidWindow] });
    assert.ok(optimizer.accumulator.skippedLargeUpdates >= 1, 'the spike was skipped in the unbroken run');
    const saved = atSave as unknown as AccumulatorState;
    assert.deepEqual([saved.counters.updateStep, saved.window.microBatches, saved.recentNorms.length, saved.ema?.every((e) => e !== null)], [2, 2, 2, true]);

    const loaded = await load(artifacts as unknown as tf.io.ModelArtifacts);
    const restored = loaded.optimizer as AccumulatingOptimizer;
    let atBind: AccumulatorCore | null = null;
    const peek = new tf.CustomCallback({ onTrainBegin: async () => { atBind ??= restored.accumulator.state; } });
    // The rest of epoch 0 (batches 8 and 9), then epoch 1, as a resumed run goes on.
    await loaded.fit(data.xs.slice(32), ys.slice(32), { ...fit, epochs: 1, callbacks: [restored.callback(), peek] });
    const bound = atBind as unknown as AccumulatorCore;
    assert.deepEqual({ ...bound, window: { ...bound.window, touched: [] } }, { counters: saved.counters, window: { ...saved.window, touched: [] }, recentNorms: saved.recentNorms }, 'the loaded optimizer resumes the saved state');
    await loaded.fit(data.xs, ys, { ...fit, epochs: 2, initialEpoch: 1, callbacks: [restored.callback()] });

    assertBitIdentical(weightsOf(loaded), weightsOf(unbroken));
    assert.deepEqual(unnamed(await restored.accumulator.getState()), unnamed(await optimizer.accumulator.getState()), 'EMA, counters, norms and optimizer slots');
    assert.deepEqual([restored.iterations, restored.accumulator.epoch], [optimizer.iterations, 2]);
    [optimizer, restored].forEach((o) => o.dispose());
    [unbroken, loaded].forEach((m) => m.dispose());
    tf.dispose([data.xs, data.ys, ys]);
  });

  it('leaks nothing over repeated saves, loads and fits', async () => {
    const data = batch(12);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 2, ema: { decay: 0.5 } });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const cycle = async () => {
      await model.fit(data.xs, data.ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [optimizer.callback()] });
      const loaded = await load(await saveToMemory(model));
      const o = loaded.optimizer as AccumulatingOptimizer;
      await loaded.fit(data.xs, data.ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [o.callback()] });
      o.dispose();
      loaded.dispose();
    };
    await cycle();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await cycle();
    assert.equal(tf.memory().numTensors, before);
    optimizer.dispose();
    model.dispose();
    tf.dispose([data.xs, data.ys]);
  });

  it('refuses a saved state that names weights the fitting model lacks, by name, and changes nothing', async () => {
    const data = batch(8);
    const model = denseModel();
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    await model.fit(data.xs, data.ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [optimizer.callback()] });
    const artifacts = await saveToMemory(model);
    const loaded = await load(artifacts);
    const other = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [10] })] });
    const restored = loaded.optimizer as AccumulatingOptimizer;
    other.compile({ optimizer: restored, loss: 'meanSquaredError' });
    const weights = weightsOf(other);
    await assert.rejects(other.fit(data.xs, data.ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [restored.callback()] }), /a model with the weight "dense_Dense\d+\/kernel" that the saved accumulator state trains/);
    assertBitIdentical(weightsOf(other), weights);
    assert.equal(restored.accumulator.microStep, 0);
    [optimizer, restored].forEach((o) => o.dispose());
    [model, loaded, other].forEach((m) => m.dispose());
    tf.dispose([data.xs, data.ys]);
  });
});

describe('AccumulatingOptimizer: save and load with the model', () => {
  const roundTrip = async (model: tf.LayersModel) => load(await saveToMemory(model));

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
    const slots = async (o: AccumulatingOptimizer) => (await o.inner.getWeights()).map((w) => [w.name.replace(/^.*?(\/[mv])$/, '$1'), Array.from(w.tensor.dataSync())]);
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
    const loaded = await load(await saveToMemory(model));
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
