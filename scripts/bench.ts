/**
 * Training speed of tfjs backends, with and without this project's kernels, next to PyTorch.
 *
 *     npm run bench             # default run, a few minutes on a 2-core machine
 *     npm run bench -- --quick  # smoke run: short timings, SimpleNet and the MLP only
 *
 * For each backend (wasm and cpu with the project's kernels, then tfjs's stock wasm and cpu,
 * then tfjs-node when it loads) and each model (the article's SimpleNet, the MLP
 * 784-256-256-10, the CNN conv16+BN+pool, conv32+BN+pool, dense10 of src/models.ts) it
 * measures:
 * - ms per SGD step (forward, backward, update; process CPU time, see `time`) and the GFLOP/s
 *   that makes, counting a training
 *   step as 3x the forward pass's multiply-adds x 2 (forward, input gradient, weight gradient);
 * - the time of a 4 x 16 accumulation window (GradientAccumulator) over one 1 x 64 step;
 * - the share of a window spent on accumulation bookkeeping (adding into the accumulators,
 *   the finiteness check, averaging): `addGradients` on precomputed gradients for a
 *   whole window, minus the `applyGradients` a plain step also pays, over the window's time;
 * - the peak memory of the window and of the 1 x 64 step (`tf.profile().peakBytes` above what
 *   was allocated before), next to the theoretical ratio (see `theoryNote` below).
 * PyTorch (Debian's python3-torch, one thread) runs the same steps in the same run through
 * scripts/bench_torch.py. Output: markdown tables on stdout, JSON in build/bench/bench.json.
 */
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { BackendPreference, describeEnvironment, selectBackend } from 'tfjs-accumulate/backend';
import { Timing, cnn, measureAccumulation, mlp, simpleNet, timeCall } from 'tfjs-accumulate/tutorial';

type ModelName = 'simpleNet' | 'mlp' | 'cnn';

const quick = process.argv.includes('--quick');
/** `--models=mlp,cnn` and `--backends=wasm,cpu-stock` restrict a run; `--no-torch` skips the peer. */
const option = (name: string): string[] | null => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3).split(',') : null;
};
const onlyModels = option('models');
const onlyBackends = option('backends');
const CONFIG = {
  /** Where the JSON goes. */
  out: process.env.BENCH_OUT ?? join(__dirname, '..', 'build', 'bench', 'bench.json'),
  /** Seconds of timing per measurement on the fast backends (after warm-up). */
  seconds: quick ? 0.15 : 1.0,
  /** Warm-up before timing: at least this many steps and this many seconds (V8 must compile tfjs's JS too). */
  warmup: quick ? 1 : 3,
  warmupSeconds: quick ? 0.1 : 0.5,
  accumulationSteps: 4,
  microBatchSize: 16,
  /** The step-time rows: model and batch. */
  cases: ((quick ? [['simpleNet', 64], ['mlp', 64]] : [['simpleNet', 64], ['mlp', 64], ['cnn', 16], ['cnn', 64]]) as [ModelName, number][]).filter(
    ([m]) => !onlyModels || onlyModels.includes(m),
  ),
  /** Models whose 4 x 16 window is compared with a 1 x 64 step. */
  windowModels: ((quick ? ['simpleNet', 'mlp'] : ['simpleNet', 'mlp', 'cnn']) as ModelName[]).filter((m) => !onlyModels || onlyModels.includes(m)),
  torch: !process.argv.includes('--no-torch'),
  backends: [
    { label: 'wasm + kernels', preference: 'wasm', full: true },
    { label: 'cpu + kernels', preference: 'cpu', full: true },
    // Stock backends: step times only, and slow stock runs are limited to 1 warm-up + 1 step.
    { label: 'wasm (stock)', preference: 'wasm-stock', full: false },
    { label: 'cpu (stock)', preference: 'cpu-stock', full: false },
  ].filter((b) => !onlyBackends || onlyBackends.includes(b.preference)) as { label: string; preference: BackendPreference; full: boolean }[],
  /** A step slower than this (ms) is timed once after one warm-up. */
  slowStepMs: 1500,
  python: '/usr/bin/python3',
};

