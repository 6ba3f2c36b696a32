/**
 * How a chapter checks a claim in front of its reader without reading like a test file.
 * `check(condition, sentence)` prints the one plain sentence it verified, or throws; the long
 * lists of asserts live in cells tagged `remove-input`. `showMarkdown(text)` publishes a
 * paragraph built from the run's numbers, so that prose about a measurement cannot contradict
 * it (the site and Jupyter render it as markdown).
 */

import { argumentError } from '../core/errors';
import { requireKernelPublisher } from './plot/kernel';

/** Thrown by {@link check} when the claim does not hold; the message is the claim. */
export class CheckFailedError extends Error {
  constructor(sentence: string, detail?: string) {
    super(`not true on this run: ${sentence}${detail ? ` (${detail})` : ''}`);
    this.name = 'CheckFailedError';
  }
}

/** The mark that starts every verified sentence: language-neutral, so both editions share it. */
export const CHECK_MARK = '✓';

function checkSentence(owner: string, sentence: unknown): asserts sentence is string {
  if (typeof sentence !== 'string' || sentence.trim() === '' || sentence.includes('\n')) {
    throw argumentError(owner, 'sentence', 'a non-empty one-line string saying what holds', sentence);
  }
}

/**
 * Checks one claim and says so: prints `✓ <sentence>` when `condition` is true, throws a
 * {@link CheckFailedError} naming the sentence (and `detail`, e.g. the measured values) when it
 * is false. `condition` must be a boolean, so that a number or a promise passed by mistake is
 * refused instead of being read as true.
 */
export function check(condition: boolean, sentence: string, detail?: string): void {
  checkSentence('check', sentence);
  if (typeof condition !== 'boolean') {
    throw argumentError('check', 'condition', 'a boolean (compare the measured values first)', condition);
  }
  if (!condition) throw new CheckFailedError(sentence, detail);
  console.log(`${CHECK_MARK} ${sentence}`);
}

/** The display bundle of a markdown paragraph: `text/markdown`, and the same text as `text/plain`. */
export function markdownBundle(text: string): { data: { 'text/markdown': string; 'text/plain': string }; metadata: Record<string, unknown> } {
  if (typeof text !== 'string' || text.trim() === '') throw argumentError('markdownBundle', 'text', 'a non-empty markdown string', text);
  return { data: { 'text/markdown': text, 'text/plain': text }, metadata: {} };
}

/**
 * Shows markdown (a conclusion with the run's numbers filled in) as an output of the current
 * notebook cell. Works in a cell run by the tslab or Deno kernel; throws anywhere else.
 */
export function showMarkdown(text: string): Promise<void> {
  const bundle = markdownBundle(text);
  const publish = requireKernelPublisher('showMarkdown', 'markdownBundle(text) to get the display bundle');
  return publish(bundle);
}
