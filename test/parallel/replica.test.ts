import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { cnn } from '../../src/tutorial/models';
import { LossSpec, ReplicaInit, packedLayout, sharedFloat32 } from '../../src/parallel/protocol';
import { Replica } from '../../src/parallel/replica';

/**
 * A worker's replica driven directly in this thread: its sums are the single-thread
 * accumulator's, for every kind of loss output, and it leaks nothing.
 */

const FIXTURES = join(__dirname, '..', 'fixtures', 'parallelLosses.ts');

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

function setup(loss: LossSpec, averaging: ReplicaInit['averaging'] = 'per-sample') {
  const model = cnn({ normalization: 'group', inputShape: [6, 6, 1], classes: 3, groups: 4, seed: 5 });
  const layout = packedLayout(model.trainableWeights.map((w) => w.shape as number[]));
  const init: ReplicaInit = {
    modelTopology: model.toJSON(null, false) as object,
    weights: model.weights.map((w) => ({ values: Float32Array.from(w.read().dataSync() as Float32Array), shape: [...w.shape] as number[] })),
    loss,
    averaging,
    backend: undefined,
    nativeThreads: 1,
    modules: [],
    weightBuffer: sharedFloat32(layout),
    sumBuffer: sharedFloat32(layout),
    lastBuffer: sharedFloat32(layout),
  };
  return { model, layout, init };
}

function microBatch(n: number, seed: number) {
  return tf.tidy(() => ({
    xs: { values: tf.randomNormal([n, 6, 6, 1], 0, 1, 'float32', seed).dataSync() as Float32Array, shape: [n, 6, 6, 1] },
    ys: { values: tf.oneHot(tf.randomUniform([n], 0, 3, 'int32', seed + 50), 3).toFloat().dataSync() as Float32Array, shape: [n, 3] },
  }));
}

describe('Replica', () => {
  it('sums what the single-thread accumulator sums, for a mean, a per-sample and a { loss, count } output', async () => {
    const batches = [microBatch(3, 1), microBatch(5, 2)];
    const specs: LossSpec[] = ['softmaxCrossEntropy', { module: FIXTURES, export: 'perSampleCrossEntropy' }, { module: FIXTURES, export: 'summedCrossEntropyWithCount' }];
    for (const spec of specs) {
      const { model, layout, init } = setup(spec);
      const replica = await Replica.create(init);
      batches.forEach((b, i) => replica.addMicroBatch(i, b.xs, b.ys));
      const reply = replica.reduce(1);
      assert.equal(reply.sums.count, 8, `${JSON.stringify(spec)}: counts the samples`);
      assert.deepEqual(reply.reports.map((r) => r.count), [3, 5]);
      const sums = new Float32Array(init.sumBuffer);

      // The reference: each micro-batch's mean loss times its size, differentiated and summed,
      // which is what GradientAccumulator.step adds with sampleCount.
      const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
      const expected = tf.tidy(() => {
        const grads = batches.map((b) => {
          const xs = tf.tensor(b.xs.values, b.xs.shape);
          const ys = tf.tensor(b.ys.values, b.ys.shape);
          const { grads } = tf.variableGrads(() => tf.mul(tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor), b.xs.shape[0]) as tf.Scalar, vars);
          return vars.map((v) => grads[v.name]);
        });
        return vars.map((_, i) => tf.add(grads[0][i], grads[1][i]).dataSync() as Float32Array);
      });
      let diff = 0;
      let scale = 0;
      expected.forEach((values, i) => values.forEach((v, k) => {
        diff = Math.max(diff, Math.abs(v - sums[layout.offsets[i] + k]));
        scale = Math.max(scale, Math.abs(v));
      }));
      assert.ok(diff / scale <= 1e-5, `${JSON.stringify(spec)}: relative difference ${diff / scale}`);
      replica.dispose();
      model.dispose();
    }
  });

  it('counts each micro-batch once under "per-micro-batch" and refuses a per-sample loss there', async () => {
    const { model, init } = setup('softmaxCrossEntropy', 'per-micro-batch');
    const replica = await Replica.create(init);
    const b = microBatch(4, 3);
    replica.addMicroBatch(0, b.xs, b.ys);
    assert.deepEqual([replica.reduce(1).sums.count], [1]);
    replica.dispose();
    const perSample = setup({ module: FIXTURES, export: 'perSampleCrossEntropy' }, 'per-micro-batch');
    const strict = await Replica.create(perSample.init);
    assert.throws(() => strict.addMicroBatch(0, b.xs, b.ys), /scalar mean loss under "per-micro-batch" averaging/);
    strict.dispose();
    tf.dispose([model, perSample.model].map((m) => m.weights.map((w) => w.read())));
  });

  it('leaves out a non-finite micro-batch, reports it, and leaks no tensor', async () => {
    const { model, init } = setup('softmaxCrossEntropy');
    const replica = await Replica.create(init);
    const good = microBatch(2, 4);
    const bad = microBatch(2, 5);
    bad.xs.values[0] = Number.NaN;
    const round = () => {
      replica.addMicroBatch(0, good.xs, good.ys);
      replica.addMicroBatch(1, bad.xs, bad.ys);
      return replica.reduce(1);
    };
    round();
    const tensors = tf.memory().numTensors;
    const reply = round();
    assert.equal(tf.memory().numTensors, tensors);
    assert.deepEqual([reply.sums.microBatches, reply.sums.count, reply.reports.map((r) => r.finite)], [1, 2, [true, false]]);
    replica.dispose();
    model.dispose();
  });

  it('sums at the window\'s scale: times 2^-3, bit for bit the unscaled sums divided by 8 (issue 32, item 11)', async () => {
    const batches = [microBatch(3, 6), microBatch(4, 7)];
    const sums: Float32Array[] = [];
    for (const scale of [0, 3]) {
      const { model, init } = setup('softmaxCrossEntropy');
      const replica = await Replica.create(init);
      batches.forEach((b, i) => replica.addMicroBatch(i, b.xs, b.ys, false, scale));
      const reply = replica.reduce(1);
      assert.deepEqual([reply.sums.count, reply.sums.lossSum > 0], [7, true], 'counts and losses are not scaled');
      sums.push(new Float32Array(init.sumBuffer).slice());
      replica.dispose();
      model.dispose();
    }
    assert.deepEqual(sums[1], sums[0].map((x) => x / 8));
  });
});
