import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BATCH_NORM_LAYER, installedFastKernels, uninstallFastKernels } from '../../../src/backend/kernels';
import { batchNormLayerInstalled, installBatchNormLayer, restoreBatchNormLayer } from '../../../src/backend/kernels/batchNormLayer';
import { fcParameters } from '../../helpers';
import { bitsOf as bits, expectNoLeak, PARITY_BACKENDS, useBackend, values } from '../../helpers/kernelParity';
import { BatchNormLayerCase, batchNormLayerCases, disposeLayer, inputValues, layerOf } from '../fuzz/batchNormLayer';

/**
 * tfjs-layers' BatchNormalization, wrapped by installFastKernels (batchNormLayer.ts): its
 * training forward pass and moving statistics stay the layer's own bit for bit, it hands the
 * backward pass one op, and it leaves every other case to the layer. The gradients themselves
 * are fuzzed against stock tfjs in test/backend/fuzz/batchNormLayer.ts.
 */

/** One training call of the case's layer: the output, then the moving mean and variance after it. */
function trainingCall(c: BatchNormLayerCase, options: { training: boolean; axis?: number } = { training: true }): tf.Tensor[] {
  const layer = layerOf(c);
  try {
    const y = layer.apply(tf.tensor(inputValues(c), c.x), { training: options.training }) as tf.Tensor;
    return [y, ...layer.nonTrainableWeights.map((w) => tf.clone(w.read()))];
  } finally {
    disposeLayer(layer);
  }
}

/** The kernels after the BatchNorm gradient kernel, in the order they ran. */
function afterNormGradient(names: string[]): string[] {
  const at = names.indexOf('TfjsAccumulateBatchNormGrad');
  assert.ok(at >= 0, `the BatchNorm gradient kernel ran (${names.join(' ')})`);
  return names.slice(at + 1);
}

async function withLayer<T>(wrapped: boolean, fn: () => Promise<T>): Promise<T> {
  if (wrapped) installBatchNormLayer();
  else restoreBatchNormLayer();
  try {
    return await fn();
  } finally {
    installBatchNormLayer();
  }
}

test('the wrapped layer trains forward as tfjs-layers does, bit for bit: output and moving statistics', async () => {
  await fc.assert(
    fc.asyncProperty(batchNormLayerCases, async (c) => {
      for (const set of PARITY_BACKENDS) {
        await useBackend(set, true);
        const ours = bits(await withLayer(true, () => values(() => trainingCall(c))));
        const stock = bits(await withLayer(false, () => values(() => trainingCall(c))));
        assert.deepEqual(ours, stock, `${JSON.stringify(c)} on ${set}`);
      }
    }),
    fcParameters(25),
  );
});

test('a training step hands the backward pass one op instead of the moments op by op', async () => {
  await useBackend('wasm', true);
  const c: BatchNormLayerCase = { x: [16, 7, 7, 8], momentum: 0.99, epsilon: 1e-3, constantChannels: false, seed: 3 };
  const kernels = async () => {
    const layer = layerOf(c);
    const x = tf.variable(tf.tensor(inputValues(c), c.x));
    const vars = [x, ...layer.trainableWeights.map((w) => w.read() as tf.Variable)];
    const profile = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(layer.apply(x, { training: true }) as tf.Tensor) as tf.Scalar, vars);
      tf.dispose([value, ...Object.values(grads)]);
    });
    x.dispose();
    disposeLayer(layer);
    return profile.kernels.map((k) => k.name);
  };
  const stock = await withLayer(false, kernels);
  const ours = await withLayer(true, kernels);
  // The moments' gradients (a Mean's division and broadcast, their adds) ran after tfjs's
  // BatchNorm gradient; in ours that kernel is the whole backward pass of the layer.
  assert.deepEqual(afterNormGradient(ours), [], ours.join(' '));
  assert.ok(afterNormGradient(stock).includes('RealDiv') && afterNormGradient(stock).includes('Tile'), stock.join(' '));
  assert.ok(ours.length < stock.length - 10, `ours runs ${ours.length} kernels, stock ${stock.length}`);
});

