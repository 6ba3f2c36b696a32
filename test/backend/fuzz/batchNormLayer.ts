import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { BATCH_NORM_LAYER } from '../../../src/backend/kernels';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family } from './harness';

/**
 * tfjs-layers' BatchNormalization in training: the input, γ and β gradients of one step, and the
 * moving statistics after it, against the layer's own `call` on stock cpu (the moments
 * differentiated op by op). Ranks 2-4, batches of one sample per channel up, channel counts on
 * and off the SIMD width of 4, constant channels (zero variance), and the layer's momentum and ε.
 */

export interface BatchNormLayerCase {
  x: number[];
  momentum: number;
  epsilon: number;
  /** Every fourth channel holds one value (its batch variance is 0). */
  constantChannels: boolean;
  seed: number;
}

const uniform = (shape: number[], seed: number) => randomValues(shape.reduce((a, b) => a * b, 1), seed);

/** The case's input values. */
export function inputValues(c: BatchNormLayerCase): Float32Array {
  const channels = c.x[c.x.length - 1];
  const v = Float32Array.from(uniform(c.x, c.seed), (u) => 3 * u);
  if (c.constantChannels) v.forEach((_, i) => i % channels % 4 === 1 && (v[i] = 0.5));
  return v;
}

/** The layer's γ, β, moving mean and moving variance for the case. */
export function layerWeights(c: BatchNormLayerCase): tf.Tensor[] {
  const channels = c.x[c.x.length - 1];
  const positive = (seed: number) => tf.tensor(uniform([channels], seed).map((u) => Math.abs(u) + 0.05), [channels]);
  return [positive(c.seed + 1), tf.tensor(uniform([channels], c.seed + 2), [channels]), tf.tensor(uniform([channels], c.seed + 3), [channels]), positive(c.seed + 4)];
}

/** A built BatchNormalization layer holding the case's weights; the caller frees them with {@link disposeLayer}. */
export function layerOf(c: BatchNormLayerCase): tf.layers.Layer {
  const layer = tf.layers.batchNormalization({ momentum: c.momentum, epsilon: c.epsilon });
  layer.build(c.x);
  const weights = layerWeights(c);
  layer.setWeights(weights);
  tf.dispose(weights);
  return layer;
}

/** Frees a layer's weights (a layer never applied to a symbolic input cannot be disposed whole). */
export function disposeLayer(layer: tf.layers.Layer): void {
  layer.weights.forEach((w) => w.dispose());
}

export const batchNormLayerCases: fc.Arbitrary<BatchNormLayerCase> = fc.record({
  x: fc.tuple(fc.array(dim(5), { minLength: 1, maxLength: 3 }), fc.oneof(dim(7), fc.constantFrom(4, 8, 12, 16))).map(([lead, c]) => [...lead, c]),
  momentum: fc.constantFrom(0.99, 0.9, 0),
  epsilon: fc.constantFrom(1e-3, 1e-5, 0.1),
  constantChannels: fc.boolean(),
  seed: fc.integer({ min: 1, max: 1e6 }),
});

/**
 * An input gradient's scale, `γ·s·max|dy|` (s from the batch's variance): what dx's terms are made
 * of before they cancel. A channel with zero variance (or a batch of one) has dx = 0, and both
 * sides carry rounding of this size there.
 */
function inputGradientScale(c: BatchNormLayerCase): number {
  const channels = c.x[c.x.length - 1];
  const x = inputValues(c);
  const gamma = uniform([channels], c.seed + 1).map((u) => Math.abs(u) + 0.05);
  const rows = x.length / channels;
  let worst = 0;
  for (let k = 0; k < channels; k++) {
    let mean = 0;
    for (let r = 0; r < rows; r++) mean += x[r * channels + k] / rows;
    let variance = 0;
    for (let r = 0; r < rows; r++) variance += (x[r * channels + k] - mean) ** 2 / rows;
    worst = Math.max(worst, gamma[k] / Math.sqrt(variance + c.epsilon));
  }
  return worst;
}

export const batchNormLayerTraining: Family<BatchNormLayerCase> = {
  name: 'tf.layers.batchNormalization in training (the moments and the normalization as one op)',
  kernels: [BATCH_NORM_LAYER],
  cases: batchNormLayerCases,
  describe: (c) => `x ${dims(c.x)} momentum ${c.momentum} epsilon ${c.epsilon}${c.constantChannels ? ' with constant channels' : ''}`,
  run: (c) => {
    const layer = layerOf(c);
    const x = tf.variable(tf.tensor(inputValues(c), c.x));
    try {
      const upstream = tf.tensor(uniform(c.x, c.seed + 5), c.x);
      const [gamma, beta] = layer.trainableWeights.map((w) => w.read() as tf.Variable);
      const { value, grads } = tf.variableGrads(() => tf.sum(tf.mul(layer.apply(x, { training: true }) as tf.Tensor, upstream)) as tf.Scalar, [x, gamma, beta]);
      value.dispose();
      // The moving statistics after the step: copies that outlive the layer.
      const moving = layer.nonTrainableWeights.map((w) => tf.clone(w.read()));
      return [grads[x.name], grads[gamma.name], grads[beta.name], ...moving];
    } finally {
      x.dispose();
      disposeLayer(layer);
    }
  },
  scaleFloor: (c, output) => (output === 0 ? inputGradientScale(c) : 0),
  tolerance: 2e-5,
};
