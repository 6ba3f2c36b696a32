import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeTrainingStep } from '../../src/tutorial/stepTimer';
import { assertThrowsMentioning, batch, denseModel, weightsOf, maxRelativeDifference } from '../helpers';

const mse = (ys: tf.Tensor, predictions: tf.Tensor) => tf.losses.meanSquaredError(ys, predictions);
const quick = { seconds: 0, warmup: 1, warmupSeconds: 0, minReps: 3 };

describe('timeTrainingStep', () => {
  test('trains the model for real, and leaks nothing (optimizer slots included)', () => {
    const model = denseModel(1);
    const data = batch(16);
    const before = weightsOf(model);
    const tensors = tf.memory().numTensors;
    const timing = timeTrainingStep({ model, loss: mse, batch: data, optimizer: () => tf.train.adam(1e-3), timing: quick });
    assert.equal(tf.memory().numTensors, tensors, 'the optimizer and every intermediate were disposed');
    assert.ok(timing.reps >= 3 && timing.wallMs > 0 && timing.ms >= 0);
    assert.ok(maxRelativeDifference(weightsOf(model), before) > 1e-6, 'the weights moved');
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  });

  test('names each bad argument', () => {
    const model = denseModel(1);
    const data = batch(4);
    assertThrowsMentioning(() => timeTrainingStep(null as never), 'timeTrainingStep', 'args');
    assertThrowsMentioning(() => timeTrainingStep({ model: {} as never, loss: mse, batch: data }), 'model', 'a tf.LayersModel');
    assertThrowsMentioning(() => timeTrainingStep({ model, loss: 'mse' as never, batch: data }), 'loss', 'a function');
    assertThrowsMentioning(() => timeTrainingStep({ model, loss: mse, batch: { xs: data.xs } as never }), 'batch', 'live tensors');
    assertThrowsMentioning(() => timeTrainingStep({ model, loss: mse, batch: data, optimizer: tf.train.sgd(0.1) as never }), 'optimizer', 'a function that makes');
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  });
});
