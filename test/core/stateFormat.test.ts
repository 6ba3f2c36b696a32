import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';
import { ACCUMULATOR_STATE_FORMAT, AccumulatorState } from '../../src/core/state';
import { checkState } from '../../src/core/stateFormat';
import { makeRun } from '../fixtures/resumeRun';
import { assertBitIdentical, assertThrowsMentioning, batch, denseModel, weightsOf } from '../helpers';

/**
 * What older versions saved still loads. test/fixtures/states/e3882cf.json was written by the
 * library at e3882cf (before issue 32): a `GradientAccumulator` state in format @2 stopped
 * mid-window, and a model saved with an `AccumulatingOptimizer` (Adam, EMA) after 2 epochs.
 */

const saved = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'states', 'e3882cf.json'), 'utf8')) as {
  resume: { weights: number[][]; state: AccumulatorState };
  model: { artifacts: tf.io.ModelArtifacts & { weightData: string }; weights: number[][] };
};

const toWeights = (w: number[][]) => w.map((values) => Float32Array.from(values));

describe('states saved by e3882cf', () => {
  it('a GradientAccumulator state @2 mid-window resumes, and the run ends bit for bit as an unbroken one', async () => {
    assert.equal((saved.resume.state as { format: string }).format, 'tfjs-accumulate/state@2');
    const unbroken = makeRun();
    for (let i = 0; i < unbroken.microSteps; i++) unbroken.microStep(i);
    const expected = weightsOf(unbroken.model);
    // The same model (its variables renamed by tfjs in this process: matched by order).
    const resumed = makeRun();
    resumed.model.weights.forEach((w, i) => w.write(tf.tensor(saved.resume.weights[i], w.read().shape)));
    await resumed.accumulator.setState(saved.resume.state, { matchBy: 'order' });
    assert.deepEqual([resumed.accumulator.microStep, resumed.accumulator.pendingMicroBatches, resumed.accumulator.state.window.scale], [6, 2, 0]);
    for (let i = 6; i < resumed.microSteps; i++) resumed.microStep(i);
    assertBitIdentical(weightsOf(resumed.model), expected);
    for (const run of [unbroken, resumed]) {
      run.accumulator.dispose();
      run.model.dispose();
    }
  });

  it('a model saved with an AccumulatingOptimizer loads and goes on bit for bit; the window\'s scale changed no bit of its training', async () => {
    const data = batch(64);
    const fit = (model: tf.LayersModel, epochs: number) => model.fit(data.xs, data.ys, { batchSize: 16, epochs, shuffle: false, verbose: 0, callbacks: [(model.optimizer as AccumulatingOptimizer).callback()] });
    const model = denseModel();
    model.compile({ optimizer: new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 3, ema: { decay: 0.9 } }), loss: 'meanSquaredError' });
    await fit(model, 2);
    // The same 2 epochs as e3882cf trained them, whose sums were not scaled.
    assertBitIdentical(weightsOf(model), toWeights(saved.model.weights));
    const { weightData, ...rest } = saved.model.artifacts;
    const buffer = Buffer.from(weightData, 'base64');
    const loaded = await tf.loadLayersModel(tf.io.fromMemory({ ...rest, weightData: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) }));
    assert.ok(loaded.optimizer instanceof AccumulatingOptimizer);
    await fit(loaded, 1);
    await fit(model, 1);
    assertBitIdentical(weightsOf(loaded), weightsOf(model));
    [model, loaded].forEach((m) => {
      (m.optimizer as AccumulatingOptimizer).dispose();
      m.dispose();
    });
    tf.dispose([data.xs, data.ys]);
  });
});

describe('checkState', () => {
  const state = (): AccumulatorState => ({ ...JSON.parse(JSON.stringify(saved.resume.state)), format: ACCUMULATOR_STATE_FORMAT, window: { ...saved.resume.state.window, scale: 6 } });

  it('upgrades @2 to the current format with scale 0, and keeps @3\'s scale', () => {
    assert.equal(checkState('test', saved.resume.state, 'per-sample').window.scale, 0);
    assert.equal(checkState('test', state(), 'per-sample').window.scale, 6);
  });

  it('refuses a scale that is not a whole number from 0 to 64, one without an open window, and sums beyond float32 at the scale', () => {
    for (const bad of [-1, 1.5, 65, '6']) {
      assertThrowsMentioning(() => checkState('test', { ...state(), window: { ...state().window, scale: bad } }, 'per-sample'), 'state.window.scale', 'a whole number from 0 to 64');
    }
    const empty = { ...state(), counters: { ...state().counters }, window: { size: null, scale: 2, microBatches: 0, weight: 0, unit: null, poisoned: false, touched: [], lossSum: 0 } };
    assertThrowsMentioning(() => checkState('test', empty, 'per-sample'), 'state.window.scale', '0 while no window is open');
    const huge = state();
    huge.window.scale = 0;
    huge.accumulators[0].values[0] = 4e38;
    assertThrowsMentioning(() => checkState('test', huge, 'per-sample'), 'values[0]', "float32's range at window scale 0");
    // Negative case: at scale 1 the same sum fits.
    huge.window.scale = 1;
    assert.equal(checkState('test', huge, 'per-sample').accumulators[0].values[0], 4e38);
  });
});
