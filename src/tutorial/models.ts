import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger } from '../core/errors';
import { BatchRenormalization } from '../core/norm/batchRenormalization';
import { FrozenBatchNormalization } from '../core/norm/frozenBatchNormalization';
import { GroupNormalization } from '../core/norm/groupNormalization';

type Initializer = ReturnType<typeof tf.initializers.glorotUniform>;

/**
 * The article's setup: a toy network of one dense layer 10 -> 1, trained with mean squared
 * error and SGD at learning rate 0.01, on 20 micro-batches of 16 samples accumulated 4 at a
 * time (a logical batch of 64).
 */
export const ARTICLE_SETUP = {
  /** Inputs per sample. */
  inputSize: 10,
  /** Outputs per sample. */
  outputSize: 1,
  /** SGD learning rate. */
  learningRate: 0.01,
  /** Loss: mean squared error (`tf.losses.meanSquaredError`). */
  loss: 'meanSquaredError',
  /** Samples per micro-batch. */
  microBatchSize: 16,
  /** Micro-batches per update. */
  accumulationSteps: 4,
  /** Micro-batches the simulated loop runs (5 updates). */
  microBatches: 20,
} as const;

/** Options of {@link simpleNet}. */
export interface SimpleNetArgs {
  /** Inputs per sample. Default 10 (`ARTICLE_SETUP.inputSize`). */
  inputSize?: number;
  /** Seed of the kernel initializer, for repeatable runs. Default 0. */
  seed?: number;
}

/**
 * The article's toy network: one dense layer from 10 inputs to 1 output, with a bias. Train it
 * with `tf.train.sgd(ARTICLE_SETUP.learningRate)` and `tf.losses.meanSquaredError`. The model is
 * returned uncompiled: the accumulator, not `compile`, owns the optimizer.
 */
export function simpleNet(args: SimpleNetArgs = {}): tf.Sequential {
  const inputSize = args.inputSize ?? ARTICLE_SETUP.inputSize;
  if (!isPositiveInteger(inputSize)) throw argumentError('simpleNet', 'inputSize', 'a positive integer', inputSize);
  const seed = checkSeed('simpleNet', args.seed);
  return tf.sequential({
    name: 'simpleNet',
    layers: [
      tf.layers.dense({
        inputShape: [inputSize],
        units: ARTICLE_SETUP.outputSize,
        kernelInitializer: tf.initializers.glorotUniform({ seed }),
      }),
    ],
  });
}

/** The normalizations the digit models accept. */
export const NORMALIZATIONS = ['batch', 'group', 'layer', 'frozen-batch', 'batch-renorm', 'none'] as const;

/**
 * Which normalization follows each hidden layer of {@link mlp} and {@link cnn}:
 * - `"batch"`: tfjs `BatchNormalization` (micro-batch statistics in training, moving in inference);
 * - `"group"`: {@link GroupNormalization} with `groups` groups;
 * - `"layer"`: layer normalization over every non-batch axis (see the Note in {@link cnn});
 * - `"frozen-batch"`: {@link FrozenBatchNormalization} (moving statistics always; set them
 *   with `recomputeBatchNormStatistics` before training from scratch);
 * - `"batch-renorm"`: {@link BatchRenormalization};
 * - `"none"`: no normalization (the layer before keeps its bias).
 */
export type NormalizationKind = (typeof NORMALIZATIONS)[number];

/** Options of {@link mlp} and {@link cnn}. */
export interface DigitModelArgs {
  /** The normalization after each hidden layer. Required. */
  normalization: NormalizationKind;
  /** Groups of `"group"` normalization; must divide every normalized layer's width. Default 8. */
  groups?: number;
  /** Moving-statistics momentum of `"batch"` and `"batch-renorm"`, per training call. Default 0.99 (Keras). */
  momentum?: number;
  /** Epsilon of every normalization. Default 1e-3 for the batch family (tfjs), 1e-5 for group/layer. */
  epsilon?: number;
  /** Options passed to `"batch-renorm"` layers (rMax, dMax, warmupSteps, rampSteps). Default: the layer's defaults. */
  renorm?: { rMax?: number; dMax?: number; warmupSteps?: number; rampSteps?: number };
  /** Seed of every kernel initializer, for repeatable runs. Default 0. */
  seed?: number;
  /** Input shape of one sample. Default [28, 28, 1] (MNIST, channels last). */
  inputShape?: number[];
  /** Number of classes. Default 10. */
  classes?: number;
}

/**
 * A convolutional network for 28x28 digits, with the normalization `args.normalization` after
 * each convolution:
 *
 *     conv 3x3, 16 filters -> norm -> ReLU -> max-pool 2
 *     conv 3x3, 32 filters -> norm -> ReLU -> max-pool 2
 *     flatten -> dense 10 (logits)
 *
 * Convolutions use `"same"` padding (28 -> 14 -> 7, so 7*7*32 = 1568 features reach the dense
 * layer) and have no bias when a normalization follows (its beta plays that role).
 *
 * The last layer emits logits, not probabilities: pair it with
 * `tf.losses.softmaxCrossEntropy(ys, logits)` (numerically stable), and take `argMax` for the
 * class.
 *
 * Note: `"layer"` in this CNN normalizes each sample over (height, width, channels) with a
 * per-channel scale and offset, as Wu & He 2018 define it and PyTorch's `GroupNorm(1, C)`
 * computes it; it is built as `GroupNormalization` with one group. tfjs/Keras
 * `layerNormalization()` with its default axis would normalize over the channels of each pixel
 * alone.
 */
