import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'node:test';
import { ALPHABET, CharTokenizer, PAD, START } from '../../../src/tutorial/lm/tokenizer';
import { assertThrowsMentioning, fcParameters } from '../../helpers';

describe('CharTokenizer', () => {
  const tokenizer = new CharTokenizer();

  it('has the alphabet and two special tokens', () => {
    assert.equal(tokenizer.vocabularySize, ALPHABET.length + 2);
    assert.deepEqual([PAD, START], [0, 1]);
    assert.deepEqual(tokenizer.encode('a b'), [3, 2, 4]);
  });

  it('normalizes case, dashes, quotes and white space, and drops what it cannot spell', () => {
    assert.equal(tokenizer.normalize('Call me  Ishmael—“Whale” (1851)\n'), 'call me ishmael-"whale" ');
  });

  it('property: decode(encode(text)) is the normalized text, and decode skips the special tokens', () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (text) => {
      assert.equal(tokenizer.decode(tokenizer.encode(text)), tokenizer.normalize(text));
      assert.equal(tokenizer.decode([START, ...tokenizer.encode(text), PAD, PAD]), tokenizer.normalize(text));
    }), fcParameters(200));
  });

  it('names what decode accepts', () => {
    assertThrowsMentioning(() => tokenizer.decode([2, 99]), 'CharTokenizer.decode', 'ids[1]', `[0, ${tokenizer.vocabularySize})`);
  });
});
