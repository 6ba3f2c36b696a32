import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bookSentences, tokenBatch, tokenBatches } from '../../../src/tutorial/lm/batches';
import { CharTokenizer } from '../../../src/tutorial/lm/tokenizer';
import { assertThrowsMentioning } from '../../helpers';

describe('bookSentences and tokenBatch: ragged sentences, padded, with a mask', () => {
  const tokenizer = new CharTokenizer();
  const chapters = [{ title: 'T.', text: 'Call me Ishmael. Some years ago; never mind how long! Hi. Whale?' }];

  it('cuts after . ! ? ; and keeps the lengths asked for, in a seeded order', () => {
    const kept = bookSentences(tokenizer, { chapters, minLength: 5, maxLength: 20 });
    assert.deepEqual([...kept].sort(), ['call me ishmael.', 'never mind how long!', 'some years ago;', 'whale?']);
    assert.deepEqual(bookSentences(tokenizer, { chapters, minLength: 5, maxLength: 20 }), kept, 'the same order every time');
    assert.notDeepEqual(bookSentences(tokenizer, { chapters, minLength: 5, maxLength: 20, seed: 3 }), kept);
  });

  it('Moby Dick gives thousands of sentences that fit 64 positions', () => {
    const sentences = bookSentences(tokenizer);
    assert.ok(sentences.length > 4000);
    assert.ok(sentences.every((s) => s.length >= 12 && s.length <= 63));
  });

  it('pads on the right after a start token; the mask marks real tokens; targets are counted after the shift', () => {
    const batch = tokenBatch(tokenizer, ['ab', 'abcd'], 6);
    assert.deepEqual(batch.tokens.arraySync(), [[1, 3, 4, 0, 0, 0], [1, 3, 4, 5, 6, 0]]);
    assert.deepEqual(batch.mask.arraySync(), [[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0]]);
    assert.deepEqual(batch.lengths, [3, 5]);
    assert.equal(batch.targetCount, 2 + 4);
    batch.dispose();
  });

  it('cuts consecutive batches, and owns exactly its tensors', () => {
    const before = tf.memory().numTensors;
    const batches = tokenBatches(tokenizer, ['a', 'b', 'c'], [2, 1], 4);
    assert.deepEqual(batches.map((b) => b.lengths.length), [2, 1]);
    batches.forEach((b) => b.dispose());
    assert.equal(tf.memory().numTensors, before);
  });

  it('names what it accepts', () => {
    assertThrowsMentioning(() => tokenBatch(tokenizer, ['abcdef'], 4), 'tokenBatch', 'sentences[0]', 'at most 3 characters');
    assertThrowsMentioning(() => tokenBatches(tokenizer, ['a'], [1, 1], 4), 'tokenBatches', 'sizes', 'at most 1');
    assertThrowsMentioning(() => bookSentences(tokenizer, { chapters, minLength: 9, maxLength: 5 }), 'maxLength', '>= minLength (9)');
  });
});