interface StepRow { backend: string; model: ModelName; batch: number; msPerStep: number | null; wallMsPerStep?: number; gflops: number | null; steps: number; error?: string }
interface WindowRow {
  backend: string; model: ModelName;
  windowMs: number; stepMs: number; timeRatio: number;
  bookkeepingMs: number; bookkeepingShare: number;
  peakBytes: { window: number; step64: number; step16: number }; memoryRatio: number; memoryRatioTheory: number; parameterBytes: number;
}

function buildModel(name: ModelName): tf.LayersModel {
  if (name === 'simpleNet') return simpleNet({ seed: 1 });
  if (name === 'mlp') return mlp({ normalization: 'none', seed: 1 });
  return cnn({ normalization: 'batch', seed: 1 });
}

/** Forward multiply-adds x 2 per sample, from the dense and conv layers' shapes. */
function forwardFlopsPerSample(model: tf.LayersModel): number {
  let flops = 0;
  for (const layer of model.layers) {
    const kernel = layer.getWeights().find((w) => w.rank >= 2);
    if (!kernel) continue;
    const out = layer.outputShape as number[];
    const positions = out.slice(1, -1).reduce((a, b) => a * b, 1);
    flops += 2 * positions * kernel.size;
  }
  return flops;
}

function batchOf(name: ModelName, batch: number, seed: number): { xs: tf.Tensor; ys: tf.Tensor } {
  return tf.tidy(() => {
    if (name === 'simpleNet') return { xs: tf.randomNormal([batch, 10], 0, 1, 'float32', seed), ys: tf.randomNormal([batch, 1], 0, 1, 'float32', seed + 1) };
    const labels = tf.tensor1d(Array.from({ length: batch }, (_, i) => (i * 7 + seed) % 10), 'int32');
    return { xs: tf.randomNormal([batch, 28, 28, 1], 0, 1, 'float32', seed), ys: tf.oneHot(labels, 10) };
  });
}

function lossFn(name: ModelName, model: tf.LayersModel, xs: tf.Tensor, ys: tf.Tensor): () => tf.Scalar {
  return () => {
    const out = model.apply(xs, { training: true }) as tf.Tensor;
    return (name === 'simpleNet' ? tf.losses.meanSquaredError(ys, out) : tf.losses.softmaxCrossEntropy(ys, out)) as tf.Scalar;
  };
}

function trainable(model: tf.LayersModel): tf.Variable[] {
  return model.trainableWeights.map((w) => w.read() as tf.Variable);
}

/** One plain SGD step: gradients, update, read the loss. */
function plainStep(name: ModelName, model: tf.LayersModel, optimizer: tf.Optimizer, data: { xs: tf.Tensor; ys: tf.Tensor }): () => void {
  const vars = trainable(model);
  return () => {
    const { value, grads } = tf.variableGrads(lossFn(name, model, data.xs, data.ys), vars);
    optimizer.applyGradients(grads);
    tf.dispose(grads);
    value.dataSync();
    value.dispose();
  };
}

/** Times `fn` with this run's settings (see `timeCall` in src/measure.ts: process CPU time). */
function time(fn: () => void, seconds: number, warmup: number): Timing {
  return timeCall(fn, { seconds, warmup, warmupSeconds: CONFIG.warmupSeconds, slowCallMs: CONFIG.slowStepMs });
}

function measureStep(backend: string, name: ModelName, batch: number, seconds: number): StepRow {
  const model = buildModel(name);
  const data = batchOf(name, batch, 3);
  const optimizer = tf.train.sgd(0.01);
  try {
    const { ms, wallMs, reps } = time(plainStep(name, model, optimizer, data), seconds, CONFIG.warmup);
    const flops = 3 * forwardFlopsPerSample(model) * batch;
    return { backend, model: name, batch, msPerStep: ms, wallMsPerStep: wallMs, gflops: flops / ms / 1e6, steps: reps };
  } catch (e) {
    const message = (e instanceof Error ? e.message : String(e)).split('\n')[0];
    return { backend, model: name, batch, msPerStep: null, gflops: null, steps: 0, error: message };
  } finally {
    tf.dispose([data.xs, data.ys]);
    optimizer.dispose();
    model.dispose();
  }
}

