import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { ParallelAccumulator } from '../../src/parallel';
import type { ToWorker } from '../../src/parallel/protocol';
import { TrainableSync, setTrainableFlags } from '../../src/parallel/trainable';
import { maxRelativeDifference } from '../helpers';
import { CLASSES, INPUT, TOLERANCE, args, batchOf, makeData, makeModel } from '../helpers/parallel';
import type { Data } from '../helpers/parallel';

/**
 * Issue 32, item 3: a layer frozen (or unfrozen) after `create` is followed by the workers, as
 * `tf.variableGrads` follows it on one thread, and an update never moves a frozen variable.
 */

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

/** Every weight of every layer, frozen or not, in layer order (model.weights reorders them by trainable). */
const allWeights = (model: tf.LayersModel) => model.layers.flatMap((l) => l.weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array)));
const layerWeights = (model: tf.LayersModel, index: number) => model.layers[index].weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array));

describe('TrainableSync', () => {
  it('posts the flags to every worker only when one changed, and refuses a model with none trainable, posting nothing', () => {
    const vars = [tf.variable(tf.zeros([2])), tf.variable(tf.ones([1]))];
    const posts: [number, ToWorker][] = [];
    const sync = new TrainableSync(vars, { size: 2, post: (w, m) => posts.push([w, m]) });
    sync.beforeMicroBatch('test');
    assert.equal(posts.length, 0, 'nothing changed since create');
    vars[0].trainable = false;
    sync.beforeMicroBatch('test');
    assert.deepEqual(posts, [[0, { type: 'trainable', flags: [false, true] }], [1, { type: 'trainable', flags: [false, true] }]]);
    sync.beforeMicroBatch('test');
    assert.equal(posts.length, 2, 'sent once per change');
    vars[1].trainable = false;
    assert.throws(() => sync.beforeMicroBatch('test'), /^Error: test: model must be a model with at least one trainable weight among those it trained at create \(unfreeze a layer\); got a model whose 2 trained weights are all frozen\.$/);
    assert.equal(posts.length, 2, 'a refused micro-batch sends nothing');
    vars[0].trainable = true;
    sync.beforeMicroBatch('test');
    assert.deepEqual(posts.slice(2).map(([, m]) => m), [{ type: 'trainable', flags: [true, false] }, { type: 'trainable', flags: [true, false] }]);
    tf.dispose(vars);
  });

  it('setTrainableFlags sets a replica\'s flags in order, and refuses flags for another number of variables', () => {
    const vars = [tf.variable(tf.zeros([2])), tf.variable(tf.ones([1]))];
    setTrainableFlags(vars, [true, false]);
    assert.deepEqual(vars.map((v) => v.trainable), [true, false]);
    assert.throws(() => setTrainableFlags(vars, [true]), /trainable flags for 1 variables sent to a replica that trains 2/);
    assert.deepEqual(vars.map((v) => v.trainable), [true, false], 'unchanged');
    tf.dispose(vars);
  });
});

/** Runs `data` through either trainer, calling `between[k]` before micro-batch k. */
async function run(step: (d: Data[number]) => Promise<unknown>, data: Data, between: Record<number, () => void>): Promise<void> {
  for (const [k, d] of data.entries()) {
    between[k]?.();
    await step(d);
  }
}

/** The single-thread reference: `varList` is the model's trainable weights at creation, as the parallel trainer's. */
function oneThread(model: tf.LayersModel) {
  const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: model.trainableWeights });
  const step = async (d: Data[number]) => {
    tf.tidy(() => {
      const xs = tf.tensor(d.xs, [d.n, ...INPUT]);
      const ys = tf.tensor(d.ys, [d.n, CLASSES]);
      acc.step(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor), { sampleCount: d.n });
    });
  };
  return { acc, step };
}

