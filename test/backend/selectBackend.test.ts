import * as tf from '@tensorflow/tfjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKEND_ENV_VAR, describeEnvironment, selectBackend } from '../../src/backend/selectBackend';
import { installedFastKernels, loadNativeBlas, setNativeThreads } from '../../src/backend/kernels';
import { nativeAvailable } from '../helpers/kernelParity';

const nativeBuilt = nativeAvailable();
/** A machine where the native addon was not built. */
const noNative = () => ({ available: false as const, reason: 'not built (test)' });

const tfjsNodeInstalled = (() => {
  try {
    require.resolve('@tensorflow/tfjs-node');
    return true;
  } catch {
    return false;
  }
})();

/** Collects notices instead of printing them. */
function collector(): { notices: string[]; onNotice: (m: string) => void } {
  const notices: string[] = [];
  return { notices, onNotice: (m) => notices.push(m) };
}

test('with no preference and no native addon it picks tfjs-node, else wasm with the project kernels, printing nothing', async () => {
  const { notices, onNotice } = collector();
  const report = await selectBackend(undefined, { env: {}, onNotice, loadNative: noNative });
  assert.equal(report.requested, 'auto');
  assert.equal(report.source, 'default');
  if (tfjsNodeInstalled) {
    assert.equal(report.backend, 'tensorflow');
    return;
  }
  assert.equal(report.backend, 'wasm');
  assert.equal(tf.getBackend(), 'wasm');
  assert.ok(report.fastKernels);
  assert.equal(report.tfjsNode.available, false);
  // tfjs-node and the addon are simply not there, the normal case: the report says why, and a
  // program that calls selectBackend() on every run prints nothing.
  assert.equal(report.tfjsNode.reason, `not installed (npm install @tensorflow/tfjs-node@${tf.version.tfjs})`);
  assert.deepEqual(notices, []);
  assert.deepEqual(report.notices, []);
  assert.equal(report.wasm.simd, true, 'Node 20 runs WebAssembly SIMD');
  assert.equal(report.wasm.reason, null);
  assert.ok(report.kernelsReplaced.some((k) => k.kernel === 'Conv2DBackpropFilter' && k.backend === 'wasm'));
  assert.deepEqual(report.native, { available: false, active: false, reason: 'not built (test)', path: null, info: null });
  const text = describeEnvironment(report);
  assert.match(text, /^native: not used \(not built \(test\)\)$/m);
  assert.match(text, /^tfjs-node: not used \(not installed \(npm install @tensorflow\/tfjs-node@4\.22\.0\)\)$/m);
});

test('without the wasm package it falls through to cpu quietly, unless wasm was asked for by name', async () => {
  /** What `require` throws for a package that is not installed. */
  const missing = (name: string) => () => {
    throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
  };
  const notInstalled = missing('@tensorflow/tfjs-backend-wasm');
  const quiet = collector();
  const report = await selectBackend(undefined, { env: {}, onNotice: quiet.onNotice, loadNative: noNative, loadWasm: notInstalled, loadTfjsNode: missing('@tensorflow/tfjs-node') });
  assert.equal(report.backend, 'cpu');
  assert.ok(report.fastKernels);
  assert.deepEqual(quiet.notices, []);
  assert.equal(report.wasm.reason, `not installed (npm install @tensorflow/tfjs-backend-wasm@${tf.version.tfjs})`);
  assert.match(describeEnvironment(report), /^wasm: not used \(not installed \(npm install @tensorflow\/tfjs-backend-wasm@4\.22\.0\)\)$/m);
  // Asked for by name: one notice with the install command; strict makes it an error.
  const asked = collector();
  assert.equal((await selectBackend('wasm', { onNotice: asked.onNotice, loadWasm: notInstalled })).backend, 'cpu');
  assert.deepEqual(asked.notices, ['tfjs-accumulate: wasm backend unavailable (@tensorflow/tfjs-backend-wasm is not installed (npm install @tensorflow/tfjs-backend-wasm@4.22.0)); trying cpu.']);
  await assert.rejects(selectBackend('wasm', { strict: true, loadWasm: notInstalled }), /the wasm backend could not start: @tensorflow\/tfjs-backend-wasm is not installed/);
  // A package that is there but broken is no absence: one notice even under "auto".
  const broken = collector();
  const report2 = await selectBackend(undefined, {
    env: {},
    onNotice: broken.onNotice,
    loadNative: noNative,
    loadTfjsNode: missing('@tensorflow/tfjs-node'),
    loadWasm: () => {
      throw new Error('wasm binary damaged');
    },
  });
  assert.equal(report2.backend, 'cpu');
  assert.deepEqual(broken.notices, ['tfjs-accumulate: wasm backend unavailable (wasm binary damaged); trying cpu.']);
  await selectBackend('wasm');
});

