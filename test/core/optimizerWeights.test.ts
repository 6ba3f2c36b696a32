import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { captureOptimizer, internalNames, slotSuffixes, writeOptimizer } from '../../src/core/optimizerWeights';
import { assertBitIdentical, assertUntouched, denseNet, maxRelativeDifference, samples, untouched, weightsOf } from '../helpers';

/** Every optimizer tf.train builds, with settings that give each slot something to do. */
const EVERY_OPTIMIZER: Record<string, () => tf.Optimizer> = {
  sgd: () => tf.train.sgd(0.1),
  momentum: () => tf.train.momentum(0.05, 0.9),
  nesterov: () => tf.train.momentum(0.05, 0.9, true),
  adam: () => tf.train.adam(0.01),
  adamax: () => tf.train.adamax(0.01, 0.9, 0.999, undefined, 0.01),
  rmsprop: () => tf.train.rmsprop(0.01, 0.9, 0.5),
  rmspropCentered: () => tf.train.rmsprop(0.01, 0.9, 0.5, undefined, true),
  adagrad: () => tf.train.adagrad(0.1),
  adadelta: () => tf.train.adadelta(1, 0.9),
};

/**
 * A run of 16 micro-steps in windows of 2 (8 updates). `stopAt` interrupts it after that many
 * micro-steps: the weights and the state go through JSON text into a fresh model, optimizer and
 * accumulator, as in a new process, and the run goes on there. Returns the final weights.
 * `dropInternals` removes the optimizer's running scalars from the saved state first.
 */
async function run(make: () => tf.Optimizer, stopAt: number | null, dropInternals = false): Promise<Float32Array[]> {
  const data = Array.from({ length: 16 }, (_, i) => samples(1 + (i % 3), 3, 40 + i));
  const build = () => {
    const model = denseNet(3, 4, 21);
    const acc = new GradientAccumulator({ optimizer: make(), accumulationSteps: 2, varList: model.trainableWeights });
    return { model, acc };
  };
  let { model, acc } = build();
  for (let i = 0; i < 16; i++) {
    if (i === stopAt) {
      const text = JSON.stringify({ weights: weightsOf(model).map((w) => Array.from(w)), state: await acc.getState() });
      acc.dispose();
      model.dispose();
      ({ model, acc } = build());
      const saved = JSON.parse(text);
      // As a state written before optimizerInternals existed.
      if (dropInternals) delete saved.state.optimizerInternals;
      tf.tidy(() => model.trainableWeights.forEach((w, k) => w.write(tf.tensor(saved.weights[k], w.read().shape))));
      await acc.setState(saved.state, { matchBy: 'order' });
    }
    const { xs, ys } = data[i];
    acc.step(() => tf.squeeze(tf.squaredDifference(model.apply(xs) as tf.Tensor, ys), [1]));
  }
  const weights = weightsOf(model);
  acc.dispose();
  model.dispose();
  tf.dispose(data.flatMap((d) => [d.xs, d.ys]));
  return weights;
}

