import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';

interface Case {
  x: [number, number, number, number];
  filter: [number, number, number, number];
  strides: number | [number, number];
  pad: 'valid' | 'same' | [[number, number], [number, number], [number, number], [number, number]];
  dilations: number | [number, number];
}

// tfjs accepts strides > 1 or dilations > 1, not both, for depthwise convolutions, and its
// gradient rejects dilations > 1: dilated cases are checked on the kernels directly below.
const CASES: Case[] = [
  { x: [2, 8, 8, 3], filter: [3, 3, 3, 1], strides: 1, pad: 'same', dilations: 1 },
  { x: [2, 8, 8, 3], filter: [3, 3, 3, 2], strides: 1, pad: 'valid', dilations: 1 },
  { x: [1, 9, 7, 4], filter: [3, 3, 4, 1], strides: 2, pad: 'same', dilations: 1 },
  { x: [3, 10, 10, 2], filter: [3, 2, 2, 3], strides: [2, 1], pad: 'valid', dilations: 1 },
  { x: [2, 7, 7, 2], filter: [3, 3, 2, 1], strides: 1, pad: [[0, 0], [1, 0], [2, 1], [0, 0]], dilations: 1 },
];

const DILATED: Case[] = [
  { x: [2, 9, 9, 2], filter: [3, 3, 2, 2], strides: 1, pad: 'same', dilations: 2 },
  { x: [1, 11, 9, 3], filter: [2, 3, 3, 1], strides: 1, pad: 'valid', dilations: [3, 2] },
];

const describeCase = (c: Case) => `x [${c.x}] filter [${c.filter}] strides ${JSON.stringify(c.strides)} pad ${JSON.stringify(c.pad)} dilations ${JSON.stringify(c.dilations)}`;

function loss(c: Case, seed: number) {
  return (x: tf.Tensor4D, f: tf.Tensor4D) => {
    const y = tf.depthwiseConv2d(x, f, c.strides, c.pad, 'NHWC', c.dilations);
    return tf.sum(tf.mul(y, randomTensor(y.shape, seed))) as tf.Scalar;
  };
}

test('depthwise filter and input gradients match stock cpu across strides, paddings, dilations and multipliers', async () => {
  for (const [i, c] of CASES.entries()) {
    await expectParity(`depthwise gradients, ${describeCase(c)}`, () => {
      const x = randomTensor(c.x, 70 + i) as tf.Tensor4D;
      const f = randomTensor(c.filter, 80 + i) as tf.Tensor4D;
      return tf.grads((a: tf.Tensor, b: tf.Tensor) => loss(c, 90 + i)(a as tf.Tensor4D, b as tf.Tensor4D))([x, f]);
    });
  }
});

/** Sum of the elementwise product, in float64. */
async function dot(a: tf.Tensor, b: tf.Tensor): Promise<number> {
  const [x, y] = [await a.data(), await b.data()];
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * y[i];
  return s;
}

test('dilated depthwise gradient kernels are the adjoints of the (stock) dilated forward convolution', async () => {
  // A gradient kernel G is right when <G(dy), v> = <dy, conv(v)> for any v: this checks the
  // kernels against tfjs's forward depthwiseConv2d, which supports dilations.
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    for (const [i, c] of DILATED.entries()) {
      const x = randomTensor(c.x, 1 + i) as tf.Tensor4D;
      const f = randomTensor(c.filter, 2 + i) as tf.Tensor4D;
      const y = tf.depthwiseConv2d(x, f, c.strides, c.pad, 'NHWC', c.dilations);
      const dy = randomTensor(y.shape, 3 + i);
      const attrs = { strides: c.strides, dilations: c.dilations, pad: c.pad };
      const dx = tf.engine().runKernel('DepthwiseConv2dNativeBackpropInput', { dy, filter: f }, { ...attrs, inputShape: c.x }) as tf.Tensor;
      const df = tf.engine().runKernel('DepthwiseConv2dNativeBackpropFilter', { x, dy }, { ...attrs, filterShape: c.filter }) as tf.Tensor;
      const v = randomTensor(c.x, 4 + i) as tf.Tensor4D;
      const w = randomTensor(c.filter, 5 + i) as tf.Tensor4D;
      const lhsX = await dot(dx, v);
      const rhsX = await dot(dy, tf.depthwiseConv2d(v, f, c.strides, c.pad, 'NHWC', c.dilations));
      const lhsF = await dot(df, w);
      const rhsF = await dot(dy, tf.depthwiseConv2d(x, w, c.strides, c.pad, 'NHWC', c.dilations));
      const close = (a: number, b: number) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));
      assert.ok(close(lhsX, rhsX), `${backend} ${describeCase(c)}: <dx, v> = ${lhsX}, <dy, conv(v, f)> = ${rhsX}`);
      assert.ok(close(lhsF, rhsF), `${backend} ${describeCase(c)}: <dfilter, w> = ${lhsF}, <dy, conv(x, w)> = ${rhsF}`);
    }
  }
});

test('depthwise gradients leak no tensor and no backend buffer', async () => {
  const c = CASES[2];
  for (const backend of ['wasm', 'cpu'] as const) {
    await useBackend(backend, true);
    const x = randomTensor(c.x, 1) as tf.Tensor4D;
    const f = randomTensor(c.filter, 2) as tf.Tensor4D;
    await expectNoLeak('depthwise gradients', async () => {
      const grads = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.depthwiseConv2d(a as tf.Tensor4D, b as tf.Tensor4D, c.strides, c.pad)))([x, f]);
      await Promise.all(grads.map((g) => g.data()));
      tf.dispose(grads);
    });
    tf.dispose([x, f]);
  }
});
