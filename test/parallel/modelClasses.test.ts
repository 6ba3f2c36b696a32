import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { ParallelAccumulator, UnregisteredClassError } from '../../src/parallel';
import { checkModelClasses, modelClasses } from '../../src/parallel/modelClasses';
import { cnn } from '../../src/tutorial/models';
import { maxRelativeDifference } from '../helpers';
import { TOLERANCE, args, threadCount } from '../helpers/parallel';
import { ScaleLayer } from '../fixtures/scaleLayer';

/**
 * Issue 32, item 7: a model whose class the workers do not know (a user-defined layer without
 * `modules`) fails `create` with an error naming the `modules` option and the class, instead of
 * tfjs's "Unknown layer" from a worker that exited.
 */

const SCALE_LAYER = join(__dirname, '..', 'fixtures', 'scaleLayer.ts');

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

/** A layer class this thread never registers. */
class UnregisteredInTests extends tf.layers.Layer {
  static className = 'UnregisteredInTests';
  override call(inputs: tf.Tensor | tf.Tensor[]): tf.Tensor {
    return Array.isArray(inputs) ? inputs[0] : inputs;
  }
  override getClassName(): string {
    return UnregisteredInTests.className;
  }
}

/** Dense layers around a ScaleLayer: the user-defined layer with a trainable weight. */
function scaledModel(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 4, inputShape: [3], kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }), name: 'first' }),
      new ScaleLayer({ name: 'scaled' }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }), name: 'last' }),
    ],
  });
}

const weightsOf = (model: tf.LayersModel) => model.weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array));

describe('modelClasses and checkModelClasses', () => {
  it('list every class of a topology once, with the layer that uses it', () => {
    const model = scaledModel();
    const classes = modelClasses(model.toJSON(null, false));
    assert.deepEqual(classes.find((c) => c.className === 'ScaleLayer'), { className: 'ScaleLayer', layer: 'scaled' });
    assert.deepEqual(classes.find((c) => c.className === 'VarianceScaling'), { className: 'VarianceScaling', layer: null }, 'an initializer is a class too (glorotUniform is a VarianceScaling)');
    assert.equal(classes.filter((c) => c.className === 'Dense').length, 1);
    model.dispose();
  });

  it('accept the project\'s models, whose classes every worker registers, and refuse a class this thread does not know by the modules option', () => {
    for (const normalization of ['batch', 'group', 'layer', 'frozen-batch', 'batch-renorm', 'none'] as const) {
      const model = cnn({ normalization, inputShape: [8, 8, 1], classes: 3, groups: 4 });
      assert.doesNotThrow(() => checkModelClasses('test', model.toJSON(null, false), []), normalization);
      model.dispose();
    }
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] }), new UnregisteredInTests({ name: 'mine' })] });
    const topology = model.toJSON(null, false);
    const message = /^test: modules must be a list of modules that register every custom class of the model with tf\.serialization\.registerClass \(each worker imports them, then rebuilds the model from its JSON\): the layer "mine", of class "UnregisteredInTests", is known to no worker; got no module\.$/;
    assert.throws(() => checkModelClasses('test', topology, []), (e: Error) => e instanceof UnregisteredClassError && e.className === 'UnregisteredInTests' && message.test(e.message));
    assert.throws(() => checkModelClasses('test', topology, ['/somewhere/layers.js']), /got "\/somewhere\/layers\.js", which do not register it\./);
    model.dispose();
  });
});

describe('ParallelAccumulator: a user-defined layer (issue 32, item 7)', () => {
  it('without modules, create refuses it by name and leaves no thread, tensor or weight changed; with modules the run equals one thread', async () => {
    const data = [0, 1, 2].map((k) => tf.tidy(() => ({ xs: tf.randomNormal([4, 3], 0, 1, 'float32', k).dataSync() as Float32Array, ys: tf.randomNormal([4, 2], 0, 1, 'float32', 10 + k).dataSync() as Float32Array })));
    const batch = (d: (typeof data)[number]) => ({ xs: { values: d.xs.slice(), shape: [4, 3] }, ys: { values: d.ys.slice(), shape: [4, 2] } });
    const model = scaledModel();
    const initial = weightsOf(model);
    const optimizer = tf.train.sgd(0.1);
    const threads = threadCount();
    const tensors = tf.memory().numTensors;
    await assert.rejects(
      ParallelAccumulator.create(args(model, { optimizer, loss: 'meanSquaredError', workers: 1 })),
      (e: Error) => e instanceof UnregisteredClassError && e.className === 'ScaleLayer' && /^ParallelAccumulator: modules must be a list of modules that register every custom class of the model .*: the layer "scaled", of class "ScaleLayer", is known to no worker; got no module\.$/.test(e.message),
    );
    assert.equal(threadCount(), threads, 'the worker that refused it is gone');
    assert.equal(tf.memory().numTensors, tensors, 'no tensor kept');
    assert.deepEqual(weightsOf(model), initial);

    const acc = await ParallelAccumulator.create(args(model, { optimizer, loss: 'meanSquaredError', workers: 1, modules: [SCALE_LAYER] }));
    for (const d of data) await acc.step(batch(d));
    assert.equal(acc.updateStep, 1);
    await acc.dispose();

    const reference = scaledModel();
    const single = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: reference.trainableWeights });
    for (const d of data) {
      tf.tidy(() => {
        const [xs, ys] = [tf.tensor(d.xs, [4, 3]), tf.tensor(d.ys, [4, 2])];
        single.step(() => tf.losses.meanSquaredError(ys, reference.apply(xs) as tf.Tensor), { sampleCount: 4 });
      });
    }
    single.dispose();
    assert.ok(maxRelativeDifference(weightsOf(model), initial) > 1e-4, 'it trained, the scale included');
    assert.ok(maxRelativeDifference(weightsOf(model), weightsOf(reference)) <= TOLERANCE);
    model.dispose();
    reference.dispose();
  });
});

after(() => {
  tf.disposeVariables();
});
