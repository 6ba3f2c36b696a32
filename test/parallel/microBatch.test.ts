import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { ParallelAccumulator } from '../../src/parallel';
import { checkMicroBatch } from '../../src/parallel/microBatch';
import { maxRelativeDifference } from '../helpers';
import { FIXTURES, TOLERANCE, args } from '../helpers/parallel';

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

describe('checkMicroBatch', () => {
  let model: tf.Sequential;
  before(() => {
    model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] })] });
  });

  it('transfers an array that owns its buffer, copies a view into a larger one, and copies tensors out', () => {
    const own = { xs: { values: new Float32Array(6), shape: [2, 3] }, ys: { values: new Float32Array(4), shape: [2, 2] } };
    const checked = checkMicroBatch('test', own, model);
    assert.equal(checked.xs[0].values, own.xs.values, 'the same array, to be transferred');
    assert.equal(checked.samples, 2);
    assert.deepEqual(checked.transfer, [own.xs.values.buffer, own.ys.values.buffer]);
    assert.equal(checked.bytes, (6 + 4) * 4);

    const big = new Float32Array(100);
    const view = { xs: { values: big.subarray(10, 16), shape: [2, 3] }, ys: { values: big.subarray(20, 24), shape: [2, 2] } };
    const copied = checkMicroBatch('test', view, model);
    assert.notEqual(copied.xs[0].values.buffer, big.buffer, 'a view is copied, so transferring it cannot detach the rest');

    const tensors = { xs: tf.ones([2, 3]), ys: tf.zeros([2, 2]) };
    const fromTensors = checkMicroBatch('test', tensors, model);
    assert.deepEqual(Array.from(fromTensors.xs[0].values), [1, 1, 1, 1, 1, 1]);
    assert.equal(tensors.xs.isDisposed, false, 'the caller still owns its tensors');
    tf.dispose([tensors.xs, tensors.ys]);
  });

  it('names what is wrong', () => {
    const ys = { values: new Float32Array(4), shape: [2, 2] };
    assert.throws(() => checkMicroBatch('test', { xs: { values: new Float32Array(8), shape: [2, 4] }, ys }, model), /test: batch\.xs must be a batch of the model's input shape \[batch, 3\]; got shape \[2, 4\]/);
    assert.throws(() => checkMicroBatch('test', { xs: { values: new Float32Array(5), shape: [2, 3] }, ys }, model), /batch\.xs must be a tf\.Tensor or \{ values: Float32Array \| Int32Array, shape \}.*got shape \[2, 3\] with 5 values/);
    assert.throws(() => checkMicroBatch('test', { xs: { values: [1, 2, 3], shape: [1, 3] }, ys }, model), /batch\.xs must be a tf\.Tensor or/);
    assert.throws(() => checkMicroBatch('test', { xs: tf.ones([2, 3], 'bool'), ys }, model), /batch\.xs must be a float32 or int32 tensor; got a bool tensor/);
  });

  it('takes one tensor per input and per output for a model with several (issue 32, item 6), and names what is wrong', () => {
    const a = tf.input({ shape: [3], name: 'a' });
    const b = tf.input({ shape: [2], name: 'b' });
    const joined = tf.layers.concatenate().apply([a, b]) as tf.SymbolicTensor;
    const two = tf.model({ inputs: [a, b], outputs: [tf.layers.dense({ units: 2, name: 'p' }).apply(joined) as tf.SymbolicTensor, tf.layers.dense({ units: 1, name: 'q' }).apply(joined) as tf.SymbolicTensor] });
    const arr = (n: number, shape: number[]) => ({ values: new Float32Array(n), shape });
    const good = { xs: [arr(6, [2, 3]), tf.ones([2, 2])], ys: [arr(4, [2, 2]), arr(2, [2, 1])] };
    const checked = checkMicroBatch('test', good, two);
    assert.deepEqual(checked.xs.map((t) => t.shape), [[2, 3], [2, 2]]);
    assert.deepEqual(checked.ys.map((t) => t.shape), [[2, 2], [2, 1]]);
    assert.equal(checked.samples, 2);
    assert.equal(checked.transfer.length, 4, 'the three arrays given and the copy of the tensor');
    assert.equal(checked.bytes, (6 + 4 + 4 + 2) * 4);
    tf.dispose(good.xs[1] as tf.Tensor);

    const ys = [arr(4, [2, 2]), arr(2, [2, 1])];
    assert.throws(() => checkMicroBatch('test', { xs: arr(6, [2, 3]), ys }, two), /test: batch\.xs must be an array of 2 tensors, one per model input \("a", "b"\); got a tensor of shape \[2, 3\]/);
    assert.throws(() => checkMicroBatch('test', { xs: [arr(6, [2, 3])], ys }, two), /batch\.xs must be an array of 2 tensors, one per model input \("a", "b"\); got an array of length 1/);
    assert.throws(() => checkMicroBatch('test', { xs: [arr(6, [2, 3]), arr(6, [2, 3])], ys }, two), /batch\.xs\[1\] must be a batch of the shape of model input 1 \("b"\) \[batch, 2\]; got shape \[2, 3\]/);
    assert.throws(() => checkMicroBatch('test', { xs: [arr(6, [2, 3]), arr(6, [3, 2])], ys }, two), /batch\.xs\[1\] must be a batch of the same size as the first input \(2\); got shape \[3, 2\]/);
    assert.throws(() => checkMicroBatch('test', { xs: [arr(6, [2, 3]), arr(4, [2, 2])], ys: ys[0] }, two), /batch\.ys must be an array of 2 tensors, one per model output \("p", "q"\)/);
    assert.throws(() => checkMicroBatch('test', { xs: [arr(6, [2, 3]), arr(4, [2, 2])], ys: [ys[0], arr(3, [3, 1])] }, two), /batch\.ys\[1\] must be a batch of the same size as xs \(2\); got shape \[3, 1\]/);
    // One model input: a tensor, or an array of one.
    const single = checkMicroBatch('test', { xs: [arr(6, [2, 3])], ys: [arr(4, [2, 2])] }, model);
    assert.equal(single.xs.length, 1);
    two.dispose();
  });

  it('transfers an array passed twice once, and nothing when a later tensor is refused', () => {
    const shared = new Float32Array(6);
    const twice = checkMicroBatch('test', { xs: { values: shared, shape: [2, 3] }, ys: { values: shared, shape: [2, 3] } }, model);
    assert.deepEqual(twice.transfer, [shared.buffer]);
    const xs = { values: new Float32Array(6), shape: [2, 3] };
    assert.throws(() => checkMicroBatch('test', { xs, ys: { values: new Float32Array(3), shape: [3, 1] } }, model), /batch\.ys must be a batch of the same size as xs \(2\)/);
    assert.equal(xs.values.length, 6, 'not detached');
  });
});

