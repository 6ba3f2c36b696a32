import * as tf from '@tensorflow/tfjs';

/** Convolution geometries shared by the two conv gradient tests. */
export interface ConvCase {
  x: [number, number, number, number];
  filter: [number, number, number, number];
  strides: number | [number, number];
  pad: 'valid' | 'same' | number | [[number, number], [number, number], [number, number], [number, number]];
  rounding?: 'floor' | 'round' | 'ceil';
}

export const CONV_CASES: ConvCase[] = [
  { x: [2, 9, 9, 3], filter: [3, 3, 3, 4], strides: 1, pad: 'same' },
  { x: [2, 9, 9, 3], filter: [3, 3, 3, 4], strides: 1, pad: 'valid' },
  { x: [1, 10, 8, 2], filter: [3, 2, 2, 5], strides: 2, pad: 'same' },
  // (10 − 3) / 2 + 1 = 4.5: the forward pass never reads the last row and column.
  { x: [3, 10, 10, 2], filter: [3, 3, 2, 3], strides: 2, pad: 'valid' },
  { x: [2, 11, 9, 4], filter: [5, 3, 4, 2], strides: [2, 3], pad: 'same' },
  { x: [2, 8, 8, 3], filter: [3, 3, 3, 2], strides: 1, pad: [[0, 0], [1, 2], [2, 0], [0, 0]] },
  { x: [2, 9, 9, 3], filter: [3, 3, 3, 4], strides: 2, pad: 1, rounding: 'floor' },
  // Padding wider than the filter: the input gradient falls back to the stock kernel.
  { x: [1, 6, 6, 2], filter: [3, 3, 2, 2], strides: 1, pad: [[0, 0], [3, 3], [3, 3], [0, 0]] },
  { x: [1, 7, 7, 1], filter: [1, 1, 1, 8], strides: 1, pad: 'valid' },
  // One input channel with strides (the wasm input gradient's product + col2im path).
  { x: [2, 9, 8, 1], filter: [3, 3, 1, 4], strides: 2, pad: 'same' },
  { x: [2, 10, 10, 1], filter: [3, 3, 1, 5], strides: 2, pad: 'valid' },
  { x: [4, 6, 6, 8], filter: [2, 2, 8, 8], strides: 2, pad: 'valid' },
  { x: [1, 5, 5, 2], filter: [5, 5, 2, 3], strides: 1, pad: 'valid' },
  // The digit CNN's two convolutions at micro-batch 16.
  { x: [16, 28, 28, 1], filter: [3, 3, 1, 16], strides: 1, pad: 'same' },
  { x: [16, 14, 14, 16], filter: [3, 3, 16, 32], strides: 1, pad: 'same' },
];

export function describeCase(c: ConvCase): string {
  return `x [${c.x}] filter [${c.filter}] strides ${JSON.stringify(c.strides)} pad ${JSON.stringify(c.pad)}`;
}

/** A loss whose gradient reaching the conv output is a fixed random tensor. */
export function convLoss(c: ConvCase, weights: (shape: number[]) => tf.Tensor): (x: tf.Tensor4D, f: tf.Tensor4D) => tf.Scalar {
  return (x, f) => {
    const y = tf.conv2d(x, f, c.strides, c.pad, 'NHWC', 1, c.rounding);
    return tf.sum(tf.mul(y, weights(y.shape))) as tf.Scalar;
  };
}
