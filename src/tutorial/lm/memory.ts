import * as tf from '@tensorflow/tfjs';
import { argumentError, checkOptions, isPositiveInteger } from '../../core/errors';
import { GradientAccumulator } from '../../core/gradientAccumulator';
import { nextTokenLoss } from '../../core/nextTokenLoss';
import { peakBytesAbove } from '../measure';
import { tokenBatches } from './batches';
import { TinyGpt } from './model';
import { recomputedGradients } from './recompute';
import type { CharTokenizer } from './tokenizer';

/** Options of {@link measureUpdatePeak}. */
export interface MeasureUpdatePeakArgs {
  /** The tokenizer the sentences are encoded with. Required. */
  tokenizer: CharTokenizer;
  /** Sentences to fill the micro-batches with, from the first. Required. */
  sentences: string[];
  /** Sequences per micro-batch. Required. */
  microBatchSize: number;
  /** Micro-batches in the update's window (the logical batch is their product). Default 1. */
  accumulationSteps?: number;
  /** Transformer blocks of the model. Default 2. */
  layers?: number;
  /** Recompute each block's activations in the backward pass (`recomputedGradients`). Default false. */
  recompute?: boolean;
  /** Positions per sequence. Default 64. */
  contextLength?: number;
}

/** What {@link measureUpdatePeak} found. */
export interface UpdatePeak {
  /** Peak bytes allocated during the update, above what was allocated before it (the model's weights). */
  peakBytes: number;
  /** The model's weights, bytes. */
  parameterBytes: number;
  /** Sequences in the update: `microBatchSize · accumulationSteps`. */
  logicalBatchSize: number;
}

/**
 * The peak memory of one training update of a fresh `TinyGpt`, measured with `tf.profile()`: a
 * window of `accumulationSteps` micro-batches of `microBatchSize` sequences, AdamW, token-exact
 * accumulation. The first update is measured on purpose: it also creates the accumulators and
 * Adam's two slots per weight, which a training run holds from then on.
 */
export async function measureUpdatePeak(args: MeasureUpdatePeakArgs): Promise<UpdatePeak> {
  const owner = 'measureUpdatePeak';
  const o = checkOptions<MeasureUpdatePeakArgs>(owner, 'args', args, ['tokenizer', 'sentences', 'microBatchSize', 'accumulationSteps', 'layers', 'recompute', 'contextLength']);
  const accumulationSteps = o.accumulationSteps ?? 1;
  for (const [name, value] of [['microBatchSize', o.microBatchSize], ['accumulationSteps', accumulationSteps]] as const) {
    if (!isPositiveInteger(value)) throw argumentError(owner, name, 'a positive integer', value);
  }
  const contextLength = o.contextLength ?? 64;
  const model = new TinyGpt({ vocabularySize: o.tokenizer.vocabularySize, contextLength, layers: o.layers ?? 2 });
  const batches = tokenBatches(o.tokenizer, o.sentences, Array(accumulationSteps).fill(o.microBatchSize), contextLength);
  const accumulator = new GradientAccumulator({ optimizer: tf.train.adam(1e-3), accumulationSteps, weightDecay: { rate: 0.1 } });
  try {
    const peakBytes = await peakBytesAbove(() => {
      for (const { tokens, mask } of batches) {
        if (!o.recompute) accumulator.step(() => nextTokenLoss(model.logits(tokens), tokens, mask));
        else {
          const { sums, count, lossSum } = recomputedGradients(model, tokens, mask);
          accumulator.addGradientSums(sums, { count, lossSum });
          tf.dispose(Object.values(sums));
        }
      }
    });
    return { peakBytes, parameterBytes: 4 * model.parameterCount, logicalBatchSize: o.microBatchSize * accumulationSteps };
  } finally {
    accumulator.dispose();
    batches.forEach((b) => b.dispose());
    model.dispose();
  }
}