test('inference, another axis and no γ keep the layer own call; uninstalling puts it back', async () => {
  await useBackend('wasm', true);
  const c: BatchNormLayerCase = { x: [4, 3, 5, 4], momentum: 0.9, epsilon: 1e-3, constantChannels: false, seed: 5 };
  const built = (args: Parameters<typeof tf.layers.batchNormalization>[0]) => () => {
    const layer = tf.layers.batchNormalization(args);
    layer.build(c.x);
    return layer;
  };
  /** The output and (where tfjs 4.22 can differentiate the layer) the input gradient of one call. */
  const step = (make: () => tf.layers.Layer, training: boolean, gradient: boolean) => () => {
    const layer = make();
    const x = tf.tensor(inputValues(c), c.x);
    try {
      const y = layer.apply(x, { training }) as tf.Tensor;
      return gradient ? [y, tf.grad((v: tf.Tensor) => tf.sum(tf.square(layer.apply(v, { training }) as tf.Tensor)))(x)] : [y];
    } finally {
      disposeLayer(layer);
    }
  };
  // tfjs's own gradient of a layer normalizing axis 1 throws (a reshape of the wrong size).
  for (const [label, make, training, gradient] of [
    ['inference', () => layerOf(c), false, true],
    ['normalizing axis 1', built({ axis: 1 }), true, false],
    ['no gamma', built({ scale: false }), true, true],
  ] as const) {
    // tfjs 4.22 cannot train the layer without γ at all (it reads the missing weight): the same error then.
    const outcome = (wrapped: boolean) => withLayer(wrapped, () => values(step(make, training, gradient)).then(bits, (e: Error) => `threw ${e.message}`));
    const ours = await outcome(true);
    const stock = await outcome(false);
    assert.deepEqual(ours, stock, label);
  }
  const prototype = Object.getPrototypeOf(tf.layers.batchNormalization({})) as { call: unknown };
  restoreBatchNormLayer();
  const own = prototype.call;
  installBatchNormLayer();
  assert.notEqual(prototype.call, own);
  assert.ok(installedFastKernels('wasm').some((k) => k.kernel === BATCH_NORM_LAYER));
  // No kernel of the project on any backend: the layer's own call is back.
  uninstallFastKernels();
  assert.equal(batchNormLayerInstalled(), false);
  assert.equal(prototype.call, own);
  await useBackend('wasm', true);
  assert.equal(batchNormLayerInstalled(), true);
});

test('a layer whose fields are not the ones tfjs-layers 4.x has keeps its own call', async () => {
  await useBackend('wasm', true);
  const c: BatchNormLayerCase = { x: [8, 3, 3, 4], momentum: 0.99, epsilon: 1e-3, constantChannels: false, seed: 11 };
  const backward = async (edit: (layer: Record<string, unknown>) => void) => {
    const layer = layerOf(c);
    edit(layer as unknown as Record<string, unknown>);
    const x = tf.variable(tf.tensor(inputValues(c), c.x));
    const profile = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(layer.apply(x, { training: true }) as tf.Tensor) as tf.Scalar, [x]);
      tf.dispose([value, ...Object.values(grads)]);
    });
    x.dispose();
    // The layer's weight list still holds the real γ.
    disposeLayer(layer);
    return afterNormGradient(profile.kernels.map((k) => k.name));
  };
  assert.deepEqual(await backward(() => undefined), [], 'the layer as built runs fused');
  // γ that can be read but not written (a field of another shape than tfjs-layers 4.x's): the layer's own call, which only reads it.
  const own = await backward((layer) => {
    const gamma = layer.gamma as tf.LayerVariable;
    layer.gamma = { read: () => gamma.read() };
  });
  assert.ok(own.includes('RealDiv') && own.includes('Tile'), own.join(' '));
});

test('a training step through the wrapped layer leaks nothing, on every kernel set', async () => {
  const c: BatchNormLayerCase = { x: [3, 4, 4, 8], momentum: 0.99, epsilon: 1e-3, constantChannels: true, seed: 9 };
  for (const set of PARITY_BACKENDS) {
    await useBackend(set, true);
    const layer = layerOf(c);
    const x = tf.variable(tf.tensor(inputValues(c), c.x));
    const vars = [x, ...layer.trainableWeights.map((w) => w.read() as tf.Variable)];
    await expectNoLeak('BatchNormalization training step', () => {
      const { value, grads } = tf.variableGrads(() => tf.sum(layer.apply(x, { training: true }) as tf.Tensor) as tf.Scalar, vars);
      tf.dispose([value, ...Object.values(grads)]);
    });
    x.dispose();
    disposeLayer(layer);
  }
});
