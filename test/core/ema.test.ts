import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { finalizeAverages, startAverages, swapAverages } from '../../src/core/ema';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { assertBitIdentical, assertNoLeak, assertThrowsMentioning, assertUntouched, denseNet, samples, untouched, weightsOf } from '../helpers';

/** A scalar weight whose loss `w · g` has gradient exactly g; SGD(1) then moves it by −g per update. */
function scalarRun(decay: number, initial = 1) {
  const w = tf.variable(tf.scalar(initial));
  const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [w], ema: { decay } });
  const update = (g: number) => acc.step(() => tf.mul(w, g) as tf.Scalar);
  const value = () => w.dataSync()[0];
  const close = () => {
    acc.dispose();
    w.dispose();
  };
  return { w, acc, update, value, close };
}

/** A small model trained for two updates with an EMA, for the swap's interplay with the other calls. */
async function trainedModel() {
  const model = denseNet(3, 2, 5);
  const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.05), accumulationSteps: 2, varList: model.trainableWeights, ema: { decay: 0.5 } });
  const data = samples(4, 3, 9);
  const step = () => acc.step(() => tf.squeeze(tf.squaredDifference(model.apply(data.xs) as tf.Tensor, data.ys), [1]));
  for (let i = 0; i < 5; i++) step(); // two updates and one micro-batch of an open window
  const variables = model.trainableWeights.map((w) => w.read() as tf.Variable);
  const close = () => {
    acc.dispose();
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  };
  return { model, acc, step, variables, close };
}

describe('ema.ts: the pure swap, start and finalize', () => {
  it('swapAverages swaps twice back to the bit; startAverages keeps existing shadows; finalizeAverages writes them', () => {
    const v = tf.variable(tf.tensor([1, 2]));
    const shadow = tf.variable(tf.tensor([3, 4]), false);
    swapAverages([{ variable: v, ema: shadow }]);
    assert.deepEqual([...v.dataSync(), ...shadow.dataSync()], [3, 4, 1, 2]);
    swapAverages([{ variable: v, ema: shadow }]);
    assert.deepEqual([...v.dataSync(), ...shadow.dataSync()], [1, 2, 3, 4]);
    const [kept, fresh] = startAverages([v, v], [shadow, null]);
    assert.equal(kept, shadow);
    assert.deepEqual([...fresh.dataSync()], [1, 2], 'a new average starts from the variable now');
    finalizeAverages([{ variable: v, ema: shadow }]);
    assert.deepEqual([...v.dataSync()], [3, 4]);
    tf.dispose([v, shadow, fresh]);
  });
});

describe('the EMA starts from the weights after the first update, as Keras and torch AveragedModel (issue 23, item 15)', () => {
  it('decay 0.999: after one update the average is the updated weight, not 0.999 × the initial one', async () => {
    const run = scalarRun(0.999);
    assert.equal(await run.acc.withAveragedWeights(() => run.value()), 1, 'before any update a weight is its own average');
    run.update(1); // w: 1 → 0
    assert.equal(await run.acc.withAveragedWeights(() => run.value()), 0);
    run.update(1); // w: 0 → −1; average 0.999 · 0 + 0.001 · (−1)
    assert.equal(await run.acc.withAveragedWeights(() => run.value()), Math.fround(Math.fround(0.999 * 0) + Math.fround(0.001 * -1)));
    run.close();
  });

  it('follows Keras\'s rule step by step: momentum 0 at the first update, then decay (keras/src/optimizers/base_optimizer.py)', async () => {
    // Keras's `_update_model_variables_moving_average`: average ← m·average + (1 − m)·w with
    // m = 0 while iterations is 0 and ema_momentum afterwards, applied after each update.
    const run = scalarRun(0.9, 2);
    let average = Number.NaN;
    for (const [i, g] of [3, -1, 0.5, 2].entries()) {
      run.update(g);
      const m = i === 0 ? 0 : 0.9;
      average = m * (Number.isNaN(average) ? 0 : average) + (1 - m) * run.value();
      const seen = await run.acc.withAveragedWeights(() => run.value());
      assert.ok(Math.abs(seen - average) <= 1e-6, `update ${i}: ${seen} against Keras's ${average}`);
    }
    run.close();
  });

  it('a checkpoint before the first update keeps "no average yet", so the resumed average starts fresh too', async () => {
    const run = scalarRun(0.999);
    const state = JSON.parse(JSON.stringify(await run.acc.getState()));
    assert.deepEqual(state.ema, [null]);
    const resumed = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [run.w], ema: { decay: 0.999 } });
    await resumed.setState(state);
    resumed.step(() => tf.mul(run.w, 1) as tf.Scalar);
    assert.equal(await resumed.withAveragedWeights(() => run.value()), 0);
    resumed.dispose();
    run.close();
  });
});