async function measureWindow(backend: string, name: ModelName): Promise<WindowRow> {
  const { accumulationSteps: k, microBatchSize: b } = CONFIG;
  const model = buildModel(name);
  const microBatches = Array.from({ length: k }, (_, i) => batchOf(name, b, 10 + i));
  const batch = batchOf(name, k * b, 20);
  try {
    const m = await measureAccumulation({
      model,
      loss: name === 'simpleNet' ? tf.losses.meanSquaredError : tf.losses.softmaxCrossEntropy,
      microBatches,
      batch,
      timing: { seconds: CONFIG.seconds, warmup: CONFIG.warmup, warmupSeconds: CONFIG.warmupSeconds, slowCallMs: CONFIG.slowStepMs },
    });
    return {
      backend,
      model: name,
      windowMs: m.windowMs,
      stepMs: m.stepMs,
      timeRatio: m.timeRatio,
      bookkeepingMs: m.bookkeepingMs,
      bookkeepingShare: m.bookkeepingShare,
      peakBytes: { window: m.peakBytes.window, step64: m.peakBytes.step, step16: m.peakBytes.microStep },
      memoryRatio: m.memoryRatio,
      memoryRatioTheory: m.memoryRatioTheory,
      parameterBytes: m.parameterBytes,
    };
  } finally {
    tf.dispose([...microBatches.flatMap((d) => [d.xs, d.ys]), batch.xs, batch.ys]);
    model.dispose();
  }
}

const theoryNote =
  'Theoretical memory ratio = (peak of a plain 16-sample step + 2 x parameter bytes) / peak of a plain 64-sample step: ' +
  'a window holds one micro-batch of activations and gradients at a time, plus the accumulators and the new running sums ' +
  '(two parameter-sized buffers) while a micro-step is added in. Peaks are tf.profile().peakBytes minus the bytes allocated before.';

function runTorch(): Record<string, unknown> {
  if (!CONFIG.torch) return { available: false, reason: 'disabled by --no-torch' };
  const config = { seconds: CONFIG.seconds, warmup: CONFIG.warmup, cases: CONFIG.cases, windowModels: CONFIG.windowModels, accumulationSteps: CONFIG.accumulationSteps, microBatchSize: CONFIG.microBatchSize };
  const run = spawnSync(CONFIG.python, [join(__dirname, 'bench_torch.py'), JSON.stringify(config)], { encoding: 'utf8', timeout: 300_000 });
  if (run.error || run.status !== 0) return { available: false, reason: `${CONFIG.python} failed: ${run.error?.message ?? run.stderr.split('\n').filter(Boolean).pop()}` };
  return JSON.parse(run.stdout);
}

