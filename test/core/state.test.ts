import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { AccumulatorState } from '../../src/core/state';
import { renameOptimizerWeight } from '../../src/core/stateFormat';
import { makeRun } from '../fixtures/resumeRun';
import { assertBitIdentical, assertThrowsMentioning, weightsOf } from '../helpers';

/** The reference: all micro-steps without interruption. */
function uninterrupted(): Float32Array[] {
  const run = makeRun();
  for (let i = 0; i < run.microSteps; i++) run.microStep(i);
  const weights = weightsOf(run.model);
  run.accumulator.dispose();
  run.model.dispose();
  return weights;
}

describe('getState / setState: resuming mid-window', () => {
  it('stops after micro-step 6, resumes in a new process, and matches bit for bit', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'resume-')), 'checkpoint.json');
    const child = join(__dirname, '..', 'fixtures', 'resumeChild.ts');
    for (const phase of ['first', 'second']) {
      execFileSync(process.execPath, ['--import', 'tsx', child, phase, file], { stdio: ['ignore', 'ignore', 'pipe'] });
    }
    const resumed = (JSON.parse(readFileSync(file, 'utf8')).weights as number[][]).map((w) => Float32Array.from(w));
    assertBitIdentical(resumed, uninterrupted());
  });

  it('resumes in the same process into a fresh model whose variables got new names (matchBy "order")', async () => {
    const reference = uninterrupted();
    const first = makeRun();
    for (let i = 0; i < 6; i++) first.microStep(i);
    const saved = JSON.stringify({ weights: weightsOf(first.model).map((w) => Array.from(w)), state: await first.accumulator.getState() });
    assert.equal(first.accumulator.pendingMicroBatches, 2, 'the run was stopped mid-window');
    first.accumulator.dispose();
    first.model.dispose();

    const second = makeRun();
    const { weights, state } = JSON.parse(saved);
    second.model.weights.forEach((w, i) => w.write(tf.tensor(weights[i], w.read().shape)));
    await assert.rejects(second.accumulator.setState(state), /matchBy: "order"/);
    await second.accumulator.setState(state, { matchBy: 'order' });
    assert.deepEqual([second.accumulator.microStep, second.accumulator.updateStep, second.accumulator.pendingMicroBatches], [6, 1, 2]);
    for (let i = 6; i < second.microSteps; i++) second.microStep(i);
    assertBitIdentical(weightsOf(second.model), reference);
    second.accumulator.dispose();
    second.model.dispose();
  });

  it('round-trips through JSON unchanged', async () => {
    const run = makeRun();
    for (let i = 0; i < 3; i++) run.microStep(i);
    const state = await run.accumulator.getState();
    await run.accumulator.setState(JSON.parse(JSON.stringify(state)));
    assert.deepEqual(await run.accumulator.getState(), state);
    run.accumulator.dispose();
    run.model.dispose();
  });

  it('rejects a missing or mis-shaped accumulator and leaves everything as it was', async () => {
    const run = makeRun();
    for (let i = 0; i < 3; i++) run.microStep(i);
    const state = await run.accumulator.getState();
    const tensors = tf.memory().numTensors;
    const broken: [(s: AccumulatorState) => void, ...string[]][] = [
      [(s) => s.accumulators.pop(), 'state.accumulators', 'has no entry'],
      [(s) => (s.accumulators[0].name = 'elsewhere/kernel'), 'state.accumulators', '"hidden/kernel'],
      [(s) => { s.accumulators[1].shape = [4]; s.accumulators[1].values = [0, 0, 0, 0]; }, 'shape', '[8]'],
      [(s) => (s.accumulators[1].values = [1]), "(its shape's size)"],
      [(s) => ((s as { format: string }).format = 'other'), 'state', 'getState()'],
      [(s) => (s.counters.updateStep = -1), 'state.counters.updateStep'],
      [(s) => (s.window.microBatches = 9), 'state.window'],
      [(s) => ((s as { averaging: string }).averaging = 'per-micro-batch'), 'state.averaging'],
    ];
    for (const [breakIt, ...fragments] of broken) {
      const copy = JSON.parse(JSON.stringify(state)) as AccumulatorState;
      breakIt(copy);
      await assert.rejects(run.accumulator.setState(copy), (error: Error) => {
        for (const f of fragments) assert.ok(error.message.includes(f), `"${error.message}" does not mention "${f}"`);
        return true;
      });
    }
    assert.deepEqual(await run.accumulator.getState(), state);
    assert.equal(tf.memory().numTensors, tensors);
    await assert.rejects(run.accumulator.setState(state, { matchBy: 'index' as never }), /matchBy/);
    run.accumulator.dispose();
    run.model.dispose();
  });

  it('does not leak when state is restored repeatedly into a stateful optimizer', async () => {
    const run = makeRun();
    for (let i = 0; i < 5; i++) run.microStep(i);
    const state = await run.accumulator.getState();
    await run.accumulator.setState(state);
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) await run.accumulator.setState(state);
    assert.equal(tf.memory().numTensors, before);
    run.accumulator.dispose();
    run.model.dispose();
  });

  it('renames optimizer slots to the new variable names', () => {
    const rename = new Map([['dense_Dense1/kernel', 'dense_Dense7/kernel']]);
    assert.equal(renameOptimizerWeight('dense_Dense1/kernel/m', rename), 'dense_Dense7/kernel/m');
    assert.equal(renameOptimizerWeight('iter', rename), 'iter');
  });

  it('accepts a state taken before any micro-step', async () => {
    const w = tf.variable(tf.zeros([3]));
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [w] });
    const state = await acc.getState();
    assert.deepEqual(state.accumulators, [{ name: w.name, shape: [3], dtype: 'float32', values: [0, 0, 0] }]);
    await acc.setState(state);
    acc.dispose();
    w.dispose();
  });
});

