import { argumentError, isPositiveFinite, isPositiveInteger } from '../../../core/errors';
import { NORMALIZATIONS, NormalizationKind, checkNormalization } from '../../models';
import type { MnistData } from '../../data/mnist';
import type { NormExperimentProgress } from './records';

/**
 * The BatchNorm experiment's options, their defaults and named sizes, and the check that turns
 * a user's options into the complete configuration every other part of the experiment reads.
 */

/** The layers whose moving statistics track the micro-batches' during training. */
export const MOVING_STATISTICS: readonly NormalizationKind[] = ['batch', 'batch-renorm'];

/** Options of {@link runNormExperiment}. Defaults are the `"default"` preset. */
export interface NormExperimentArgs {
  /** The network: `"cnn"` (default) or `"mlp"`. */
  model?: 'cnn' | 'mlp';
  /** Normalizations to compare. Default: all six of `NORMALIZATIONS`. */
  normalizations?: NormalizationKind[];
  /** Micro-batch sizes; each must divide `logicalBatchSize`. Default [1, 2, 4, 8, 16, 32]. */
  microBatchSizes?: number[];
  /**
   * Micro-batch sizes for particular normalizations, replacing `microBatchSizes` for them (each
   * must divide `logicalBatchSize`). The layers that look at one sample at a time are exact under
   * accumulation (`checkEquivalence` shows it), so a short run can afford them at one size and
   * spend its time where the size matters. Default {} (every normalization at every size).
   */
  microBatchSizesBy?: Partial<Record<NormalizationKind, number[]>>;
  /** Samples per optimizer update, reached by accumulating `logicalBatchSize / microBatchSize` micro-batches. Default 32. */
  logicalBatchSize?: number;
  /** Seeds: each seeds the model's initial weights and the data order. Default [0, 1, 2]: error bars need at least three. */
  seeds?: number[];
  /** Training images from the fixed MNIST training split. Default 1536 (48 updates of 32 per epoch). */
  trainSize?: number;
  /** Test images from the fixed MNIST test split. Default 2004, all of it: at 1,000 images the binomial error bar of a 10% error is ±1.9 points. */
  testSize?: number;
  /** Passes over the training images. Default 1. */
  epochs?: number;
  /** Learning rate of the Adam optimizer (tfjs defaults otherwise: beta1 0.9, beta2 0.999). Default 1e-3. */
  learningRate?: number;
  /**
   * Momentum of the moving statistics per *logical batch*. Default 0.9. The layers update their
   * moving statistics on every micro-batch, so the per-call momentum is
   * `movingMomentum ** (microBatchSize / logicalBatchSize)`: whatever the micro-batch size, the
   * averages then forget at the same rate per sample seen (a horizon of about
   * `logicalBatchSize / (1 - movingMomentum)` = 320 samples by default). With the same per-call
   * momentum for every size, micro-batches of 1 would average 32 times fewer samples.
   */
  movingMomentum?: number;
  /**
   * Training images whose statistics initialize `"frozen-batch"` layers before training (they
   * then stay frozen), recompute the moving statistics of `"batch"` and `"batch-renorm"` after
   * training for `testErrorRecomputed`, and measure `statisticsDeviation`. Default 512.
   */
  statisticsSize?: number;
  /** Report an `"update"` progress event every this many updates. Default 10. */
  progressEvery?: number;
  /** Already loaded MNIST data to use instead of loading it (it must hold trainSize/testSize images). Default: loaded and disposed by the run. */
  data?: MnistData;
  /** Called as the experiment runs. Default: none. */
  onProgress?: (event: NormExperimentProgress) => void;
}

/** The options actually used by a run, defaults filled in (without `data` and `onProgress`). */
export type NormExperimentConfig = Omit<Required<NormExperimentArgs>, 'data' | 'onProgress'>;

/**
 * Named sizes. `"tiny"`: seconds, for tests. `"quick"`: what chapter 6 runs in CI with the MLP,
 * in no more time than the chapter's former one-seed run of 16 updates: 3 seeds of 40 updates
 * scored on the whole test split, BatchNorm at 2 and 32 samples, Batch Renorm at 2, the exact
 * layers at 32 only (4 costs half of what 2 costs, and the recorded large run has it). (The MLP's cost goes with its calls, so its small micro-batches are
 * what a budget buys; a CNN's goes with its samples, which is why chapter 6 shows the CNN from
 * the recorded large run.) `"default"` (the defaults of {@link NormExperimentArgs}): every
 * layer at every size, 48 updates, 3 seeds. `"large"`: one epoch of the whole training split
 * (250 updates), 3 seeds; the layers whose statistics cross samples at 2, 4 and 32, GroupNorm
 * at 2 and 32 to show exactness over a long run, the other exact layers at 32 (size 1 would
 * double its cost to show a failure whose cause is known: one sample has no variance).
 * docs/normalization.md records a run.
 */
