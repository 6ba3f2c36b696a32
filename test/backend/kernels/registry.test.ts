import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fastKernelPatches, installedFastKernels, installFastKernels, uninstallFastKernels } from '../../../src/backend/kernels';

test('installing twice registers each kernel once, and uninstalling restores the exact stock configs', async () => {
  await tf.setBackend('wasm');
  const names = fastKernelPatches('wasm').map((p) => p.kernelName);
  const stock = new Map(names.map((n) => [n, tf.getKernel(n, 'wasm')]));
  const warnings: unknown[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args);
  try {
    const first = installFastKernels('wasm');
    const second = installFastKernels('wasm');
    assert.deepEqual(second, first, 'a second install changes nothing');
    assert.equal(warnings.length, 0, 'no "already registered" warnings');
    for (const n of names) assert.notEqual(tf.getKernel(n, 'wasm'), stock.get(n), `${n} is replaced`);
    assert.ok(tf.getGradient('FusedBatchNorm'));
    uninstallFastKernels('wasm');
    for (const n of names) assert.equal(tf.getKernel(n, 'wasm'), stock.get(n), `${n} is the stock kernel again (or absent, as before)`);
    assert.deepEqual(installedFastKernels('wasm'), []);
  } finally {
    console.warn = warn;
  }
});

test('the BatchNorm gradient is shared: it stays while any backend has the kernels', async () => {
  const stockGradient = tf.getGradient('FusedBatchNorm');
  installFastKernels('wasm');
  installFastKernels('cpu');
  const ours = tf.getGradient('FusedBatchNorm');
  assert.notEqual(ours, stockGradient);
  uninstallFastKernels('cpu');
  assert.equal(tf.getGradient('FusedBatchNorm'), ours);
  uninstallFastKernels('wasm');
  assert.equal(tf.getGradient('FusedBatchNorm'), stockGradient);
});

test('installFastKernels rejects an unknown backend, naming the accepted ones', () => {
  assert.throws(() => installFastKernels('webgl' as never), /backendName must be one of "wasm", "cpu", "native", "native-cpu"; got "webgl"/);
});
