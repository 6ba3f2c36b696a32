import * as tf from '@tensorflow/tfjs';
import { GradientAccumulator } from '../core/gradientAccumulator';
import type { TFJS_LOSS_NAMES } from './loss';

/**
 * The window every speed measurement of the parallel trainer times: `accumulationSteps` seeded
 * micro-batches of `microBatchSize` for a model, and the single-thread accumulator's run over
 * them. One definition, so that the trainer, the single thread and the independent processes
 * of `measureProcessLimit` all train the same window.
 */

/** A window's micro-batches as plain arrays, and their shapes. */
export interface WindowData {
  batches: { xs: Float32Array; ys: Float32Array }[];
  xsShape: number[];
  ysShape: number[];
}

/** Seeded random inputs and one-hot labels for `model`'s input shape and classes. */
export function windowData(model: tf.LayersModel, accumulationSteps: number, microBatchSize: number): WindowData {
  const inputShape = model.inputs[0].shape.slice(1) as number[];
  const classes = model.outputs[0].shape[1] as number;
  const batches = Array.from({ length: accumulationSteps }, (_, k) =>
    tf.tidy(() => ({
      xs: tf.randomNormal([microBatchSize, ...inputShape], 0, 1, 'float32', k).dataSync() as Float32Array,
      ys: tf.oneHot(tf.randomUniform([microBatchSize], 0, classes, 'int32', 1000 + k), classes).toFloat().dataSync() as Float32Array,
    })),
  );
  return { batches, xsShape: [microBatchSize, ...inputShape], ysShape: [microBatchSize, classes] };
}

/** A function that trains one window of `data` on `model` with a single-thread `GradientAccumulator`; `dispose` ends it. */
export function singleThreadWindow(model: tf.LayersModel, data: WindowData, loss: (typeof TFJS_LOSS_NAMES)[number]): { run: () => void; dispose: () => void } {
  const lossFn = tf.losses[loss] as (labels: tf.Tensor, predictions: tf.Tensor) => tf.Tensor;
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: data.batches.length, varList: model.trainableWeights });
  const run = () => {
    for (const d of data.batches) {
      tf.tidy(() => {
        const xs = tf.tensor(d.xs, data.xsShape);
        const ys = tf.tensor(d.ys, data.ysShape);
        accumulator.step(() => lossFn(ys, model.apply(xs, { training: true }) as tf.Tensor), { sampleCount: data.xsShape[0] });
      });
    }
  };
  return { run, dispose: () => accumulator.dispose() };
}