describe('finalizeAveragedWeights writes the average into the model for good (Keras finalize_variable_values)', () => {
  it('the model keeps the averages; training goes on from them; no tensor leaks', async () => {
    const run = scalarRun(0.5);
    run.update(1); // w 0, average 0
    run.update(1); // w −1, average −0.5
    const tensors = tf.memory().numTensors;
    run.acc.finalizeAveragedWeights();
    assert.equal(run.value(), -0.5);
    assert.equal(await run.acc.withAveragedWeights(() => run.value()), -0.5);
    assert.equal(tf.memory().numTensors, tensors);
    run.update(1); // w −1.5, average 0.5 · (−0.5) + 0.5 · (−1.5)
    assert.equal(await run.acc.withAveragedWeights(() => run.value()), -1);
    assertNoLeak(() => run.acc.finalizeAveragedWeights(), 3);
    run.close();
  });

  it('is refused by name without ema and inside withAveragedWeights, changing nothing', async () => {
    const w = tf.variable(tf.scalar(1));
    const plain = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [w] });
    assertThrowsMentioning(() => plain.finalizeAveragedWeights(), 'finalizeAveragedWeights', 'ema must be set');
    plain.dispose();
    w.dispose();
    const { acc, variables, close } = await trainedModel();
    await acc.withAveragedWeights(async () => {
      const before = await untouched(acc, variables);
      assertThrowsMentioning(() => acc.finalizeAveragedWeights(), 'finalizeAveragedWeights', 'inside withAveragedWeights');
      await assertUntouched(acc, variables, before, 'finalize inside the swap');
    });
    close();
  });
});

describe('the EMA swap and the other calls (issue 23, items 8-10)', () => {
  it('item 8: getState inside withAveragedWeights saves the true averages, the same state as outside', async () => {
    const { acc, close } = await trainedModel();
    const outside = await acc.getState();
    const inside = await acc.withAveragedWeights(() => acc.getState());
    assert.deepEqual(inside, outside);
    // Also when the swap ends before the read does: the state is taken at the call.
    let pending: Promise<unknown> | null = null;
    await acc.withAveragedWeights(() => {
      pending = acc.getState();
    });
    assert.deepEqual(await pending, outside);
    close();
  });

  it('item 9: dispose inside withAveragedWeights gives the model its trained weights back and frees everything', async () => {
    const start = tf.memory().numTensors;
    const { model, acc, variables } = await trainedModel();
    const trained = weightsOf(model);
    const averaged = await acc.withAveragedWeights(() => {
      const seen = weightsOf(model);
      acc.dispose();
      return seen;
    });
    assert.ok(averaged.some((w, i) => w.some((x, k) => x !== trained[i][k])), 'the averages differ from the weights');
    assertBitIdentical(weightsOf(model), trained);
    assert.equal(variables.every((v) => !v.isDisposed), true);
    assertThrowsMentioning(() => acc.step(() => tf.scalar(0)), 'disposed');
    model.dispose();
    // trainedModel's data tensors are still alive: 2 of them.
    assert.equal(tf.memory().numTensors, start + 2);
  });

  it('item 10: setState inside withAveragedWeights is refused by name and changes nothing; the model gets its weights back', async () => {
    const { model, acc, variables, close } = await trainedModel();
    const trained = weightsOf(model);
    const saved = await acc.getState();
    await acc.withAveragedWeights(async () => {
      const before = await untouched(acc, variables);
      await assert.rejects(acc.setState(saved), /setState.*inside withAveragedWeights/);
      await assertUntouched(acc, variables, before, 'setState inside the swap');
    });
    assertBitIdentical(weightsOf(model), trained);
    assert.deepEqual(await acc.getState(), saved);
    close();
  });

  it('step, flush and a nested swap inside withAveragedWeights are refused by name and change nothing', async () => {
    const { acc, step, variables, close } = await trainedModel();
    await acc.withAveragedWeights(async () => {
      const before = await untouched(acc, variables);
      assertThrowsMentioning(step, 'withAveragedWeights');
      assertThrowsMentioning(() => acc.flush(), 'withAveragedWeights');
      await assert.rejects(acc.withAveragedWeights(() => 0), /inside withAveragedWeights/);
      await assertUntouched(acc, variables, before, 'a refused call inside the swap');
    });
    close();
  });
});
