/**
 * Measures the candidates for the accumulator's per-micro-step non-finite check side by side, on
 * one backend: `node --import tsx scripts/finiteProbe.ts [cpu|wasm]`. Prints the mean time per
 * check over gradients of 1.25 M float32 elements in three tensors, for three rounds; compare
 * the ratios within a round, never absolute times across machines.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

const config = {
  backend: process.argv[2] ?? 'cpu',
  sizes: [1_000_000, 250_000, 1_000],
  repeats: 20,
  rounds: 3,
};

const candidates: Record<string, (xs: tf.Tensor[]) => tf.Tensor> = {
  // Inexact: a sum of large finite values overflows to Infinity.
  'sum(x)': (xs) => tf.addN(xs.map((t) => tf.sum(t))),
  // Exact: x · 0 is 0 for finite x and NaN otherwise, and a sum of zeros cannot overflow.
  'sum(x*0)': (xs) => tf.addN(xs.map((t) => tf.sum(tf.mul(t, 0)))),
  // Exact: what nonFiniteProbe uses.
  'all(isFinite(x))': (xs) => tf.all(tf.stack(xs.map((t) => tf.all(tf.isFinite(t))))),
  // Exact: NaN or Infinity survive max(|x|).
  'max(abs(x))': (xs) => tf.max(tf.stack(xs.map((t) => tf.max(tf.abs(t))))),
};

async function main(): Promise<void> {
  await tf.setBackend(config.backend);
  await tf.ready();
  const xs = config.sizes.map((n, i) => tf.randomNormal([n], 0, 1, 'float32', i));
  for (let round = 0; round < config.rounds; round++) {
    const line = Object.entries(candidates).map(([name, check]) => {
      tf.tidy(() => check(xs).dataSync()); // warm-up
      const start = performance.now();
      for (let i = 0; i < config.repeats; i++) tf.tidy(() => check(xs).dataSync());
      return `${name} ${((performance.now() - start) / config.repeats).toFixed(2)} ms`;
    });
    console.log(`${tf.getBackend()} round ${round + 1}: ${line.join(' | ')}`);
  }
  tf.dispose(xs);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
