import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GradientAccumulator } from '../../../src/core/gradientAccumulator';
import { GroupNormalization, groupNorm, groupNormalization } from '../../../src/core/norm/groupNormalization';
import { assertNoLeak, assertThrowsMentioning } from '../../helpers';
import { assertClose, groupNormReference, perturbWeights, sampleInput, saveAndLoad } from '../../helpers/norm';

/** How many kernels one forward and backward pass of `f` (of a [2, channels] input) runs. */
async function kernelsOfGradient(f: (x: tf.Tensor) => tf.Tensor, channels: number): Promise<number> {
  const x = sampleInput([2, channels]);
  const info = await tf.profile(() => tf.grad((t: tf.Tensor) => tf.sum(tf.square(f(t))))(x));
  x.dispose();
  (info.result as tf.Tensor).dispose();
  return info.kernels.length;
}

describe('groupNorm (pure function)', () => {
  test('runs as many kernels forward and backward for 256 channels in one group as for 8: its statistics broadcast, never tile', async () => {
    const layerNorm = (x: tf.Tensor) => groupNorm(x, null, null, 1, 1e-5);
    const [narrow, wide] = [await kernelsOfGradient(layerNorm, 8), await kernelsOfGradient(layerNorm, 256)];
    assert.equal(wide, narrow, `kernels for 8 channels ${narrow}, for 256 ${wide}`);
    // The check can fail: tf.tile's gradient runs a slice and an add per repeat, so a function
    // that tiles a statistic to the features' width runs more kernels the wider they are.
    const tiled = (x: tf.Tensor) => tf.mul(x, tf.tile(tf.sum(x, 1, true), [1, x.shape[1]!]));
    const [tiledNarrow, tiledWide] = [await kernelsOfGradient(tiled, 8), await kernelsOfGradient(tiled, 256)];
    assert.ok(tiledWide > tiledNarrow + 200, `tiled: kernels for 8 channels ${tiledNarrow}, for 256 ${tiledWide}`);
  });

  test('matches a float64 reference written from the definition to 1e-5', () => {
    const shape = [2, 3, 2, 4];
    const x = sampleInput(shape);
    const gamma = tf.tensor1d([0.5, 1.5, -1, 2]);
    const beta = tf.tensor1d([0.1, -0.2, 0.3, 0]);
    const y = groupNorm(x, gamma, beta, 2, 1e-5);
    const expected = groupNormReference(x.dataSync(), shape, gamma.dataSync(), beta.dataSync(), 2, 1e-5);
    assertClose(y.dataSync(), expected, 1e-5, 'groupNorm');
    tf.dispose([x, gamma, beta, y]);
  });

  test('a hand-computed 2-D case: one sample, channels [1, 3 | 2, 6] in two groups', () => {
    // Group 1 = {1, 3}: mean 2, variance 1 -> [-1, 1]. Group 2 = {2, 6}: mean 4, variance 4 -> [-1, 1]
    // (epsilon 1e-12 is negligible at this tolerance).
    const y = groupNorm(tf.tensor2d([[1, 3, 2, 6]]), null, null, 2, 1e-12);
    assertClose(y.dataSync(), [-1, 1, -1, 1], 1e-6);
    y.dispose();
  });

  test('groups = 1 on NHWC is layer normalization over (H, W, C)', () => {
    const x = sampleInput([3, 4, 4, 6]);
    const layerNorm = tf.layers.layerNormalization({ axis: [1, 2, 3], epsilon: 1e-5 });
    const expected = layerNorm.apply(x) as tf.Tensor; // gamma = 1, beta = 0 at initialization
    const y = groupNorm(x, null, null, 1, 1e-5);
    assertClose(y.dataSync(), expected.dataSync(), 1e-5, 'groups = 1 vs layerNormalization');
    tf.dispose([x, expected, y]);
  });

  test('groups = channels is instance normalization', () => {
    const x = sampleInput([2, 5, 3, 4]);
    const expected = tf.tidy(() => {
      const { mean, variance } = tf.moments(x, [1, 2], true); // per sample, per channel
      return x.sub(mean).div(variance.add(1e-5).sqrt());
    });
    const y = groupNorm(x, null, null, 4, 1e-5);
    assertClose(y.dataSync(), expected.dataSync(), 1e-5, 'groups = C vs instance norm');
    tf.dispose([x, expected, y]);
  });

  test('a sample\'s output does not depend on the rest of its batch', () => {
    const x = sampleInput([4, 3, 3, 8]);
    const whole = groupNorm(x, null, null, 4, 1e-5);
    const alone = tf.tidy(() => groupNorm(x.slice(2, 1), null, null, 4, 1e-5));
    const fromWhole = tf.tidy(() => whole.slice(2, 1));
    assertClose(alone.dataSync(), fromWhole.dataSync(), 1e-6);
    tf.dispose([x, whole, alone, fromWhole]);
  });

  test('a channel axis other than the last gives the transposed channels-last result', () => {
    const nhwc = sampleInput([2, 3, 3, 4]);
    const nchw = tf.transpose(nhwc, [0, 3, 1, 2]);
    const gamma = tf.tensor1d([1, 2, 3, 4]);
    const expected = tf.tidy(() => tf.transpose(groupNorm(nhwc, gamma, null, 2, 1e-5), [0, 3, 1, 2]));
    const y = groupNorm(nchw, gamma, null, 2, 1e-5, 1);
    assertClose(y.dataSync(), expected.dataSync(), 1e-6);
    tf.dispose([nhwc, nchw, gamma, expected, y]);
  });

  test('gradients match central finite differences of the float64 reference', () => {
    const shape = [2, 2, 2, 4];
    const groups = 2;
    const epsilon = 1e-3;
    const x = sampleInput(shape, 5);
    const gamma = tf.tensor1d([0.5, 1.5, -1, 2]);
    const beta = tf.tensor1d([0.1, -0.2, 0.3, 0]);
    const weights = tf.randomNormal(shape, 0, 1, 'float32', 9); // loss = sum(weights * y): every output matters
    const [gx, gGamma, gBeta] = tf.grads((a: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(weights, groupNorm(a, g, b, groups, epsilon))))([
      x,
      gamma,
      beta,
    ]);
    const w = weights.dataSync();
    const loss = (xv: ArrayLike<number>, gv: ArrayLike<number>, bv: ArrayLike<number>) =>
      groupNormReference(xv, shape, gv, bv, groups, epsilon).reduce((a, v, i) => a + v * w[i], 0);
    const numeric = (values: Float64Array, f: (v: Float64Array) => number): Float64Array =>
      values.map((_, i) => {
        const h = 1e-5;
        const up = Float64Array.from(values);
        const down = Float64Array.from(values);
        up[i] += h;
        down[i] -= h;
        return (f(up) - f(down)) / (2 * h);
      });
    const xv = Float64Array.from(x.dataSync());
    const gv = Float64Array.from(gamma.dataSync());
    const bv = Float64Array.from(beta.dataSync());
    assertClose(gx.dataSync(), numeric(xv, (v) => loss(v, gv, bv)), 2e-3, 'dL/dx');
    assertClose(gGamma.dataSync(), numeric(gv, (v) => loss(xv, v, bv)), 2e-3, 'dL/dgamma');
    assertClose(gBeta.dataSync(), numeric(bv, (v) => loss(xv, gv, v)), 2e-3, 'dL/dbeta');
    tf.dispose([x, gamma, beta, weights, gx, gGamma, gBeta]);
  });

  test('bad input names the argument and what it accepts', () => {
    const x = tf.zeros([2, 3, 3, 6]);
    assertThrowsMentioning(() => groupNorm(x, null, null, 4, 1e-5), 'groupNorm', 'groups', 'divisor', '1, 2, 3, 6', 'got 4');
    assertThrowsMentioning(() => groupNorm(x, null, null, 0, 1e-5), 'groups', 'positive integer', 'got 0');
    assertThrowsMentioning(() => groupNorm(x, null, null, -2, 1e-5), 'groups', 'positive integer', 'got -2');
    assertThrowsMentioning(() => groupNorm(x, null, null, 1.5, 1e-5), 'groups', 'positive integer');
    assertThrowsMentioning(() => groupNorm(x, null, null, 2, 0), 'epsilon', '> 0', 'got 0');
    assertThrowsMentioning(() => groupNorm(x, null, null, 2, -1), 'epsilon', '> 0');
    assertThrowsMentioning(() => groupNorm(x, null, null, 2, 1e-5, 4), 'axis', '[1, 3]', 'got 4');
    assertThrowsMentioning(() => groupNorm(x, null, null, 2, 1e-5, 0), 'axis', 'batch', 'got 0');
    assertThrowsMentioning(() => groupNorm(x, null, null, 2, 1e-5, -4), 'axis', 'got -4');
    assertThrowsMentioning(() => groupNorm(tf.zeros([3]), null, null, 1, 1e-5), 'x', 'rank >= 2');
    assertThrowsMentioning(() => groupNorm(x, tf.ones([4]), null, 2, 1e-5), 'gamma', '[6]');
    x.dispose();
  });
});

