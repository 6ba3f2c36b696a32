import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import { expectNoLeak, expectParity, randomTensor, useBackend } from '../../helpers/kernelParity';

const EPSILON = 1e-3;

function positive(t: tf.Tensor): tf.Tensor {
  return tf.add(tf.abs(t), 0.5);
}

test('FusedBatchNorm forward matches stock cpu (channels a multiple of 4 take the SIMD pass, others the stock kernel)', async () => {
  const cases: [number[], boolean, boolean][] = [
    [[16, 28, 28, 16], true, true],
    [[4, 7, 7, 32], true, true],
    [[5, 3, 3, 8], false, true], // no scale
    [[5, 3, 3, 8], true, false], // no offset
    [[32, 12], true, true], // 2-D, as after a dense layer
    [[2, 4, 4, 3], true, true], // 3 channels: stock kernel
  ];
  for (const [i, [shape, withScale, withOffset]] of cases.entries()) {
    const c = shape[shape.length - 1];
    await expectParity(`batchNorm x [${shape}] scale ${withScale} offset ${withOffset}`, () => {
      const x = tf.add(randomTensor(shape, 40 + i), 3); // a large mean, so x − mean matters
      const mean = tf.add(randomTensor([c], 50 + i), 3);
      const variance = positive(randomTensor([c], 60 + i));
      const offset = withOffset ? randomTensor([c], 70 + i) : undefined;
      const scale = withScale ? randomTensor([c], 80 + i) : undefined;
      return tf.batchNorm(x, mean, variance, offset, scale, EPSILON);
    });
  }
});

test('FusedBatchNorm forward with statistics shaped [1, 1, 1, C] matches stock cpu', async () => {
  await expectParity('batchNorm with [1, 1, 1, 8] statistics', () => {
    const x = randomTensor([3, 5, 5, 8], 90);
    const stat = (seed: number) => tf.reshape(randomTensor([8], seed), [1, 1, 1, 8]);
    return tf.batchNorm(x, stat(91), tf.reshape(positive(randomTensor([8], 92)), [1, 1, 1, 8]), stat(93), stat(94), EPSILON);
  });
});

test('FusedBatchNorm forward leaks no tensor and no backend buffer', async () => {
  await useBackend('wasm', true);
  const x = randomTensor([2, 4, 4, 8], 1);
  const mean = randomTensor([8], 2);
  const variance = positive(randomTensor([8], 3));
  await expectNoLeak('FusedBatchNorm', async () => {
    const y = tf.batchNorm(x, mean, variance, undefined, undefined, EPSILON);
    await y.data();
    y.dispose();
  });
  tf.dispose([x, mean, variance]);
});
