/**
 * Sentences built from a run's numbers, joined the way their language writes them. English
 * puts a space after a full stop; Chinese does not: a full-width mark (。，；：！？、) carries its
 * own spacing, and an ASCII space after it shows as a gap in the middle of a paragraph. The
 * chapters build a paragraph from a list of sentences in both editions with the same program,
 * so the join has to look at the sentences, not at the edition.
 */

import { argumentError } from '../../core/errors';

/** Full-width punctuation that ends or splits a Chinese sentence and takes no space after it. */
const CHINESE_PUNCTUATION = '。，；：！？、';

/**
 * An ASCII space right after Chinese punctuation. Not one before a markdown table's `|` (the
 * table's syntax, `| 多大？ |`) or at the end of a line (nothing follows it to gap from).
 */
const SPACE_AFTER = new RegExp(`[${CHINESE_PUNCTUATION}] +(?![ |\\n]|$)`, 'g');

/**
 * The sentences as one paragraph: a space between two sentences, except after one that ends
 * in Chinese punctuation. Empty sentences are dropped, so a conditional sentence may be ''.
 *
 * @example joinSentences(['It fits.', 'It is fast.']) // 'It fits. It is fast.'
 * @example joinSentences(['放得下。', '也很快。']) // '放得下。也很快。'
 */
export function joinSentences(sentences: readonly string[]): string {
  if (!Array.isArray(sentences) || !sentences.every((s) => typeof s === 'string')) {
    throw argumentError('joinSentences', 'sentences', 'an array of strings', sentences);
  }
  return sentences
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .reduce((text, s) => (text === '' ? s : CHINESE_PUNCTUATION.includes(text[text.length - 1]) ? text + s : `${text} ${s}`), '');
}

/**
 * Every place in `text` where an ASCII space follows Chinese punctuation, as a short excerpt
 * (up to 12 characters either side), for a check over generated text. A line may end with 。
 * (markdown lists, log lines), and a markdown table cell may end with one before its `|`.
 */
export function spacesAfterChinesePunctuation(text: string): string[] {
  return [...text.matchAll(SPACE_AFTER)].map((m) => {
    const at = m.index ?? 0;
    return text.slice(Math.max(0, at - 12), at + m[0].length + 12);
  });
}