export function cnn(args: DigitModelArgs): tf.Sequential {
  const options = checkDigitArgs('cnn', args);
  const layers: tf.layers.Layer[] = [];
  let k = 0;
  const init = (): Initializer => tf.initializers.glorotUniform({ seed: options.seed + k++ });
  [16, 32].forEach((filters, i) => {
    layers.push(
      tf.layers.conv2d({
        ...(i === 0 ? { inputShape: options.inputShape } : {}),
        filters,
        kernelSize: 3,
        padding: 'same',
        useBias: options.normalization === 'none',
        kernelInitializer: init(),
      }),
    );
    const norm = normalizationLayer('cnn', options, filters, 'conv');
    if (norm) layers.push(norm);
    layers.push(tf.layers.activation({ activation: 'relu' }));
    layers.push(tf.layers.maxPooling2d({ poolSize: 2 }));
  });
  layers.push(tf.layers.flatten());
  layers.push(tf.layers.dense({ units: options.classes, kernelInitializer: init() }));
  return tf.sequential({ name: `cnn_${options.normalization}`, layers });
}

/**
 * A multi-layer perceptron for 28x28 digits: flatten (784) -> dense 256 -> norm -> ReLU ->
 * dense 256 -> norm -> ReLU -> dense 10 (logits, as in {@link cnn}). `"layer"` here is tfjs's
 * own `layerNormalization()` over the 256 features.
 */
export function mlp(args: DigitModelArgs): tf.Sequential {
  const options = checkDigitArgs('mlp', args);
  const layers: tf.layers.Layer[] = [tf.layers.flatten({ inputShape: options.inputShape })];
  let k = 0;
  const init = (): Initializer => tf.initializers.glorotUniform({ seed: options.seed + k++ });
  for (let i = 0; i < 2; i++) {
    layers.push(tf.layers.dense({ units: 256, useBias: options.normalization === 'none', kernelInitializer: init() }));
    const norm = normalizationLayer('mlp', options, 256, 'dense');
    if (norm) layers.push(norm);
    layers.push(tf.layers.activation({ activation: 'relu' }));
  }
  layers.push(tf.layers.dense({ units: options.classes, kernelInitializer: init() }));
  return tf.sequential({ name: `mlp_${options.normalization}`, layers });
}

type CheckedArgs = Required<Omit<DigitModelArgs, 'epsilon' | 'renorm'>> & Pick<DigitModelArgs, 'epsilon' | 'renorm'>;

function checkDigitArgs(owner: string, args: DigitModelArgs): CheckedArgs {
  if (args === null || typeof args !== 'object') {
    throw argumentError(owner, 'args', `an object { normalization, … } with normalization one of ${quoted(NORMALIZATIONS)}`, args);
  }
  checkNormalization(owner, args.normalization);
  const groups = args.groups ?? 8;
  if (!isPositiveInteger(groups)) throw argumentError(owner, 'groups', 'a positive integer dividing 16, 32 and 256 (1, 2, 4, 8 or 16)', groups);
  const momentum = args.momentum ?? 0.99;
  if (typeof momentum !== 'number' || !(momentum >= 0 && momentum < 1)) {
    throw argumentError(owner, 'momentum', 'a number in [0, 1)', momentum);
  }
  const inputShape = args.inputShape ?? [28, 28, 1];
  if (!Array.isArray(inputShape) || inputShape.length !== 3 || !inputShape.every(isPositiveInteger)) {
    throw argumentError(owner, 'inputShape', 'three positive integers [height, width, channels]', inputShape);
  }
  const classes = args.classes ?? 10;
  if (!isPositiveInteger(classes)) throw argumentError(owner, 'classes', 'a positive integer', classes);
  return {
    normalization: args.normalization,
    groups,
    momentum,
    epsilon: args.epsilon,
    renorm: args.renorm,
    seed: checkSeed(owner, args.seed),
    inputShape,
    classes,
  };
}

/** Throws unless `value` is one of {@link NORMALIZATIONS}. */
export function checkNormalization(owner: string, value: unknown): NormalizationKind {
  if (!(NORMALIZATIONS as readonly unknown[]).includes(value)) {
    throw argumentError(owner, 'normalization', `one of ${quoted(NORMALIZATIONS)}`, value);
  }
  return value as NormalizationKind;
}

function normalizationLayer(owner: string, o: CheckedArgs, channels: number, kind: 'conv' | 'dense'): tf.layers.Layer | null {
  switch (o.normalization) {
    case 'batch':
      return tf.layers.batchNormalization({ momentum: o.momentum, epsilon: o.epsilon ?? 1e-3 });
    case 'frozen-batch':
      return new FrozenBatchNormalization({ epsilon: o.epsilon ?? 1e-3 });
    case 'batch-renorm':
      return new BatchRenormalization({ momentum: o.momentum, epsilon: o.epsilon ?? 1e-3, ...o.renorm });
    case 'group':
      if (channels % o.groups !== 0) {
        throw argumentError(owner, 'groups', `a divisor of every normalized width (${channels} here)`, o.groups);
      }
      return new GroupNormalization({ groups: o.groups, epsilon: o.epsilon ?? 1e-5 });
    case 'layer':
      // LayerNorm is GroupNorm with one group, for dense and convolution features alike. Not
      // tf.layers.layerNormalization: the same math, but it tiles its statistics to the input's
      // shape, and tile's gradient is a slice and an add per repeat. The MLP's micro-batch-1
      // LayerNorm run of chapter 6 took 6.6 s with it and 1.5 s with this, on wasm.
      return new GroupNormalization({ groups: 1, epsilon: o.epsilon ?? 1e-5 });
    case 'none':
      return null;
  }
}

function checkSeed(owner: string, seed: unknown): number {
  if (seed === undefined) return 0;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0) {
    throw argumentError(owner, 'seed', 'an integer >= 0', seed);
  }
  return seed;
}

function quoted(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}