export const NORM_EXPERIMENT_PRESETS: Record<'tiny' | 'quick' | 'default' | 'large', NormExperimentArgs> = {
  tiny: { microBatchSizes: [1, 4], logicalBatchSize: 4, seeds: [0], trainSize: 16, testSize: 32, epochs: 2, statisticsSize: 16, learningRate: 3e-3, progressEvery: 2 },
  quick: {
    trainSize: 1280,
    microBatchSizes: [2, 32],
    microBatchSizesBy: { 'batch-renorm': [2], group: [32], layer: [32], 'frozen-batch': [32], none: [32] },
    statisticsSize: 256,
  },
  default: {},
  large: {
    trainSize: 7996,
    microBatchSizes: [2, 4, 32],
    microBatchSizesBy: { 'batch-renorm': [2, 32], group: [2, 32], layer: [32], 'frozen-batch': [32], none: [32] },
    progressEvery: 50,
  },
};

/** Checks a user's options and fills in the defaults. */
export function resolveNormExperimentConfig(args: NormExperimentArgs): NormExperimentConfig {
  const owner = 'runNormExperiment';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object of options', args);
  const model = args.model ?? 'cnn';
  if (model !== 'cnn' && model !== 'mlp') throw argumentError(owner, 'model', '"cnn" or "mlp"', model);
  const normalizations = args.normalizations ?? [...NORMALIZATIONS];
  if (!Array.isArray(normalizations) || normalizations.length === 0) {
    throw argumentError(owner, 'normalizations', `a non-empty array of ${NORMALIZATIONS.map((n) => `"${n}"`).join(', ')}`, normalizations);
  }
  normalizations.forEach((n) => checkNormalization(owner, n));
  const logicalBatchSize = args.logicalBatchSize ?? 32;
  if (!isPositiveInteger(logicalBatchSize)) throw argumentError(owner, 'logicalBatchSize', 'a positive integer', logicalBatchSize);
  const microBatchSizes = args.microBatchSizes ?? [1, 2, 4, 8, 16, 32];
  if (!Array.isArray(microBatchSizes) || microBatchSizes.length === 0 || !microBatchSizes.every((m) => isPositiveInteger(m) && logicalBatchSize % m === 0)) {
    throw argumentError(owner, 'microBatchSizes', `a non-empty array of divisors of logicalBatchSize (${logicalBatchSize})`, microBatchSizes);
  }
  const microBatchSizesBy = args.microBatchSizesBy ?? {};
  if (microBatchSizesBy === null || typeof microBatchSizesBy !== 'object' || Array.isArray(microBatchSizesBy)) {
    throw argumentError(owner, 'microBatchSizesBy', 'an object from normalization to micro-batch sizes', microBatchSizesBy);
  }
  for (const [n, sizes] of Object.entries(microBatchSizesBy)) {
    checkNormalization(owner, n);
    if (!Array.isArray(sizes) || sizes.length === 0 || !sizes.every((m) => isPositiveInteger(m) && logicalBatchSize % m === 0)) {
      throw argumentError(owner, `microBatchSizesBy["${n}"]`, `a non-empty array of divisors of logicalBatchSize (${logicalBatchSize})`, sizes);
    }
  }
  const seeds = args.seeds ?? [0, 1, 2];
  if (!Array.isArray(seeds) || seeds.length === 0 || !seeds.every((s) => Number.isInteger(s) && s >= 0)) {
    throw argumentError(owner, 'seeds', 'a non-empty array of integers >= 0', seeds);
  }
  const positive = (name: string, value: unknown, fallback: number, integer: boolean): number => {
    const v = value ?? fallback;
    if (integer ? !isPositiveInteger(v) : !isPositiveFinite(v)) throw argumentError(owner, name, integer ? 'a positive integer' : 'a finite number > 0', v);
    return v as number;
  };
  const movingMomentum = args.movingMomentum ?? 0.9;
  if (typeof movingMomentum !== 'number' || !(movingMomentum >= 0 && movingMomentum < 1)) {
    throw argumentError(owner, 'movingMomentum', 'a number in [0, 1)', movingMomentum);
  }
  const statisticsSize = positive('statisticsSize', args.statisticsSize, 512, true);
  const trainSize = positive('trainSize', args.trainSize, 1536, true);
  if (statisticsSize > trainSize || statisticsSize < 2) {
    throw argumentError(owner, 'statisticsSize', `an integer in [2, trainSize (${trainSize})]`, statisticsSize);
  }
  return {
    model,
    normalizations: [...normalizations],
    microBatchSizes: [...microBatchSizes],
    microBatchSizesBy: Object.fromEntries(Object.entries(microBatchSizesBy).map(([n, sizes]) => [n, [...sizes!]])),
    logicalBatchSize,
    seeds: [...seeds],
    trainSize,
    testSize: positive('testSize', args.testSize, 2004, true),
    epochs: positive('epochs', args.epochs, 1, true),
    learningRate: positive('learningRate', args.learningRate, 1e-3, false),
    movingMomentum,
    statisticsSize,
    progressEvery: positive('progressEvery', args.progressEvery, 10, true),
  };
}

/** The micro-batch sizes a run of `config` trains `normalization` at, smallest first. */
export function microBatchSizesOf(config: NormExperimentConfig, normalization: NormalizationKind): number[] {
  return [...(config.microBatchSizesBy[normalization] ?? config.microBatchSizes)].sort((a, b) => a - b);
}
