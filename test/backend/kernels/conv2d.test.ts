import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import { CONV_CASES, describeCase } from '../../helpers/convCases';
import { expectNoLeak, expectParity, PARITY_BACKENDS, randomTensor, useBackend } from '../../helpers/kernelParity';

test('Conv2D matches stock cpu across strides, paddings, shapes and batch sizes', async () => {
  for (const [i, c] of CONV_CASES.entries()) {
    await expectParity(`conv2d ${describeCase(c)}`, () => tf.conv2d(randomTensor(c.x, i) as tf.Tensor4D, randomTensor(c.filter, 100 + i) as tf.Tensor4D, c.strides, c.pad, 'NHWC', 1, c.rounding));
  }
});

test('Conv2D matches stock cpu with dilations', async () => {
  for (const [x, filter, dilations, pad] of [
    [[2, 9, 9, 3], [3, 3, 3, 4], 2, 'same'],
    [[1, 11, 10, 2], [2, 3, 2, 3], [3, 2], 'valid'],
  ] as [number[], number[], number | [number, number], 'same' | 'valid'][]) {
    await expectParity(`conv2d dilations ${JSON.stringify(dilations)}`, () => tf.conv2d(randomTensor(x, 1) as tf.Tensor4D, randomTensor(filter, 2) as tf.Tensor4D, 1, pad, 'NHWC', dilations));
  }
});

test('FusedConv2D (bias + activation) matches stock cpu', async () => {
  for (const activation of ['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'] as const) {
    await expectParity(`fused conv2d ${activation}`, () =>
      tf.fused.conv2d({
        x: randomTensor([2, 7, 7, 3], 1) as tf.Tensor4D,
        filter: randomTensor([3, 3, 3, 4], 2) as tf.Tensor4D,
        strides: 1,
        pad: 'same',
        bias: randomTensor([4], 3),
        activation,
        preluActivationWeights: activation === 'prelu' ? randomTensor([4], 4) : undefined,
        leakyreluAlpha: 0.2,
      }),
    );
  }
});

test('Conv2D and FusedConv2D leak no tensor on cpu (JS and native products)', async () => {
  for (const backend of PARITY_BACKENDS.filter((b) => b !== 'wasm')) {
    await useBackend(backend, true);
    const x = randomTensor([2, 6, 6, 3], 1) as tf.Tensor4D;
    const f = randomTensor([3, 3, 3, 2], 2) as tf.Tensor4D;
    const bias = randomTensor([2], 3);
    await expectNoLeak('Conv2D', async () => {
      const y = tf.tidy(() => tf.add(tf.conv2d(x, f, 1, 'same'), tf.fused.conv2d({ x, filter: f, pad: 'same', strides: 1, bias, activation: 'relu' })));
      await y.data();
      y.dispose();
    });
    tf.dispose([x, f, bias]);
  }
});