/** Two inputs ([3] and [2]) and two outputs (2 logits and 1 value), seeded: the same model each call. */
function twoByTwo(): tf.LayersModel {
  const seeded = (units: number, seed: number, name: string) => tf.layers.dense({ units, name, kernelInitializer: tf.initializers.glorotUniform({ seed }) });
  const a = tf.input({ shape: [3], name: 'a' });
  const b = tf.input({ shape: [2], name: 'b' });
  const hidden = seeded(4, 1, 'hidden').apply(tf.layers.concatenate().apply([a, b])) as tf.SymbolicTensor;
  return tf.model({ inputs: [a, b], outputs: [seeded(2, 2, 'p').apply(hidden) as tf.SymbolicTensor, seeded(1, 3, 'q').apply(hidden) as tf.SymbolicTensor] });
}

/** Seeded micro-batches for {@link twoByTwo}, as plain arrays. */
function twoByTwoData(sizes: number[]) {
  return sizes.map((n, k) => tf.tidy(() => ({
    n,
    a: tf.randomNormal([n, 3], 0, 1, 'float32', k).dataSync() as Float32Array,
    b: tf.randomNormal([n, 2], 0, 1, 'float32', 20 + k).dataSync() as Float32Array,
    p: tf.oneHot(tf.randomUniform([n], 0, 2, 'int32', 40 + k), 2).toFloat().dataSync() as Float32Array,
    q: tf.randomNormal([n, 1], 0, 1, 'float32', 60 + k).dataSync() as Float32Array,
  })));
}
type TwoByTwo = ReturnType<typeof twoByTwoData>[number];
const twoByTwoBatch = (d: TwoByTwo) => ({
  xs: [{ values: d.a.slice(), shape: [d.n, 3] }, { values: d.b.slice(), shape: [d.n, 2] }],
  ys: [{ values: d.p.slice(), shape: [d.n, 2] }, { values: d.q.slice(), shape: [d.n, 1] }],
});

