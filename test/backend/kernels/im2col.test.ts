import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { col2im, im2col } from '../../../src/backend/kernels/im2col';
import { randomValues } from '../../helpers/kernelParity';

test('im2col gathers the 2x2 patches of a hand-checkable 3x3 image with "valid" padding', () => {
  // x = [[1, 2, 3], [4, 5, 6], [7, 8, 9]] (one channel); 2x2 patches in row-major order.
  const g = tf.backend_util.computeConv2DInfo([1, 3, 3, 1], [2, 2, 1, 1], 1, 1, 'valid');
  const out = new Float32Array(4 * 4);
  im2col(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), g, out);
  assert.deepEqual([...out], [1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9]);
});

test('col2im is the adjoint of im2col: <im2col(x), c> = <x, col2im(c)>', () => {
  for (const [shape, filter, strides, pad, dilations] of [
    [[2, 7, 6, 3], [3, 3, 3, 1], 1, 'same', 1],
    [[1, 9, 9, 2], [3, 2, 2, 1], 2, 'valid', 1],
    [[1, 9, 9, 1], [2, 2, 1, 1], 1, 'same', 2],
  ] as [[number, number, number, number], [number, number, number, number], number, 'same' | 'valid', number][]) {
    const g = tf.backend_util.computeConv2DInfo(shape, filter, strides, dilations, pad);
    const size = shape.reduce((a, b) => a * b, 1);
    const colsSize = g.batchSize * g.outHeight * g.outWidth * g.filterHeight * g.filterWidth * g.inChannels;
    const x = randomValues(size, 1);
    const c = randomValues(colsSize, 2);
    const patches = new Float32Array(colsSize);
    im2col(x, g, patches);
    const back = new Float32Array(size);
    col2im(c, g, back);
    let lhs = 0;
    let rhs = 0;
    for (let i = 0; i < colsSize; i++) lhs += patches[i] * c[i];
    for (let i = 0; i < size; i++) rhs += x[i] * back[i];
    assert.ok(Math.abs(lhs - rhs) <= 1e-4 * Math.max(1, Math.abs(lhs)), `${JSON.stringify(shape)}: ${lhs} vs ${rhs}`);
  }
});
