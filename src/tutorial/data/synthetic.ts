import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger } from '../../core/errors';
import { ARTICLE_SETUP } from '../models';
import { seededNormal } from './random';

/** One micro-batch: inputs `xs` and labels `ys`. The caller owns (and disposes) both. */
export interface MicroBatch<X extends tf.Tensor = tf.Tensor2D, Y extends tf.Tensor = tf.Tensor2D> {
  xs: X;
  ys: Y;
}

/** Options of {@link syntheticMicroBatches} and {@link syntheticBatch}. */
export interface SyntheticDataArgs {
  /** Micro-batches to yield. Default 20 (the article's loop). Ignored by `syntheticBatch`. */
  microBatches?: number;
  /** Samples per micro-batch. Default 16 (the article's). */
  microBatchSize?: number;
  /** Features per sample. Default 10 (the article's). */
  inputSize?: number;
  /** Seed: the same seed gives the same numbers, bit for bit, on every backend. Default 0. */
  seed?: number;
  /**
   * How labels are drawn. `"linear"` (default): `ys = xs·w + b + noise` with a teacher `w`, `b`
   * fixed by the seed, so a model can learn them and the loss falls. `"random"`: standard normal
   * labels independent of the inputs, exactly like the article's generator (nothing to learn;
   * the loss can only approach the labels' variance).
   */
  labels?: 'linear' | 'random';
  /** Standard deviation of the label noise for `"linear"` labels. Default 0.1. */
  noise?: number;
}

const OWNER = 'syntheticMicroBatches';

/**
 * The article's data: micro-batches of standard-normal inputs `[microBatchSize, inputSize]`
 * (16 x 10) and labels `[microBatchSize, 1]` (16 x 1), float32, from a seeded generator so runs
 * repeat exactly. Yields lazily, one micro-batch at a time, as a data pipeline would.
 *
 * Note: the article draws labels independently of the inputs; the default here draws them from
 * a fixed linear teacher so that training visibly lowers the loss. Pass `labels: "random"` for
 * the article's exact setup.
 *
 * ```ts
 * for (const { xs, ys } of syntheticMicroBatches({ seed: 1 })) { ...; tf.dispose([xs, ys]); }
 * ```
 */
export function* syntheticMicroBatches(args: SyntheticDataArgs = {}): Generator<MicroBatch> {
  const o = checkArgs(OWNER, args);
  const source = sampleSource(o);
  for (let i = 0; i < o.microBatches; i++) yield source(o.microBatchSize);
}

/**
 * `n` samples drawn exactly as {@link syntheticMicroBatches} draws them: the first `n` samples
 * of the same stream, so `syntheticBatch(64, { seed })` is the concatenation of the first four
 * micro-batches of 16 with that seed.
 */
export function syntheticBatch(n: number, args: SyntheticDataArgs = {}): MicroBatch {
  if (!isPositiveInteger(n)) throw argumentError('syntheticBatch', 'n', 'a positive integer (the number of samples)', n);
  const o = checkArgs('syntheticBatch', { ...args, microBatches: 1 });
  return sampleSource(o)(n);
}

/**
 * Splits a batch into consecutive micro-batches of the given sizes (which must add up to the
 * batch size), e.g. `[16, 16, 16, 16]` or an uneven `[20, 20, 24]`. The pieces are new tensors
 * owned by the caller; the batch is left alone.
 */
export function splitIntoMicroBatches<X extends tf.Tensor, Y extends tf.Tensor>(batch: MicroBatch<X, Y>, sizes: number[]): MicroBatch<X, Y>[] {
  const owner = 'splitIntoMicroBatches';
  if (!batch || !(batch.xs instanceof tf.Tensor) || !(batch.ys instanceof tf.Tensor)) {
    throw argumentError(owner, 'batch', 'an object { xs, ys } of tensors', batch);
  }
  const n = batch.xs.shape[0];
  if (batch.ys.shape[0] !== n) {
    throw argumentError(owner, 'batch.ys', `a tensor with as many rows as batch.xs (${n})`, batch.ys);
  }
  if (!Array.isArray(sizes) || sizes.length === 0 || !sizes.every(isPositiveInteger) || sizes.reduce((a, b) => a + b, 0) !== n) {
    throw argumentError(owner, 'sizes', `a non-empty array of positive integers adding up to the batch size (${n})`, sizes);
  }
  const xs = tf.split(batch.xs, sizes) as X[];
  const ys = tf.split(batch.ys, sizes) as Y[];
  return sizes.map((_, i) => ({ xs: xs[i], ys: ys[i] }));
}

type Checked = Required<SyntheticDataArgs>;

function checkArgs(owner: string, args: SyntheticDataArgs): Checked {
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object of options', args);
  const o: Checked = {
    microBatches: args.microBatches ?? ARTICLE_SETUP.microBatches,
    microBatchSize: args.microBatchSize ?? ARTICLE_SETUP.microBatchSize,
    inputSize: args.inputSize ?? ARTICLE_SETUP.inputSize,
    seed: args.seed ?? 0,
    labels: args.labels ?? 'linear',
    noise: args.noise ?? 0.1,
  };
  for (const name of ['microBatches', 'microBatchSize', 'inputSize'] as const) {
    if (!isPositiveInteger(o[name])) throw argumentError(owner, name, 'a positive integer', o[name]);
  }
  if (!Number.isInteger(o.seed) || o.seed < 0) throw argumentError(owner, 'seed', 'an integer >= 0', o.seed);
  if (o.labels !== 'linear' && o.labels !== 'random') throw argumentError(owner, 'labels', '"linear" or "random"', o.labels);
  if (typeof o.noise !== 'number' || !Number.isFinite(o.noise) || o.noise < 0) {
    throw argumentError(owner, 'noise', 'a finite number >= 0', o.noise);
  }
  return o;
}

/** A function drawing the next `n` samples of the seeded stream. */
function sampleSource(o: Checked): (n: number) => MicroBatch {
  const normal = seededNormal(o.seed);
  // The teacher is drawn first, from the same stream, so it is fixed by the seed alone.
  const weights = Array.from({ length: o.inputSize }, () => normal() / Math.sqrt(o.inputSize));
  const bias = normal();
  return (n) => {
    const xs = new Float32Array(n * o.inputSize);
    const ys = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let dot = bias;
      for (let j = 0; j < o.inputSize; j++) {
        const v = normal();
        xs[i * o.inputSize + j] = v;
        dot += weights[j] * v;
      }
      ys[i] = o.labels === 'linear' ? dot + o.noise * normal() : normal();
    }
    return { xs: tf.tensor2d(xs, [n, o.inputSize]), ys: tf.tensor2d(ys, [n, 1]) };
  };
}
