/**
 * The library in a web page, bundled by test/e2e/library.e2e.ts with esbuild the way a user's
 * bundler would (the package's ESM build through package.json `exports`, tfjs bundled in). It
 * exposes `window.suite`; the test calls it on each backend and asserts on what it returns, so
 * every number below is computed in Chromium.
 */
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-backend-webgpu'; // registers the 'webgpu' backend; used only where an adapter exists
import { GradientAccumulator, GroupNormalization } from 'tfjs-accumulate';
import { ARTICLE_SETUP, cnn, peakBytesAbove, simpleNet, splitIntoMicroBatches, syntheticBatch } from 'tfjs-accumulate/tutorial';

// The wasm binaries are served beside the page.
setWasmPaths(new URL('./', location.href).href);

type Model = tf.LayersModel;
const mse = (model: Model, xs: tf.Tensor, ys: tf.Tensor) => tf.losses.meanSquaredError(ys, model.predict(xs) as tf.Tensor) as tf.Scalar;
/** Per-sample losses, a 1-D tensor: the accumulator weights each micro-batch by its size. */
const perSample = (model: Model, xs: tf.Tensor, ys: tf.Tensor) => tf.mean(tf.squaredDifference(ys, model.predict(xs) as tf.Tensor), 1);
const weightsOf = (model: Model) => model.trainableWeights.map((w) => Array.from(w.read().dataSync()));
function maxRelativeDifference(a: number[][], b: number[][]): number {
  const diff = Math.max(...a.flatMap((w, i) => w.map((v, k) => Math.abs(v - b[i][k]))));
  return diff / Math.max(...b.flat().map(Math.abs));
}
function plainStep(model: Model, xs: tf.Tensor, ys: tf.Tensor): void {
  const optimizer = tf.train.sgd(ARTICLE_SETUP.learningRate);
  optimizer.minimize(() => mse(model, xs, ys));
  optimizer.dispose();
}

async function use(backend: string): Promise<void> {
  if (!(await tf.setBackend(backend))) throw new Error(`tf.setBackend('${backend}') failed`);
  await tf.ready();
}

/** What one run of the accumulation checks found on the active backend. */
export interface AccumulationChecks {
  backend: string;
  /** 4 micro-batches of 16 against one step of 64: max relative weight difference. */
  fourBySixteen: number;
  /** [16, 16, 16, 7] under per-sample averaging against one step of 55. */
  uneven: number;
  /** Two micro-batches then `flush()`, against one step of 32: update size ratio (1 is exact). */
  flushRatio: number;
  flush: { applied: boolean; microBatches: number; weight: number };
}

async function accumulationChecks(): Promise<AccumulationChecks> {
  const { accumulationSteps, learningRate } = ARTICLE_SETUP;
  const batch = syntheticBatch(64, { seed: 3 });
  const parts = splitIntoMicroBatches(batch, [16, 16, 16, 16]);
  const uneven = syntheticBatch(55, { seed: 4 });
  const unevenParts = splitIntoMicroBatches(uneven, [16, 16, 16, 7]);
  const models: Model[] = [];
  const model = (): Model => {
    const m = simpleNet({ seed: 0 });
    models.push(m);
    return m;
  };
  const accumulate = (m: Model, micro: typeof parts, flush: boolean) => {
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(learningRate), accumulationSteps });
    for (const { xs, ys } of micro) acc.step(() => perSample(m, xs, ys));
    const result = flush ? acc.flush() : undefined;
    acc.dispose();
    return result;
  };
  try {
    const reference = model();
    plainStep(reference, batch.xs, batch.ys);
    const accumulated = model();
    accumulate(accumulated, parts, false);

    const unevenReference = model();
    plainStep(unevenReference, uneven.xs, uneven.ys);
    const unevenAccumulated = model();
    accumulate(unevenAccumulated, unevenParts, false);

    const start = weightsOf(model());
    const flushed = model();
    const flushResult = accumulate(flushed, parts.slice(0, 2), true)!;
    const big = model();
    const [xs32, ys32] = [tf.concat([parts[0].xs, parts[1].xs]), tf.concat([parts[0].ys, parts[1].ys])];
    plainStep(big, xs32, ys32);
    tf.dispose([xs32, ys32]);
    const size = (m: Model) => Math.hypot(...weightsOf(m).flat().map((v, i) => v - start.flat()[i]));

    return {
      backend: tf.getBackend(),
      fourBySixteen: maxRelativeDifference(weightsOf(accumulated), weightsOf(reference)),
      uneven: maxRelativeDifference(weightsOf(unevenAccumulated), weightsOf(unevenReference)),
      flushRatio: size(flushed) / size(big),
      flush: { applied: flushResult.applied, microBatches: flushResult.microBatches, weight: flushResult.weight },
    };
  } finally {
    models.forEach((m) => m.dispose());
    tf.dispose([batch.xs, batch.ys, uneven.xs, uneven.ys, ...parts.flatMap((p) => [p.xs, p.ys]), ...unevenParts.flatMap((p) => [p.xs, p.ys])]);
  }
}