test('with no preference it picks the native kernels when the addon loads, at one thread', { skip: tfjsNodeInstalled || !nativeBuilt }, async () => {
  const { notices, onNotice } = collector();
  const report = await selectBackend(undefined, { env: {}, onNotice });
  assert.equal(report.backend, 'wasm', 'the native products run on the wasm heap');
  assert.equal(tf.getBackend(), 'wasm');
  assert.ok(report.fastKernels);
  assert.equal(report.native.available, true);
  assert.equal(report.native.active, true);
  assert.match(report.native.path ?? '', /tfjs_accumulate_blas\.node$/);
  assert.ok(report.kernelsReplaced.some((k) => k.kernel === 'BatchMatMul' && k.backend === 'wasm' && k.description.startsWith('native:')));
  assert.ok(report.kernelsReplaced.some((k) => k.kernel === 'Conv2DBackpropFilter' && k.description.startsWith('native:')));
  assert.deepEqual(notices, [], "tfjs-node's absence is no notice");
  const text = describeEnvironment(report);
  assert.match(text, /^backend: wasm \+ tfjs-accumulate native kernels \(requested "auto" by default\)/);
  if (report.native.info?.blas === 'OpenBLAS') {
    assert.equal(report.native.info.threads, 1);
    assert.match(text, /^native: in use: OpenBLAS \d+\.\d+\.\d+ .*, core \w+, 1 thread$/m);
  }
});

test('nativeThreads: "all" gives the BLAS every core, never more; a bad count is rejected', { skip: !nativeBuilt }, async () => {
  const cores = require('os').cpus().length;
  try {
    const report = await selectBackend('native', { nativeThreads: 'all' });
    if (report.native.info?.blas === 'OpenBLAS') assert.equal(report.native.info.threads, cores);
    await assert.rejects(selectBackend('native', { nativeThreads: cores + 1 }), new RegExp(`selectBackend: nativeThreads must be an integer from 1 to ${cores} \\(this machine's cores\\), "all", or left out; got ${cores + 1}`));
    await assert.rejects(selectBackend('native', { nativeThreads: 0 }), /nativeThreads must be an integer/);
    const one = await selectBackend('native');
    if (one.native.info?.blas === 'OpenBLAS') assert.equal(one.native.info.threads, 1, 'the default is one thread again');
  } finally {
    setNativeThreads(1);
  }
});

test('asking for native where the addon is absent costs one notice and falls through to wasm; strict makes it an error', async () => {
  const { notices, onNotice } = collector();
  const report = await selectBackend('native', { onNotice, loadNative: noNative });
  assert.equal(report.backend, 'wasm');
  assert.equal(report.native.active, false);
  assert.deepEqual(notices, ['tfjs-accumulate: native backend unavailable (the native addon not built (test)); trying wasm.']);
  await assert.rejects(selectBackend('native', { strict: true, loadNative: noNative }), /selectBackend: the native backend could not start: the native addon not built \(test\)/);
  // The real addon, where built, is untouched by the stand-in.
  assert.equal(loadNativeBlas().available, nativeBuilt);
});

test('a bad preference is rejected, naming the parameter and the accepted values', async () => {
  await assert.rejects(selectBackend('gpu' as never), /selectBackend: preference must be one of "auto", "tensorflow", "native", "native-cpu", "wasm", "cpu", "wasm-stock", "cpu-stock", or left out; got "gpu"/);
  await assert.rejects(selectBackend(undefined, { env: { [BACKEND_ENV_VAR]: 'fast' } }), /selectBackend: the TFJS_ACCUMULATE_BACKEND environment variable must be one of .*"cpu-stock", or unset; got "fast"/);
});

test('the environment variable chooses the backend, and an argument overrides it', async () => {
  const fromEnv = await selectBackend(undefined, { env: { [BACKEND_ENV_VAR]: 'cpu' } });
  assert.equal(fromEnv.backend, 'cpu');
  assert.equal(fromEnv.source, 'environment');
  assert.ok(installedFastKernels('cpu').length > 0);
  const fromArgument = await selectBackend('wasm', { env: { [BACKEND_ENV_VAR]: 'cpu' } });
  assert.equal(fromArgument.backend, 'wasm');
  assert.equal(fromArgument.source, 'argument');
});

