import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { installFastKernels, uninstallFastKernels } from '../../../src/backend/kernels';
import { FUSED_CONV_2D_OP, FUSED_MAT_MUL_OP } from '../../../src/backend/kernels/fusedGradients';
import { fcParameters } from '../../helpers';
import { fusedMatMulGradient } from '../fuzz/products';
import { expectNoLeak, expectStockGradientBits, FAST_BACKENDS, PARITY_BACKENDS, randomTensor, relativeError, TOLERANCE, useBackend, values, withStockGradient } from '../../helpers/kernelParity';

/** Gradients of every input of a fused product (with bias), for each transpose setting. */
function fusedGradients(transposeA: boolean, transposeB: boolean, [m, k, n]: number[]): tf.Tensor[] {
  const a = randomTensor(transposeA ? [k, m] : [m, k], 1);
  const b = randomTensor(transposeB ? [n, k] : [k, n], 2);
  const bias = randomTensor([n], 3);
  const upstream = randomTensor([m, n], 4);
  const f = (x: tf.Tensor, w: tf.Tensor, c: tf.Tensor) => tf.sum(tf.mul(tf.fused.matMul({ a: x as tf.Tensor2D, b: w as tf.Tensor2D, bias: c, transposeA, transposeB }), upstream));
  return tf.grads(f)([a, b, bias]);
}

/** tfjs's own gradient (no replacement registered anywhere) against ours on each fast backend. */
async function expectTfjsParity(label: string, fn: () => tf.Tensor | tf.Tensor[]): Promise<void> {
  uninstallFastKernels();
  await tf.setBackend('cpu');
  assert.equal(tf.getGradient(FUSED_MAT_MUL_OP), undefined, 'the reference runs tfjs own gradients');
  assert.equal(tf.getGradient(FUSED_CONV_2D_OP), undefined);
  const expected = await values(fn);
  for (const name of FAST_BACKENDS) {
    await useBackend(name, true);
    const actual = await values(fn);
    actual.forEach((a, i) => {
      assert.deepEqual(a.shape, expected[i].shape, `${label} on ${name}: shape of gradient ${i}`);
      const err = relativeError(a.data, expected[i].data);
      assert.ok(err <= TOLERANCE, `${label} on ${name}: gradient ${i} differs by ${err.toExponential(2)}`);
    });
  }
}

test('fused matMul gradients match tfjs own for every transpose, shape and the bias', async () => {
  // Sizes above the small-product threshold (XNNPACK path) and below it (stock path), and square.
  for (const shape of [[64, 300, 96], [5, 7, 3], [40, 40, 40]]) {
    for (const transposeA of [false, true]) {
      for (const transposeB of [false, true]) {
        await expectTfjsParity(`fused matMul ${shape} tA=${transposeA} tB=${transposeB}`, () => fusedGradients(transposeA, transposeB, shape));
      }
    }
  }
});

