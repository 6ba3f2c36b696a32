import { argumentError } from '../../core/errors';

/**
 * A character-level tokenizer: one token per character of a fixed 36-character alphabet, plus
 * two special tokens. Character level keeps the vocabulary (38) and so the output layer tiny,
 * which is what lets a transformer train in seconds on two cores; a byte-pair tokenizer would
 * give shorter sequences but a vocabulary of thousands.
 *
 * Normalization, before encoding: lower case; the em dash (—) becomes a hyphen and curly quotes
 * straight ones; runs of white space (newlines included) become one space; any other character
 * outside the alphabet (digits, brackets, the book's few Greek and Hebrew letters) is dropped.
 */

/** The characters of the vocabulary, in token order after the two special tokens. */
export const ALPHABET = " abcdefghijklmnopqrstuvwxyz.,;:!?'\"-";

/** Token 0: padding, never a target (its mask entry is 0). */
export const PAD = 0;
/** Token 1: the start of every sequence, so that the first character has a position to be predicted from. */
export const START = 1;

const FIRST_CHARACTER = 2;
const REPLACEMENTS: Record<string, string> = { '—': '-', '–': '-', '‘': "'", '’': "'", '“': '"', '”': '"' };

/** The character tokenizer over {@link ALPHABET}. Stateless: one instance serves everything. */
export class CharTokenizer {
  /** Tokens in the vocabulary: the two special tokens and the alphabet. */
  readonly vocabularySize = FIRST_CHARACTER + ALPHABET.length;
  readonly pad = PAD;
  readonly start = START;
  private readonly ids = new Map([...ALPHABET].map((c, i) => [c, FIRST_CHARACTER + i]));

  /** The text as the tokenizer sees it (see the module's note on normalization). */
  normalize(text: string): string {
    if (typeof text !== 'string') throw argumentError('CharTokenizer.normalize', 'text', 'a string', text);
    const lower = [...text.toLowerCase()].map((c) => REPLACEMENTS[c] ?? (/\s/.test(c) ? ' ' : c));
    return lower.filter((c) => this.ids.has(c)).join('').replace(/ {2,}/g, ' ');
  }

  /** Token ids of the normalized text, without the start token. */
  encode(text: string): number[] {
    return [...this.normalize(text)].map((c) => this.ids.get(c) as number);
  }

  /** The text of token ids; the special tokens are left out. */
  decode(ids: ArrayLike<number>): string {
    let out = '';
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabularySize) {
        throw argumentError('CharTokenizer.decode', `ids[${i}]`, `a token id in [0, ${this.vocabularySize})`, id);
      }
      if (id >= FIRST_CHARACTER) out += ALPHABET[id - FIRST_CHARACTER];
    }
    return out;
  }
}