describe('ParallelAccumulator: a layer frozen after create (issue 32, item 3)', () => {
  it('frozen at a window boundary and unfrozen mid-window: the workers follow, the frozen layer does not move, and the run equals one thread; no tensor leaks', async () => {
    const data = makeData([4, 3, 5, 4, 2, 4, 4, 3, 5]);
    const FROZEN = 1; // the first Dense layer
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model));
    let held: Float32Array[] = [];
    await run((d) => acc.step(batchOf(d)), data, {
      3: () => {
        model.layers[FROZEN].trainable = false;
        held = layerWeights(model, FROZEN);
      },
      6: () => assert.deepEqual(layerWeights(model, FROZEN), held, 'a window with the layer frozen leaves it bit for bit'),
      7: () => {
        model.layers[FROZEN].trainable = true;
      },
    });
    assert.deepEqual([acc.microStep, acc.updateStep], [9, 3]);
    assert.ok(maxRelativeDifference(layerWeights(model, FROZEN), held) > 1e-4, 'unfrozen, it trains again (on micro-batches 7 and 8)');
    // The leak check: the freeze and unfreeze sent flags, which create no tensor on either side.
    const tensors = { main: tf.memory().numTensors, workers: await acc.workerTensorCounts() };
    model.layers[FROZEN].trainable = false;
    await run((d) => acc.step(batchOf(d)), data.slice(0, 3), { 1: () => (model.layers[FROZEN].trainable = true) });
    assert.equal(tf.memory().numTensors, tensors.main, 'main thread');
    assert.deepEqual(await acc.workerTensorCounts(), tensors.workers, 'workers');
    await acc.dispose();

    const reference = makeModel('mlp', 'none');
    const single = oneThread(reference);
    await run(single.step, data, {
      3: () => (reference.layers[FROZEN].trainable = false),
      7: () => (reference.layers[FROZEN].trainable = true),
    });
    reference.layers[FROZEN].trainable = false;
    await run(single.step, data.slice(0, 3), { 1: () => (reference.layers[FROZEN].trainable = true) });
    single.acc.dispose();
    const difference = maxRelativeDifference(allWeights(model), allWeights(reference));
    assert.ok(difference <= TOLERANCE, `relative difference to one thread ${difference}`);
    model.dispose();
    reference.dispose();
  });

  it('a layer frozen after a micro-batch of the open window is not moved by that window\'s update; a model with every layer frozen is refused by name, changing nothing', async () => {
    const data = makeData([4, 3, 5, 4]);
    const FROZEN = 3; // the second Dense layer
    const model = makeModel('mlp', 'none');
    const acc = await ParallelAccumulator.create(args(model, { workers: 1 }));
    await acc.step(batchOf(data[0]));
    await acc.step(batchOf(data[1])); // both computed while the layer was trainable, still in the worker
    model.layers[FROZEN].trainable = false;
    const held = layerWeights(model, FROZEN);
    const before = allWeights(model);
    const flushed = await acc.flush();
    assert.equal(flushed.applied, true);
    assert.deepEqual(layerWeights(model, FROZEN), held, 'its sums from before the freeze are not applied');
    assert.ok(maxRelativeDifference(allWeights(model), before) > 1e-4, 'the other layers moved');

    // Every layer frozen: refused before anything is sent, flushed or counted.
    model.layers[FROZEN].trainable = true;
    await acc.step(batchOf(data[2]));
    model.trainable = false;
    const counters = () => [acc.microStep, acc.pendingMicroBatches, acc.updateStep];
    const frozen = { weights: allWeights(model), counters: counters(), tensors: tf.memory().numTensors };
    await assert.rejects(acc.step(batchOf(data[3])), /ParallelAccumulator: model must be a model with at least one trainable weight among those it trained at create \(unfreeze a layer\); got a model whose 6 trained weights are all frozen\./);
    await assert.rejects(acc.flush(), /model must be a model with at least one trainable weight/);
    assert.deepEqual([allWeights(model), counters(), tf.memory().numTensors], [frozen.weights, frozen.counters, frozen.tensors]);
    model.trainable = true;
    assert.equal((await acc.step(batchOf(data[3]))).windowPosition, 2, 'the window kept its micro-batch and goes on');
    await acc.dispose();
    model.dispose();
  });
});

after(() => {
  tf.disposeVariables();
});