/** GroupNormalization's output and the gradients of a weighted sum of it, on the active backend. */
export interface GroupNormValues {
  backend: string;
  y: number[];
  dx: number[];
  dGamma: number[];
  dBeta: number[];
}

function groupNormValues(): GroupNormValues {
  // Fixed inputs (seeded), [2, 4, 4, 8] NHWC with 4 groups, gamma and beta away from 1 and 0.
  const layer = new GroupNormalization({ groups: 4 });
  const x = tf.randomNormal([2, 4, 4, 8], 0.5, 2, 'float32', 11);
  const upstream = tf.randomNormal([2, 4, 4, 8], 0, 1, 'float32', 12);
  tf.dispose(layer.apply(x) as tf.Tensor); // builds gamma and beta
  const initial = [tf.randomNormal([8], 1, 0.3, 'float32', 13), tf.randomNormal([8], 0, 0.3, 'float32', 14)];
  layer.setWeights(initial);
  const [gamma, beta] = layer.trainableWeights.map((w) => w.read() as tf.Variable);
  const f = (input: tf.Tensor) => tf.sum(tf.mul(layer.apply(input) as tf.Tensor, upstream)) as tf.Scalar;
  const values = tf.tidy(() => {
    const y = layer.apply(x) as tf.Tensor;
    const dx = tf.grad(f)(x);
    const { grads } = tf.variableGrads(() => f(x), [gamma, beta]);
    return { y: Array.from(y.dataSync()), dx: Array.from(dx.dataSync()), dGamma: Array.from(grads[gamma.name].dataSync()), dBeta: Array.from(grads[beta.name].dataSync()) };
  });
  tf.dispose([x, upstream, ...initial]);
  layer.dispose(); // and its weights
  return { backend: tf.getBackend(), ...values };
}

/** The peak memory of a 4 x 16 window or of one 64-sample step of the digit CNN (GroupNorm). */
export interface MemoryReading {
  backend: string;
  kind: 'window' | 'step';
  /** Growth of tfjs's GPU texture pool during the first run (`tf.memory().numBytesInGPUAllocated`), bytes; null off WebGL. */
  gpuBytesAllocated: number | null;
  /** Peak tensor bytes above the start (`tf.profile().peakBytes`, as Node's measureAccumulation). */
  peakBytes: number;
}

type GpuMemory = tf.MemoryInfo & { numBytesInGPUAllocated?: number };

/**
 * Run in a fresh page per kind, so that the texture pool starts empty: its growth is then the
 * most GPU memory the run held at once (freed textures return to the pool and are reused).
 */
