/**
 * A/B timing of one speed lever at a time, in one process, with the two variants taking turns
 * (timeCalls), so that a loaded machine disturbs both alike. docs/benchmark.md quotes its runs.
 *
 *     npm run bench:levers                          # every lever on the MLP and the CNN
 *     npm run bench:levers -- --seconds=12          # longer: steadier medians on a busy machine
 *     npm run bench:levers -- --backend=native      # the native kernel set, one BLAS thread
 *
 * Levers:
 * - `lazy-fused-gradients`: the fused matMul/conv2d gradients of src/backend/kernels/fusedGradients.ts
 *   (each input's gradient only when needed) against tfjs's own, on a plain SGD step;
 * - `add-checked`: one accumulator micro-step's bookkeeping over the MLP's weights, as tfjs ops
 *   (add, then a sum reduction; the exact variants sum(x·0) and all(isFinite(x))) against
 *   `addChecked`;
 * - `batchnorm-training`: the CNN's BatchNormalization layers in training through their own
 *   `call` (the moments differentiated op by op) against the wrapped one (batchNormLayer.ts), on
 *   plain SGD steps and on `GradientAccumulator` windows of 4 x 16.
 */
import * as tf from '@tensorflow/tfjs';
import { addChecked, fusedGradientPatches, installBatchNormLayer, restoreBatchNormLayer, selectBackend } from '../../src/backend/index';
import { GradientAccumulator } from '../../src/index';
import { cnn, mlp, Timing, timeCalls } from '../../src/tutorial/index';

const arg = (name: string, fallback: string): string => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const CONFIG = {
  /** Seconds of timed calls per variant, over `rounds` turns. */
  seconds: Number(arg('seconds', '6')),
  rounds: 6,
  /** The kernel set: wasm, or native (one BLAS thread). */
  backend: arg('backend', 'wasm') as 'wasm' | 'native',
  /** Plain steps the gradient lever is timed on. */
  steps: [['mlp', 64], ['mlp', 16], ['cnn', 16], ['cnn', 64]] as ['mlp' | 'cnn', number][],
};

const fmt = (t: Timing) => `${t.ms.toFixed(3)} ms (min ${t.minMs.toFixed(3)}, CPU ${t.cpuMs.toFixed(3)})`;
/** with / without: of the medians, of the minima, and of the process CPU time per call (one thread: the steadiest under load). */
const ratio = (a: Timing, b: Timing) => `${(a.ms / b.ms).toFixed(2)} (min ${(a.minMs / b.minMs).toFixed(2)}, CPU ${(a.cpuMs / b.cpuMs).toFixed(2)})`;

function plainStep(name: 'mlp' | 'cnn', batch: number): { step: () => void; dispose: () => void } {
  const model = name === 'mlp' ? mlp({ normalization: 'none', seed: 1 }) : cnn({ normalization: 'batch', seed: 1 });
  const xs = tf.randomNormal([batch, 28, 28, 1], 0, 1, 'float32', 3);
  const ys = tf.tidy(() => tf.oneHot(tf.tensor1d(Array.from({ length: batch }, (_, i) => i % 10), 'int32'), 10));
  const vars = model.trainableWeights.map((w) => w.read() as tf.Variable);
  const optimizer = tf.train.sgd(0.01);
  return {
    step: () => {
      const { value, grads } = tf.variableGrads(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor) as tf.Scalar, vars);
      optimizer.applyGradients(grads);
      tf.dispose(grads);
      value.dataSync();
      value.dispose();
    },
    dispose: () => {
      tf.dispose([xs, ys]);
      optimizer.dispose();
      model.dispose();
    },
  };
}

/** Steps with tfjs's own fused-op gradients against ours, switching the registration per call. */
function lazyFusedGradients(): void {
  const ours = fusedGradientPatches.map((p) => p.build(undefined));
  const withOurs = (fn: () => void) => () => {
    ours.forEach((g) => tf.registerGradient(g));
    try {
      fn();
    } finally {
      ours.forEach((g) => tf.unregisterGradient(g.kernelName));
    }
  };
  ours.forEach((g) => tf.unregisterGradient(g.kernelName));
  for (const [name, batch] of CONFIG.steps) {
    const { step, dispose } = plainStep(name, batch);
    const [stock, lazy] = timeCalls([step, withOurs(step)], { seconds: CONFIG.seconds, rounds: CONFIG.rounds });
    console.log(`| lazy-fused-gradients | ${name} step of ${batch} | ${fmt(stock)} | ${fmt(lazy)} | ${ratio(lazy, stock)} |`);
    dispose();
  }
  ours.forEach((g) => tf.registerGradient(g));
}