test('stock variants run tfjs kernels only', async () => {
  const cpu = await selectBackend('cpu-stock');
  assert.equal(cpu.backend, 'cpu');
  assert.equal(cpu.fastKernels, false);
  assert.deepEqual(cpu.kernelsReplaced, []);
  assert.deepEqual(installedFastKernels('cpu'), []);
  const wasm = await selectBackend('wasm-stock');
  assert.equal(wasm.backend, 'wasm');
  assert.equal(tf.getKernel('Conv2DBackpropFilter', 'wasm'), undefined, 'stock wasm has no filter gradient');
  // Selecting the fast variant again brings the kernels back.
  await selectBackend('wasm');
  assert.ok(tf.getKernel('Conv2DBackpropFilter', 'wasm'));
});

test('a broken tfjs-node costs one notice and the selection falls through to wasm', async () => {
  const { notices, onNotice } = collector();
  const report = await selectBackend('tensorflow', {
    onNotice,
    loadNative: noNative,
    loadTfjsNode: () => {
      throw new Error('libtensorflow.so.2: cannot open shared object file: No such file or directory\n    at Module._extensions');
    },
  });
  assert.equal(report.backend, 'wasm');
  assert.equal(report.tfjsNode.reason, 'libtensorflow.so.2: cannot open shared object file: No such file or directory');
  assert.equal(notices.length, 1);
  assert.match(notices[0], /^tfjs-accumulate: tensorflow backend unavailable \(.*libtensorflow.*\); trying native\.$/);
  // Not installed but asked for by name: one notice too, with nothing to fix but the install.
  const asked = collector();
  await selectBackend('tensorflow', { onNotice: asked.onNotice, loadNative: noNative, loadTfjsNode: () => require('@tensorflow/tfjs-node') });
  if (!tfjsNodeInstalled) assert.deepEqual(asked.notices, ['tfjs-accumulate: tensorflow backend unavailable (@tensorflow/tfjs-node is not installed); trying native.']);
});

test('a tfjs-node that loads without registering its backend also falls through', async () => {
  const { notices, onNotice } = collector();
  const report = await selectBackend('tensorflow', { onNotice, loadNative: noNative, loadTfjsNode: () => ({}) });
  assert.equal(report.backend, 'wasm');
  assert.match(notices[0], /no "tensorflow" backend was registered/);
});

test('strict makes an unavailable requested backend an error', async () => {
  await assert.rejects(
    selectBackend('tensorflow', { strict: true, loadTfjsNode: () => { throw new Error('not here'); } }),
    /selectBackend: the tensorflow backend could not start: @tensorflow\/tfjs-node did not load: not here/,
  );
});

test('describeEnvironment prints the backend, versions, wasm features and replaced kernels', async () => {
  const report = await selectBackend('wasm');
  const text = describeEnvironment(report);
  assert.match(text, /^backend: wasm \+ tfjs-accumulate kernels \(requested "wasm" by argument\)/);
  assert.match(text, /tfjs 4\.22\.0 \(core 4\.22\.0\), tfjs-backend-wasm 4\.22\.0/);
  assert.match(text, /wasm: SIMD yes/);
  assert.match(text, /Conv2DBackpropFilter \[wasm\]: added/);
});

test('describeEnvironment names the runtime: Node under Node, Deno with its own version under Deno', async () => {
  const report = await selectBackend('cpu');
  // This test runs under Node, where there is no Deno version to report.
  assert.equal(report.runtime.deno, null);
  assert.equal(report.runtime.node, process.versions.node);
  assert.match(describeEnvironment(report), new RegExp(`^runtime: Node ${process.versions.node} on ${process.platform} ${process.arch}, \\d+ CPUs$`, 'm'));
  // Deno's process.versions.node is its Node compatibility level, not Deno's version.
  const underDeno = { ...report, runtime: { ...report.runtime, node: '26.3.0', deno: '2.9.6' } };
  assert.match(describeEnvironment(underDeno), /^runtime: Deno 2\.9\.6 \(Node compatibility 26\.3\.0\) on /m);
  assert.doesNotMatch(describeEnvironment(underDeno), /runtime: Node/);
});

test('training works after selection on every fast and stock backend', async () => {
  for (const preference of ['wasm', 'cpu', 'cpu-stock', 'wasm-stock', ...(nativeBuilt ? (['native', 'native-cpu'] as const) : [])] as const) {
    await selectBackend(preference);
    const w = tf.variable(tf.zeros([3, 1]));
    const x = tf.ones([4, 3]);
    tf.train.sgd(0.1).minimize(() => tf.mean(tf.square(tf.sub(tf.matMul(x, w), 1))) as tf.Scalar);
    // d/dw mean((x·w − 1)^2) at w = 0 is −2 per weight, so one step of 0.1 gives 0.2.
    assert.deepEqual(Array.from(await w.data()).map((v) => Math.round(v * 1e6) / 1e6), [0.2, 0.2, 0.2], preference);
    tf.dispose([w, x]);
  }
});