describe('resuming from getState is bit for bit for every tfjs optimizer (issue 23, items 12 and 17)', () => {
  for (const [name, make] of Object.entries(EVERY_OPTIMIZER)) {
    it(`${name}: stopped mid-window after 5 updates (where tfjs setWeights's pow and the update's products differ), resumed in a fresh optimizer, the same weights to the bit`, async () => {
      const tensors = tf.memory().numTensors;
      const reference = await run(make, null);
      assertBitIdentical(await run(make, 11), reference);
      assert.equal(tf.memory().numTensors, tensors, 'tensors leaked');
    });
  }

  it('Adamax: getState saves its slots and running scalars; a foreign state is refused by name, changing nothing', async () => {
    const model = denseNet(2, 2, 3);
    const data = samples(3, 2, 4);
    const acc = new GradientAccumulator({ optimizer: tf.train.adamax(0.01), accumulationSteps: 1, varList: model.trainableWeights });
    const step = () => acc.step(() => tf.squeeze(tf.squaredDifference(model.apply(data.xs) as tf.Tensor, data.ys), [1]));
    step();
    step();
    const state = await acc.getState();
    assert.deepEqual(state.optimizer?.map((w) => w.name.split('/').pop()), ['iter', 'm', 'm', 'm', 'm', 'v', 'v', 'v', 'v']);
    // accBeta1 starts at β₁ and is multiplied by β₁ (in float32) after each update.
    const beta1 = Math.fround(0.9);
    assert.deepEqual(state.optimizerInternals?.map((w) => [w.name, w.values[0]]), [['iteration', 2], ['accBeta1', Math.fround(Math.fround(beta1 * beta1) * beta1)]]);
    const variables = model.trainableWeights.map((w) => w.read() as tf.Variable);
    const before = await untouched(acc, variables);
    const foreign = JSON.parse(JSON.stringify(state));
    foreign.optimizerInternals = [{ name: 'accBeta1', shape: [], dtype: 'float32', values: [0.5] }, { name: 'accBeta2', shape: [], dtype: 'float32', values: [0.5] }];
    await assert.rejects(acc.setState(foreign), /state\.optimizerInternals must be the float32 scalars of a Adamax optimizer \("iteration", "accBeta1"\)/);
    const unevenSlots = JSON.parse(JSON.stringify(state));
    unevenSlots.optimizer.pop(); // the last "/v": 4 "/m" slots but 3 "/v"
    await assert.rejects(acc.setState(unevenSlots), /one slot of each kind/);
    await assertUntouched(acc, variables, before, 'a refused Adamax state');
    acc.dispose();
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  });

  it('the exact limit: an Adam state without internals resumes as tfjs setWeights does, within 1e-6 and not bit for bit', async () => {
    const reference = await run(EVERY_OPTIMIZER.adam, null);
    const resumed = await run(EVERY_OPTIMIZER.adam, 11, true);
    const difference = maxRelativeDifference(resumed, reference);
    assert.ok(difference > 0 && difference <= 1e-6, `relative difference ${difference}`);
  });

  it('an Adam state without internals derives β₁ᵗ from the iteration count, within 1e-6', async () => {
    const model = denseNet(2, 2, 3);
    const data = samples(3, 2, 4);
    const make = () => new GradientAccumulator({ optimizer: tf.train.adam(0.01), accumulationSteps: 1, varList: model.trainableWeights });
    const acc = make();
    for (let i = 0; i < 4; i++) acc.step(() => tf.squeeze(tf.squaredDifference(model.apply(data.xs) as tf.Tensor, data.ys), [1]));
    const state = await acc.getState();
    const accBeta1 = state.optimizerInternals?.[0].values[0] as number;
    delete state.optimizerInternals;
    const resumed = make();
    await resumed.setState(state);
    const derived = (await resumed.getState()).optimizerInternals?.[0].values[0] as number;
    assert.ok(Math.abs(derived - accBeta1) <= 1e-6, `accBeta1 ${derived} against ${accBeta1}`);
    acc.dispose();
    resumed.dispose();
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  });
});

describe('captureOptimizer / writeOptimizer', () => {
  it('names slots as getWeights does, takes them at the call, and knows no custom class', async () => {
    const w = tf.variable(tf.tensor([1, 2]));
    const adam = tf.train.adam(0.1);
    tf.tidy(() => adam.applyGradients({ [w.name]: tf.tensor([1, -1]) } as never));
    const captured = captureOptimizer(adam);
    assert.ok(captured !== null);
    const theirs = await adam.getWeights();
    assert.deepEqual(captured.weights.map((x) => x.name), theirs.map((x) => x.name));
    assert.deepEqual(captured.weights.map((x) => Array.from(x.tensor.dataSync())), theirs.map((x) => Array.from(x.tensor.dataSync())));
    const m = Array.from(captured.weights[1].tensor.dataSync());
    tf.tidy(() => adam.applyGradients({ [w.name]: tf.tensor([5, 5]) } as never));
    assert.notDeepEqual(Array.from(theirs[1].tensor.dataSync()), m, 'the live slot moved');
    assert.deepEqual(Array.from(captured.weights[1].tensor.dataSync()), m, 'the capture kept the values of its call');
    assert.deepEqual(slotSuffixes(adam), ['m', 'v']);
    assert.deepEqual(internalNames(adam), ['accBeta1', 'accBeta2']);
    assert.deepEqual(slotSuffixes(tf.train.rmsprop(0.1, 0.9, 0, 1e-7, true)), ['rms', 'momentum', 'mg']);
    class Custom extends tf.SGDOptimizer {
      static override get className() { return 'Custom'; }
      override getClassName() { return 'Custom'; }
    }
    assert.equal(captureOptimizer(new Custom(0.1)), null);
    assert.throws(() => writeOptimizer(new Custom(0.1), [], null), /not a built-in/);
    tf.dispose([...captured.weights, ...captured.internals].map((x) => x.tensor));
    tf.dispose(theirs.filter((x) => !(x.tensor instanceof tf.Variable)).map((x) => x.tensor));
    adam.dispose();
    w.dispose();
  });
});
