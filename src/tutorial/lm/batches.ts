import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveInteger } from '../../core/errors';
import { shuffledIndices } from '../data/random';
import { BookChapter, loadMobyDick } from './corpus';
import { CharTokenizer } from './tokenizer';

/**
 * From a book to padded batches of token ids: the book cut into sentences of different lengths,
 * each encoded after a start token and padded on the right to a fixed context length, with a
 * mask of its real tokens. Right padding keeps a causal model exact: a real token attends only
 * to positions before it, which are never padding.
 */

/** Options of {@link bookSentences}. */
export interface BookSentencesArgs {
  /** Shortest sentence kept, in characters after normalization. Default 12. */
  minLength?: number;
  /** Longest sentence kept, in characters (the context length minus the start token). Default 63. */
  maxLength?: number;
  /** Seed of the fixed order in which the sentences are returned. Default 0. */
  seed?: number;
  /** The chapters to cut. Default: Moby Dick, read by `loadMobyDick()`. */
  chapters?: BookChapter[];
}

/**
 * The book's sentences and clauses (cut after `.`, `!`, `?` and `;`), normalized by the
 * tokenizer, those of `minLength` to `maxLength` characters, in a seeded random order.
 */
export function bookSentences(tokenizer: CharTokenizer, args: BookSentencesArgs = {}): string[] {
  const owner = 'bookSentences';
  const minLength = args.minLength ?? 12;
  const maxLength = args.maxLength ?? 63;
  if (!isPositiveInteger(minLength)) throw argumentError(owner, 'minLength', 'a positive integer', minLength);
  if (!isPositiveInteger(maxLength) || maxLength < minLength) throw argumentError(owner, 'maxLength', `an integer >= minLength (${minLength})`, maxLength);
  const chapters = args.chapters ?? loadMobyDick();
  const text = tokenizer.normalize(chapters.map((c) => c.text).join(' '));
  const pieces = text.split(/(?<=[.!?;]) /).map((s) => s.trim());
  const kept = pieces.filter((s) => s.length >= minLength && s.length <= maxLength);
  return Array.from(shuffledIndices(kept.length, args.seed ?? 0), (i) => kept[i]);
}

/** Padded token ids of some sequences, and which of them are real. Owns two tensors. */
export interface TokenBatch {
  /** `[sequences, contextLength]`, int32: the start token, the text's tokens, then padding. */
  tokens: tf.Tensor2D;
  /** `[sequences, contextLength]`, float32: 1 on real tokens (the start token included), 0 on padding. */
  mask: tf.Tensor2D;
  /** Real tokens of each sequence, the start token included. */
  lengths: number[];
  /** Next-token targets after the causal shift: each sequence's length minus one, summed. */
  targetCount: number;
  dispose(): void;
}

/** Encodes `sentences` as one padded batch of `contextLength` positions. */
export function tokenBatch(tokenizer: CharTokenizer, sentences: string[], contextLength: number): TokenBatch {
  const owner = 'tokenBatch';
  if (!Array.isArray(sentences) || sentences.length === 0) throw argumentError(owner, 'sentences', 'a non-empty array of strings', sentences);
  if (!isPositiveInteger(contextLength) || contextLength < 2) throw argumentError(owner, 'contextLength', 'an integer >= 2', contextLength);
  const ids = new Int32Array(sentences.length * contextLength).fill(tokenizer.pad);
  const real = new Float32Array(sentences.length * contextLength);
  const lengths = sentences.map((sentence, row) => {
    const encoded = [tokenizer.start, ...tokenizer.encode(sentence)];
    if (encoded.length > contextLength) {
      throw argumentError(owner, `sentences[${row}]`, `at most ${contextLength - 1} characters after normalization (contextLength ${contextLength}, one position for the start token)`, sentence);
    }
    ids.set(encoded, row * contextLength);
    real.fill(1, row * contextLength, row * contextLength + encoded.length);
    return encoded.length;
  });
  const tokens = tf.tensor2d(ids, [sentences.length, contextLength], 'int32');
  const mask = tf.tensor2d(real, [sentences.length, contextLength]);
  return { tokens, mask, lengths, targetCount: lengths.reduce((n, l) => n + l - 1, 0), dispose: () => tf.dispose([tokens, mask]) };
}

/** Cuts `sentences` into consecutive token batches of the given numbers of sequences. */
export function tokenBatches(tokenizer: CharTokenizer, sentences: string[], sizes: number[], contextLength: number): TokenBatch[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (!sizes.every(isPositiveInteger) || total > sentences.length) {
    throw argumentError('tokenBatches', 'sizes', `positive integers adding up to at most ${sentences.length} (the sentences given)`, sizes);
  }
  let start = 0;
  return sizes.map((n) => tokenBatch(tokenizer, sentences.slice(start, (start += n)), contextLength));
}