describe('GroupNormalization layer', () => {
  test('applies groupNorm with its gamma and beta, in training and inference alike', () => {
    const layer = groupNormalization({ groups: 2, epsilon: 1e-5 });
    const x = sampleInput([2, 3, 3, 4]);
    layer.apply(x); // builds
    perturbWeights(layer);
    const [gamma, beta] = layer.getWeights();
    const expected = groupNormReference(x.dataSync(), x.shape, gamma.dataSync(), beta.dataSync(), 2, 1e-5);
    const inference = layer.apply(x) as tf.Tensor;
    const training = layer.apply(x, { training: true }) as tf.Tensor;
    assertClose(inference.dataSync(), expected, 1e-5, 'inference');
    assertClose(training.dataSync(), expected, 1e-5, 'training');
    tf.dispose([x, inference, training]);
    layer.dispose();
  });

  test('handles 2-D dense features', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 8, inputShape: [5] }), new GroupNormalization({ groups: 4 })] });
    const y = model.predict(tf.ones([3, 5])) as tf.Tensor;
    assert.deepEqual(y.shape, [3, 8]);
    assert.equal(model.layers[1].countParams(), 16);
    y.dispose();
    model.dispose();
  });

  test('center and scale false create no weights', () => {
    const layer = new GroupNormalization({ groups: 2, center: false, scale: false });
    const y = layer.apply(tf.ones([1, 4])) as tf.Tensor;
    assert.equal(layer.weights.length, 0);
    y.dispose();
  });

  test('survives model.save / tf.loadLayersModel with its config and weights', async () => {
    const model = tf.sequential({
      layers: [
        tf.layers.conv2d({ inputShape: [5, 5, 1], filters: 6, kernelSize: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
        new GroupNormalization({ groups: 3, epsilon: 1e-4, center: true, scale: true }),
      ],
    });
    perturbWeights(model.layers[1]);
    const loaded = await saveAndLoad(model);
    const layer = loaded.layers[1] as GroupNormalization;
    assert.ok(layer instanceof GroupNormalization);
    assert.equal(layer.groups, 3);
    assert.equal(layer.epsilon, 1e-4);
    const x = sampleInput([2, 5, 5, 1]);
    const a = model.predict(x) as tf.Tensor;
    const b = loaded.predict(x) as tf.Tensor;
    assertClose(b.dataSync(), a.dataSync(), 0, 'predictions after load');
    tf.dispose([x, a, b]);
    model.dispose();
    loaded.dispose();
  });

  test('training through GradientAccumulator leaks no tensors', () => {
    const model = tf.sequential({
      layers: [
        tf.layers.conv2d({ inputShape: [4, 4, 1], filters: 4, kernelSize: 3, useBias: false }),
        new GroupNormalization({ groups: 2 }),
        tf.layers.flatten(),
        tf.layers.dense({ units: 2 }),
      ],
    });
    const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2, varList: model.trainableWeights });
    const xs = sampleInput([2, 4, 4, 1]);
    const ys = tf.tensor2d([[1, 0], [0, 1]]);
    const gammaBefore = model.layers[1].getWeights()[0].dataSync().slice();
    assertNoLeak(() => {
      accumulator.step(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor));
    }, 4);
    assert.notDeepEqual(model.layers[1].getWeights()[0].dataSync(), gammaBefore, 'gamma was not trained');
    accumulator.dispose();
    model.dispose();
    tf.dispose([xs, ys]);
  });

  test('constructor and build reject bad arguments, naming them', () => {
    assertThrowsMentioning(() => new GroupNormalization({ groups: 0 }), 'GroupNormalization', 'groups', 'positive integer', 'got 0');
    assertThrowsMentioning(() => new GroupNormalization({ groups: -1 }), 'groups', 'got -1');
    assertThrowsMentioning(() => new GroupNormalization({ epsilon: 0 }), 'epsilon', '> 0');
    assertThrowsMentioning(() => new GroupNormalization({ axis: 0 }), 'axis', 'batch');
    assertThrowsMentioning(() => new GroupNormalization({ center: 'yes' as unknown as boolean }), 'center', 'true or false');
    const layer = new GroupNormalization({ groups: 5 });
    assertThrowsMentioning(() => layer.apply(tf.zeros([1, 3, 3, 8])), 'groups', 'divisor', '(8)', '1, 2, 4, 8', 'got 5');
    const axisLayer = new GroupNormalization({ groups: 1, axis: 3 });
    assertThrowsMentioning(() => axisLayer.apply(tf.zeros([1, 8])), 'axis', '[1, 1]', 'got 3');
  });
});