test('a Dense model trains to the same weights, and skips its first layer input gradient', async () => {
  const model = () =>
    tf.sequential({
      layers: [
        tf.layers.dense({ inputShape: [300], units: 64, kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
        tf.layers.dense({ units: 10, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
      ],
    });
  const step = () => {
    const m = model();
    const xs = randomTensor([48, 300], 5);
    const vars = m.trainableWeights.map((w) => w.read() as tf.Variable);
    const { grads } = tf.variableGrads(() => tf.sum(tf.square(m.apply(xs) as tf.Tensor)) as tf.Scalar, vars);
    const out = vars.map((v) => grads[v.name].clone());
    tf.dispose(grads);
    m.dispose();
    return out;
  };
  await expectTfjsParity('Dense gradients', step);

  // Products run per step: forward 2, weight gradients 2, input gradient of the second layer 1.
  const products = async () => {
    const profile = await tf.profile(() => tf.dispose(step()));
    return profile.kernels.filter((k) => k.name === 'BatchMatMul' || k.name === '_FusedMatMul').length;
  };
  uninstallFastKernels();
  await tf.setBackend('cpu');
  const stock = await products();
  await useBackend('cpu', true);
  const ours = await products();
  assert.equal(ours, 5);
  assert.equal(stock, 6, 'tfjs computes the first layer input gradient too');
});

/** Gradients of every input of a fused convolution with bias. */
function convGradients(strides: number, pad: 'same' | 'valid', [n, h, ci, co]: number[]): tf.Tensor[] {
  const x = randomTensor([n, h, h, ci], 1);
  const filter = randomTensor([3, 3, ci, co], 2);
  const bias = randomTensor([co], 3);
  const f = (a: tf.Tensor, w: tf.Tensor, c: tf.Tensor) => {
    const y = tf.fused.conv2d({ x: a as tf.Tensor4D, filter: w as tf.Tensor4D, bias: c, strides, pad });
    return tf.sum(tf.mul(y, randomTensor(y.shape, 4)));
  };
  return tf.grads(f)([x, filter, bias]);
}

test('fused conv2d gradients match tfjs own for strides, padding and channel counts', async () => {
  for (const [strides, pad, shape] of [[1, 'same', [2, 9, 1, 8]], [2, 'valid', [2, 9, 4, 8]], [1, 'valid', [1, 6, 8, 4]]] as const) {
    await expectTfjsParity(`fused conv2d strides ${strides} ${pad} [${shape}]`, () => convGradients(strides, pad, [...shape]));
  }
});

test('a Conv2D model skips its first layer input gradient', async () => {
  const step = () => {
    const m = tf.sequential({
      layers: [
        tf.layers.conv2d({ inputShape: [8, 8, 1], filters: 4, kernelSize: 3, padding: 'same', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
        tf.layers.conv2d({ filters: 2, kernelSize: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
      ],
    });
    const xs = randomTensor([3, 8, 8, 1], 5);
    const vars = m.trainableWeights.map((w) => w.read() as tf.Variable);
    const { grads } = tf.variableGrads(() => tf.sum(tf.square(m.apply(xs) as tf.Tensor)) as tf.Scalar, vars);
    const out = vars.map((v) => grads[v.name].clone());
    tf.dispose(grads);
    m.dispose();
    return out;
  };
  await expectTfjsParity('Conv2D gradients', step);
  const inputGradients = async () => (await tf.profile(() => tf.dispose(step()))).kernels.filter((k) => k.name === 'Conv2DBackpropInput').length;
  uninstallFastKernels();
  await tf.setBackend('cpu');
  assert.equal(await inputGradients(), 2, 'tfjs computes both layers input gradients');
  for (const backend of FAST_BACKENDS) {
    await useBackend(backend, true);
    assert.equal(await inputGradients(), 1, `${backend}: only the second layer's`);
  }
});

test('the input gradient is still there when it is asked for', async () => {
  const fn = () => {
    const w = randomTensor([300, 64], 1);
    return tf.grad((x: tf.Tensor) => tf.sum(tf.square(tf.fused.matMul({ a: x as tf.Tensor2D, b: w as tf.Tensor2D }))))(randomTensor([48, 300], 2));
  };
  await expectTfjsParity('input gradient', fn);
  await expectTfjsParity('conv input gradient', () => {
    const w = randomTensor([3, 3, 2, 4], 1);
    return tf.grad((x: tf.Tensor) => tf.sum(tf.square(tf.fused.conv2d({ x: x as tf.Tensor4D, filter: w as tf.Tensor4D, strides: 1, pad: 'same' }))))(randomTensor([2, 5, 5, 2], 2));
  });
});

test('products of tfjs own kernels note their transposes too', async () => {
  await useBackend('wasm', true); // the gradient is registered
  await useBackend('cpu', false); // but cpu runs tfjs own kernel: square shapes still work there
  await expectNoLeak('square fused matMul gradients on stock cpu', () => tf.dispose(tf.tidy(() => fusedGradients(true, false, [40, 40, 40]))));
});

test('a square product from a kernel registered after the install fails with a named error instead of guessing', async () => {
  await useBackend('wasm', true);
  await useBackend('cpu', false);
  // A kernel registered later notes nothing: here one whose output is a copy of the stock one's.
  const config = tf.getKernel('_FusedMatMul', 'cpu') as tf.KernelConfig;
  const stock = config.kernelFunc;
  tf.unregisterKernel('_FusedMatMul', 'cpu');
  tf.registerKernel({
    ...config,
    kernelFunc: (args) => {
      const backend = args.backend as unknown as { readSync(id: object): Float32Array; makeTensorInfo(shape: number[], dtype: string, values: Float32Array): tf.TensorInfo; disposeData(id: object): void };
      const out = stock(args) as tf.TensorInfo;
      const copy = backend.makeTensorInfo(out.shape, out.dtype, backend.readSync(out.dataId).slice());
      backend.disposeData(out.dataId);
      return copy;
    },
  });
  try {
    assert.throws(() => tf.tidy(() => fusedGradients(true, false, [40, 40, 40])), /cannot tell which operand was transposed/);
    // Non-square shapes have one reading: those still work.
    const [da] = fusedGradients(true, false, [5, 7, 3]);
    assert.deepEqual(da.shape, [7, 5]);
    da.dispose();
  } finally {
    tf.unregisterKernel('_FusedMatMul', 'cpu');
    tf.registerKernel(config);
  }
  installFastKernels('cpu');
});

test('fused matMul and conv2d gradients leak no tensor', async () => {
  for (const backend of PARITY_BACKENDS) {
    await useBackend(backend, true);
    await expectNoLeak('fused matMul gradients', async () => {
      const grads = tf.tidy(() => [...fusedGradients(false, false, [64, 300, 96]), ...convGradients(1, 'same', [2, 9, 4, 8])]);
      await grads[0].data();
      tf.dispose(grads);
    });
  }
});

/** Values in [-4, 4). */
function valuesOf(shape: number[], seed: number): tf.Tensor {
  return tf.mul(randomTensor(shape, seed), 4);
}

test('fused matMul gradients without the upstream gradient reshapes are tfjs own, bit for bit', async () => {
  // The kernel fuzz's cases: batch axes, sizes from 0, both transposes, no, [n] and [1, n] bias.
  const family = fusedMatMulGradient;
  await fc.assert(
    fc.asyncProperty(family.cases, async (c) => expectStockGradientBits(FUSED_MAT_MUL_OP, `${family.name}: ${family.describe(c)}`, () => family.run(c))),
    fcParameters(40),
  );
});

test('a Dense layer backward pass reshapes its upstream gradient no more', async () => {
  await useBackend('wasm', true);
  const x = valuesOf([16, 32], 1);
  const w = tf.variable(valuesOf([32, 8], 2));
  const b = tf.variable(valuesOf([8], 3));
  const reshapes = async () => {
    const loss = () => tf.sum(tf.square(tf.fused.matMul({ a: x as tf.Tensor2D, b: w as unknown as tf.Tensor2D, bias: b }))) as tf.Scalar;
    const profile = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(loss, [w, b]);
      tf.dispose([value, ...Object.values(grads)]);
    });
    return profile.kernels.filter((k) => k.name === 'Reshape').length;
  };
  // tfjs reshapes the upstream gradient to the kernel's output shape, and the bias's sum back to
  // the bias's shape; the op's own reshapes (and theirs back) are the same for both.
  const stock = await withStockGradient(FUSED_MAT_MUL_OP, reshapes);
  const ours = await reshapes();
  assert.equal(stock - ours, 2, `tfjs ran ${stock} reshapes, we ran ${ours}`);
  await expectNoLeak('Dense gradients', () => {
    const { value, grads } = tf.variableGrads(() => tf.sum(tf.fused.matMul({ a: x as tf.Tensor2D, b: w as unknown as tf.Tensor2D, bias: b })) as tf.Scalar, [w, b]);
    tf.dispose([value, ...Object.values(grads)]);
  });
  tf.dispose([x, w, b]);
});