describe('setState onto another model built in the same process (issue 32, item 13)', () => {
  /** y = k·x with k = 1, x = 1, target 0: the mean loss k² has gradient 2. */
  const scalarModel = () => tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [1], useBias: false, kernelInitializer: 'ones' })] });
  const kernel = (m: tf.LayersModel) => m.trainableWeights[0].read().dataSync()[0];
  const lossOf = (m: tf.LayersModel) => () => tf.losses.meanSquaredError(tf.zeros([1, 1]), m.apply(tf.ones([1, 1])) as tf.Tensor) as tf.Scalar;

  it('by name, stepping the other model is refused and neither moves; by order (no varList) it trains that model alone: 1 → 0.2', async () => {
    const a = scalarModel();
    const accA = new GradientAccumulator({ optimizer: tf.train.sgd(0.4), accumulationSteps: 2 });
    accA.step(lossOf(a));
    const state = await accA.getState();
    const b = scalarModel();
    // The default matches by name: the state names a's kernel, which is alive in this process.
    const byName = new GradientAccumulator({ optimizer: tf.train.sgd(0.4), accumulationSteps: 2 });
    await byName.setState(state);
    assertThrowsMentioning(() => byName.step(lossOf(b)), 'trains none of the variables', 'matchBy: "order"');
    assert.deepEqual([kernel(a), kernel(b), byName.microStep], [1, 1, 1]);
    // By order: the registered trainable variables other than the saved ones, b's.
    const byOrder = new GradientAccumulator({ optimizer: tf.train.sgd(0.4), accumulationSteps: 2 });
    await byOrder.setState(state, { matchBy: 'order' });
    assert.equal(byOrder.step(lossOf(b)).applied, true);
    // The window's two gradients 2 and 2 average to 2: k = 1 − 0.4 · 2.
    assert.deepEqual([kernel(a), kernel(b)], [1, Math.fround(1 - Math.fround(0.4) * 2)]);
    [accA, byName, byOrder].forEach((acc) => acc.dispose());
    [a, b].forEach((m) => m.dispose());
  });
});