/** One micro-step's bookkeeping over the MLP's weights: ops against addChecked. */
function addCheckedLever(): void {
  const model = mlp({ normalization: 'none', seed: 1 });
  const grads = model.trainableWeights.map((w, i) => tf.randomNormal(w.shape as number[], 0, 1, 'float32', i));
  let sums = grads.map((g) => tf.zerosLike(g));
  const commit = (next: tf.Tensor[], check: tf.Tensor) => {
    check.dataSync();
    check.dispose();
    tf.dispose(sums);
    sums = next;
  };
  const probes: Record<string, (t: tf.Tensor) => tf.Tensor> = {
    'sum': (t) => tf.sum(t),
    'sum(x·0)': (t) => tf.sum(tf.mul(t, 0)),
    'all(isFinite(x))': (t) => tf.cast(tf.all(tf.isFinite(t)), 'float32'),
  };
  const viaOps = (probe: (t: tf.Tensor) => tf.Tensor) => () => {
    const out = tf.tidy(() => {
      const next = grads.map((g, i) => tf.add(sums[i], g));
      return { next, check: tf.addN(next.map(probe)) };
    });
    commit(out.next, out.check);
  };
  const fused = () => {
    const out = tf.tidy(() => {
      const r = grads.map((g, i) => addChecked(sums[i], g));
      return { next: r.map((x) => x.sum), check: tf.addN(r.map((x) => x.check)) };
    });
    commit(out.next, out.check);
  };
  const names = Object.keys(probes);
  const timings = timeCalls([...names.map((n) => viaOps(probes[n])), fused], { seconds: CONFIG.seconds, rounds: CONFIG.rounds });
  const ours = timings[names.length];
  names.forEach((n, i) => {
    const t = timings[i];
    console.log(`| add-checked | MLP weights, add + ${n} | ${fmt(t)} | ${fmt(ours)} | ${ratio(ours, t)} |`);
  });
  tf.dispose([...grads, ...sums]);
  model.dispose();
}

/** The CNN trained with BatchNormalization's own call against the wrapped one, switched per call. */
function batchNormTrainingLever(): void {
  const own = (fn: () => void) => () => {
    restoreBatchNormLayer();
    try {
      fn();
    } finally {
      installBatchNormLayer();
    }
  };
  for (const batch of [16, 64]) {
    const { step, dispose } = plainStep('cnn', batch);
    const [stock, fused] = timeCalls([own(step), step], { seconds: CONFIG.seconds, rounds: CONFIG.rounds });
    console.log(`| batchnorm-training | cnn step of ${batch} | ${fmt(stock)} | ${fmt(fused)} | ${ratio(fused, stock)} |`);
    dispose();
  }
  const model = cnn({ normalization: 'batch', seed: 1 });
  const micro = [0, 1, 2, 3].map((i) =>
    tf.tidy(() => ({ xs: tf.randomNormal([16, 28, 28, 1], 0, 1, 'float32', 10 + i), ys: tf.oneHot(tf.tensor1d(Array.from({ length: 16 }, (_, j) => (j + i) % 10), 'int32'), 10) })),
  );
  const accumulator = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: 4 });
  const window = () => micro.forEach(({ xs, ys }) => accumulator.step(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true }) as tf.Tensor), { sampleCount: 16 }));
  const [stock, fused] = timeCalls([own(window), window], { seconds: CONFIG.seconds, rounds: CONFIG.rounds });
  console.log(`| batchnorm-training | cnn GradientAccumulator window of 4 x 16 | ${fmt(stock)} | ${fmt(fused)} | ${ratio(fused, stock)} |`);
  accumulator.dispose();
  tf.dispose(micro.flatMap((m) => [m.xs, m.ys]));
  model.dispose();
}

async function main(): Promise<void> {
  await selectBackend(CONFIG.backend, { strict: true, nativeThreads: 1, onNotice: (m) => console.error(m) });
  console.log(`Command: \`npm run bench:levers${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\`, kernel set ${CONFIG.backend} (one thread), ${new Date().toISOString()}.`);
  console.log('');
  console.log('| lever | call | without: median (min, CPU) | with | with / without: medians (minima, CPU times) |');
  console.log('|---|---|---|---|---|');
  lazyFusedGradients();
  addCheckedLever();
  batchNormTrainingLever();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
