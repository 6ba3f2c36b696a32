import * as tf from '@tensorflow/tfjs';
import { argumentError } from '../core/errors';
import { TimeCallArgs, Timing, timeCall } from './measure';

/** Options of {@link timeTrainingStep}. */
export interface TimeTrainingStepArgs {
  /** The model to train. Its weights change while it is timed. Required. */
  model: tf.LayersModel;
  /** Mean loss of a batch, `(ys, predictions) => scalar`, e.g. `tf.losses.softmaxCrossEntropy`. Required. */
  loss: (ys: tf.Tensor, predictions: tf.Tensor) => tf.Tensor;
  /** The batch every timed step trains on. Required. */
  batch: { xs: tf.Tensor; ys: tf.Tensor };
  /** Makes the optimizer the steps use; it is disposed afterwards. Default: `tf.train.sgd(0.01)`. */
  optimizer?: () => tf.Optimizer;
  /** How long and how often to time (see `timeCall`). Default: `timeCall`'s defaults. */
  timing?: TimeCallArgs;
}

/**
 * Times one ordinary training step (forward, backward, update with `optimizer.minimize`) on a
 * batch, after a warm-up: the unit every speed comparison in the tutorial is made in.
 *
 * Note: the model runs in training mode, as in `model.fit`, so Dropout and BatchNorm behave as
 * they do in training.
 */
export function timeTrainingStep(args: TimeTrainingStepArgs): Timing {
  const owner = 'timeTrainingStep';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object { model, loss, batch, optimizer?, timing? }', args);
  const { model, loss, batch } = args;
  if (!(model instanceof tf.LayersModel)) throw argumentError(owner, 'model', 'a tf.LayersModel', model);
  if (typeof loss !== 'function') throw argumentError(owner, 'loss', 'a function (ys, predictions) => scalar', loss);
  if (!(batch?.xs instanceof tf.Tensor) || !(batch?.ys instanceof tf.Tensor) || batch.xs.isDisposed || batch.ys.isDisposed) {
    throw argumentError(owner, 'batch', 'an object { xs, ys } of live tensors', batch);
  }
  if (args.optimizer !== undefined && typeof args.optimizer !== 'function') {
    throw argumentError(owner, 'optimizer', 'a function that makes a tf.Optimizer, e.g. () => tf.train.adam(), or left out', args.optimizer);
  }
  const optimizer = args.optimizer?.() ?? tf.train.sgd(0.01);
  if (!(optimizer instanceof tf.Optimizer)) throw argumentError(owner, 'optimizer', 'a function that returns a tf.Optimizer', optimizer);
  const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
  try {
    return timeCall(() => {
      // minimize returns nothing here (returnCost is false), so tidy frees every intermediate.
      tf.tidy(() => {
        optimizer.minimize(() => loss(batch.ys, model.apply(batch.xs, { training: true }) as tf.Tensor) as tf.Scalar, false, vars);
      });
    }, args.timing);
  } finally {
    optimizer.dispose();
  }
}