const fmt = (v: number | null | undefined, digits = 1): string => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(2);

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadavg()[0];
  const torch = runTorch();
  const torchSteps = (torch.steps ?? []) as { model: string; batch: number; msPerStep: number }[];
  const torchWindows = (torch.windows ?? []) as { model: string; ratio: number; windowMs: number; stepMs: number }[];
  const steps: StepRow[] = [];
  const windows: WindowRow[] = [];
  const environments: Record<string, string> = {};
  const tryNode = (!onlyBackends || onlyBackends.includes('tensorflow')) && (await selectBackend('tensorflow', { strict: true, onNotice: () => {} }).then(() => true, () => false));
  const backends = tryNode ? [{ label: 'tfjs-node', preference: 'tensorflow' as BackendPreference, full: true }, ...CONFIG.backends] : CONFIG.backends;
  let first = true;
  for (const backend of backends) {
    const report = await selectBackend(backend.preference, { onNotice: (m) => console.error(m) });
    if (first) {
      // V8 compiles tfjs's own JS while the first runs go: without this discarded pass, whichever
      // backend comes first looks slower on the small models (0.7 ms vs 0.25 ms per SimpleNet step).
      for (const [name, batch] of CONFIG.cases) if (name !== 'cnn') measureStep(backend.label, name, batch, quick ? 0.1 : 1);
      first = false;
    }
    environments[backend.label] = describeEnvironment(report);
    console.error(`bench: ${backend.label}`);
    for (const [name, batch] of CONFIG.cases) {
      const row = measureStep(backend.label, name, batch, backend.full ? CONFIG.seconds : 0);
      steps.push(row);
      console.error(`  ${name} batch ${batch}: ${row.msPerStep === null ? `fails (${row.error})` : `${fmt(row.msPerStep, 2)} ms`}`);
    }
    if (!backend.full) continue;
    for (const name of CONFIG.windowModels) windows.push(await measureWindow(backend.label, name));
  }

  const lines: string[] = [];
  const loadAfter = loadavg()[0];
  lines.push(`PyTorch peer: ${torch.available ? `torch ${torch.torch}, ${torch.threads} thread(s)` : `skipped (${torch.reason})`}`);
  // Other processes share the cores: the 1-minute load average says how much.
  lines.push(`Load average (1 min) on ${cpuCount()} CPUs: ${loadBefore.toFixed(2)} at start, ${loadAfter.toFixed(2)} at end.`);
  lines.push('');
  lines.push('Times are process CPU time per step (single-threaded runs; the cores are shared, see `time` in scripts/bench.ts).');
  lines.push('');
  lines.push('| model | batch | backend | ms / step | GFLOP/s | x PyTorch |');
  lines.push('|---|---|---|---|---|---|');
  for (const [name, batch] of CONFIG.cases) {
    const peer = torchSteps.find((t) => t.model === name && t.batch === batch);
    if (peer) lines.push(`| ${name} | ${batch} | PyTorch | ${fmt(peer.msPerStep, 2)} | ${fmt((3 * forwardFlops(name) * batch) / peer.msPerStep / 1e6)} | 1 |`);
    for (const row of steps.filter((s) => s.model === name && s.batch === batch)) {
      const cell = row.msPerStep === null ? `fails: ${row.error}` : fmt(row.msPerStep, 2);
      lines.push(`| ${name} | ${batch} | ${row.backend} | ${cell} | ${fmt(row.gflops)} | ${peer && row.msPerStep !== null ? fmt(row.msPerStep / peer.msPerStep, 2) : '—'} |`);
    }
  }
  lines.push('');
  lines.push(`| model | backend | 4x16 window / 1x64 step (time) | PyTorch's | bookkeeping share of a window | peak memory 4x16 / 1x64 | theory |`);
  lines.push('|---|---|---|---|---|---|---|');
  for (const w of windows) {
    const peer = torchWindows.find((t) => t.model === w.model);
    lines.push(
      `| ${w.model} | ${w.backend} | ${fmt(w.timeRatio, 2)} (${fmt(w.windowMs, 2)} / ${fmt(w.stepMs, 2)} ms) | ${peer ? fmt(peer.ratio, 2) : '—'} | ` +
        `${fmt(100 * w.bookkeepingShare)}% (${fmt(w.bookkeepingMs, 2)} ms) | ${fmt(w.memoryRatio, 2)} (${mb(w.peakBytes.window)} / ${mb(w.peakBytes.step64)} MiB) | ${fmt(w.memoryRatioTheory, 2)} |`,
    );
  }
  lines.push('');
  lines.push(theoryNote);
  console.log(lines.join('\n'));

  const result = { date: new Date().toISOString(), quick, config: CONFIG, seconds: (Date.now() - started) / 1000, loadAverage: { start: loadBefore, end: loadAfter }, environments, torch, steps, windows, theoryNote };
  mkdirSync(dirname(CONFIG.out), { recursive: true });
  writeFileSync(CONFIG.out, JSON.stringify(result, null, 2));
  console.error(`bench: wrote ${CONFIG.out} in ${result.seconds.toFixed(0)} s`);
}

function cpuCount(): number {
  return cpus().length;
}

/** Forward FLOPs per sample of a model by name (built on the current backend, then disposed). */
function forwardFlops(name: ModelName): number {
  const model = buildModel(name);
  const flops = forwardFlopsPerSample(model);
  model.dispose();
  return flops;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