async function memory(kind: 'window' | 'step'): Promise<MemoryReading> {
  const model = cnn({ normalization: 'group', seed: 0 });
  const samples = 64;
  const xs = tf.randomUniform([samples, 28, 28, 1], 0, 1, 'float32', 21);
  const ys = tf.oneHot(tf.randomUniform([samples], 0, 10, 'int32', 22) as tf.Tensor1D, 10);
  const micro = [0, 16, 32, 48].map((start) => ({ xs: xs.slice(start, 16), ys: ys.slice(start, 16) }));
  const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
  const loss = (b: { xs: tf.Tensor; ys: tf.Tensor }) => () => tf.losses.softmaxCrossEntropy(b.ys, model.apply(b.xs, { training: true }) as tf.Tensor) as tf.Scalar;
  // Upload inputs and weights before the baseline: both runs hold the same 64 samples.
  await Promise.all([xs, ys, ...micro.flatMap((m) => [m.xs, m.ys]), ...vars].map((t) => t.data()));
  const optimizer = tf.train.sgd(0.01);
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: 4, varList: vars });
  const run = () => {
    if (kind === 'window') {
      for (const m of micro) accumulator.step(loss(m), { sampleCount: 16 });
    } else {
      const { value, grads } = tf.variableGrads(loss({ xs, ys }), vars);
      optimizer.applyGradients(grads);
      tf.dispose([value, ...Object.values(grads)]);
    }
  };
  const before = (tf.memory() as GpuMemory).numBytesInGPUAllocated;
  const peakBytes = await peakBytesAbove(run);
  await Promise.all(vars.map((v) => v.data())); // wait for the GPU to finish
  const after = (tf.memory() as GpuMemory).numBytesInGPUAllocated;
  accumulator.dispose();
  optimizer.dispose();
  model.dispose();
  tf.dispose([xs, ys, ...micro.flatMap((m) => [m.xs, m.ys])]);
  return { backend: tf.getBackend(), kind, gpuBytesAllocated: before === undefined || after === undefined ? null : after - before, peakBytes };
}

/** Whether the browser offers a WebGPU adapter that tfjs can use, and why not when it does not. */
async function webgpuAdapter(): Promise<{ available: boolean; reason: string }> {
  const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
  if (!gpu) return { available: false, reason: 'navigator.gpu is undefined in this Chromium' };
  try {
    const adapter = await gpu.requestAdapter();
    if (!adapter) return { available: false, reason: 'navigator.gpu.requestAdapter() returned null' };
  } catch (e) {
    return { available: false, reason: `navigator.gpu.requestAdapter() threw: ${(e as Error).message}` };
  }
  // tfjs's own WebGPU backend on that adapter, without this library: the article's forward pass
  // in plain tfjs (a batch of 32 samples of 10 inputs times a column of ones, summed), read
  // synchronously as the checks read weights, then once more.
  const previous = tf.getBackend();
  try {
    await use('webgpu');
    const forward = () => tf.tidy(() => tf.sum(tf.matMul(tf.tensor2d(Array.from({ length: 320 }, (_, i) => i), [32, 10]), tf.ones([10, 1]))));
    const values: number[] = [];
    for (let i = 0; i < 3; i++) {
      const sum = forward();
      values.push(sum.dataSync()[0]);
      sum.dispose();
    }
    if (values.some((v) => v !== (319 * 320) / 2)) return { available: false, reason: `tfjs-backend-webgpu computes matMul sums of ${values} (not ${(319 * 320) / 2}) on this adapter` };
    return { available: true, reason: 'an adapter, and tfjs-backend-webgpu works on it' };
  } catch (e) {
    return { available: false, reason: `navigator.gpu.requestAdapter() returned an adapter, but tfjs-backend-webgpu 4.22 fails on it in plain tfjs code (no library involved): ${(e as Error).message}` };
  } finally {
    if (previous) await use(previous);
  }
}

const suite = {
  use,
  accumulationChecks,
  groupNormValues,
  memory,
  webgpuAdapter,
  numTensors: () => tf.memory().numTensors,
  webglRenderer: () => {
    const gl = document.createElement('canvas').getContext('webgl2');
    const info = gl?.getExtension('WEBGL_debug_renderer_info');
    return gl && info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : null;
  },
};
export type Suite = typeof suite;
(window as unknown as { suite: Suite }).suite = suite;
