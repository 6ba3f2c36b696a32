import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';
import { disposeOptimizer } from '../../src/core/optimizerSnapshot';
import { denseNet, fcParameters, samples } from '../helpers';

/**
 * `model.fit` and `model.fitDataset` with `AccumulatingOptimizer`, as a property: random sample
 * counts (so the last batch and the last window are short), micro-batch sizes, window sizes,
 * freeze/unfreeze phases recompiled with the same optimizer, and validation data. Weights and
 * every logged `val_loss` must equal plain fits with batches of microBatchSize × accumulationSteps.
 * SGD: plain tfjs fits are a valid reference through freezing only for an optimizer without
 * slots (tfjs keeps slots by position; see accumulatingOptimizer.test.ts for Adam).
 */

const fitArbitrary = fc.record({
  seed: fc.integer({ min: 1, max: 1000 }),
  samples: fc.integer({ min: 5, max: 40 }),
  microBatchSize: fc.integer({ min: 2, max: 8 }),
  accumulationSteps: fc.integer({ min: 1, max: 4 }),
  phases: fc.array(fc.record({ firstLayerTrainable: fc.boolean(), epochs: fc.integer({ min: 1, max: 2 }), dataset: fc.boolean() }), { minLength: 1, maxLength: 3 }),
});

/** A model's weights layer by layer (model.weights reorders them when a layer is frozen). */
function layerWeights(model: tf.LayersModel): Float32Array[] {
  return model.layers.flatMap((l) => l.weights.map((w) => Float32Array.from(w.read().dataSync() as Float32Array)));
}

describe('property: model.fit with AccumulatingOptimizer equals plain big-batch fits', () => {
  it('through freeze/unfreeze, validation data, short last batches and fitDataset', async () => {
    await fc.assert(
      fc.asyncProperty(fitArbitrary, async (run) => {
        const start = tf.memory().numTensors;
        const data = samples(run.samples, 3, run.seed);
        const validation = samples(6, 3, run.seed + 1);
        const logical = run.microBatchSize * run.accumulationSteps;
        const reference = { model: denseNet(3, 2, run.seed), optimizer: tf.train.sgd(0.1) as tf.Optimizer };
        const accumulating = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: run.accumulationSteps });
        const tested = { model: denseNet(3, 2, run.seed), optimizer: accumulating as tf.Optimizer };
        for (const phase of run.phases) {
          const logs: number[][] = [];
          for (const [side, batchSize] of [[reference, logical], [tested, run.microBatchSize]] as const) {
            side.model.layers[0].trainable = phase.firstLayerTrainable;
            side.model.compile({ optimizer: side.optimizer, loss: 'meanSquaredError' });
            const callbacks = side === tested ? [accumulating.callback()] : [];
            const args = { epochs: phase.epochs, verbose: 0 as const, validationData: [validation.xs, validation.ys] as [tf.Tensor, tf.Tensor], callbacks };
            let history: tf.History;
            if (phase.dataset) {
              const [xs, ys] = [tf.unstack(data.xs), tf.unstack(data.ys)];
              const dataset = tf.data.zip({ xs: tf.data.array(xs), ys: tf.data.array(ys) }).batch(batchSize);
              history = await side.model.fitDataset(dataset, args);
              tf.dispose([...xs, ...ys]);
            } else {
              history = await side.model.fit(data.xs, data.ys, { ...args, batchSize, shuffle: false });
            }
            logs.push(history.history.val_loss as number[]);
          }
          logs[1].forEach((v, epoch) => {
            const expected = logs[0][epoch];
            assert.ok(Math.abs(v - expected) <= 1e-5 * Math.max(1, Math.abs(expected)), `val_loss of epoch ${epoch}: ${v} vs ${expected}`);
          });
          const [a, b] = [layerWeights(tested.model), layerWeights(reference.model)];
          a.forEach((w, i) => w.forEach((x, k) => assert.ok(Math.abs(x - b[i][k]) <= 1e-5 * Math.max(1, Math.abs(b[i][k])), `weight ${i}[${k}]: ${x} vs ${b[i][k]}`)));
        }
        accumulating.dispose();
        disposeOptimizer(reference.optimizer);
        [reference.model, tested.model].forEach((m) => m.dispose());
        tf.dispose([data.xs, data.ys, validation.xs, validation.ys]);
        assert.equal(tf.memory().numTensors, start, 'tensors leaked');
      }),
      fcParameters(30),
    );
  });
});