/** The single-thread accumulator on the same micro-batches, with the loss written as a function of the arrays. */
function twoByTwoReference(data: TwoByTwo[], loss: (ys: tf.Tensor[], predictions: tf.Tensor[]) => tf.Tensor, sampleCount: boolean): tf.LayersModel {
  const model = twoByTwo();
  const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: model.trainableWeights });
  for (const d of data) {
    tf.tidy(() => {
      const xs = [tf.tensor(d.a, [d.n, 3]), tf.tensor(d.b, [d.n, 2])];
      const ys = [tf.tensor(d.p, [d.n, 2]), tf.tensor(d.q, [d.n, 1])];
      acc.step(() => loss(ys, model.apply(xs, { training: true }) as tf.Tensor[]), sampleCount ? { sampleCount: d.n } : undefined);
    });
  }
  acc.dispose();
  return model;
}

const weightsOf = (model: tf.LayersModel) => model.weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array));

describe('ParallelAccumulator: a model with two inputs and two outputs (issue 32, item 6)', () => {
  it('a loss by name (summed over the outputs) and a module loss of the arrays train it as one thread does, leaking nothing', async () => {
    const data = twoByTwoData([4, 3, 5, 2, 4, 3]);
    const byName = twoByTwo();
    const named = await ParallelAccumulator.create(args(byName, { loss: 'meanSquaredError', workers: 1 }));
    for (const d of data.slice(0, 3)) await named.step(twoByTwoBatch(d));
    await named.dispose();
    const mse = (ys: tf.Tensor[], p: tf.Tensor[]) => tf.add(tf.losses.meanSquaredError(ys[0], p[0]), tf.losses.meanSquaredError(ys[1], p[1]));
    const namedReference = twoByTwoReference(data.slice(0, 3), mse, true);
    assert.ok(maxRelativeDifference(weightsOf(byName), weightsOf(namedReference)) <= TOLERANCE, 'by name');

    const byModule = twoByTwo();
    const initial = weightsOf(byModule);
    const acc = await ParallelAccumulator.create(args(byModule, { loss: { module: FIXTURES, export: 'twoHeads' } }));
    for (const d of data.slice(0, 3)) await acc.step(twoByTwoBatch(d));
    const tensors = { main: tf.memory().numTensors, workers: await acc.workerTensorCounts() };
    for (const d of data.slice(3)) await acc.step(twoByTwoBatch(d));
    assert.deepEqual([tf.memory().numTensors, await acc.workerTensorCounts()], [tensors.main, tensors.workers], 'no tensor leaks in either thread');
    assert.equal(acc.updateStep, 2);
    await acc.dispose();
    const twoHeads = (ys: tf.Tensor[], p: tf.Tensor[]) => tf.add(tf.losses.softmaxCrossEntropy(ys[0], p[0], undefined, undefined, tf.Reduction.NONE), tf.mul(tf.mean(tf.squaredDifference(ys[1], p[1]), -1), 0.5));
    const moduleReference = twoByTwoReference(data, twoHeads, false);
    assert.ok(maxRelativeDifference(weightsOf(byModule), initial) > 1e-3, 'it trained');
    assert.ok(maxRelativeDifference(weightsOf(byModule), weightsOf(moduleReference)) <= TOLERANCE, 'by module');
    for (const m of [byName, namedReference, byModule, moduleReference]) m.dispose();
  });
});

after(() => {
  tf.disposeVariables();
});
