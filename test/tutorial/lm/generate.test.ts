import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateText } from '../../../src/tutorial/lm/generate';
import { TinyGpt } from '../../../src/tutorial/lm/model';
import { CharTokenizer } from '../../../src/tutorial/lm/tokenizer';
import { assertThrowsMentioning } from '../../helpers';

describe('generateText', () => {
  const tokenizer = new CharTokenizer();

  it('continues the prompt, repeats for a seed, stops when the context is full, and leaks nothing', () => {
    const model = new TinyGpt({ vocabularySize: tokenizer.vocabularySize, contextLength: 16, width: 8, heads: 2, layers: 1 });
    const before = tf.memory().numTensors;
    const text = generateText(model, tokenizer, { prompt: 'the ', length: 8, seed: 3 });
    assert.equal(tf.memory().numTensors, before);
    assert.ok(text.startsWith('the ') && text.length === 12);
    assert.equal(generateText(model, tokenizer, { prompt: 'the ', length: 8, seed: 3 }), text);
    assert.equal(generateText(model, tokenizer, { length: 100 }).length, 15, 'the start token and 15 characters fill 16 positions');
    model.dispose();
  });

  it('names what it accepts', () => {
    const model = new TinyGpt({ vocabularySize: tokenizer.vocabularySize, contextLength: 4, width: 4, heads: 1, layers: 1 });
    assertThrowsMentioning(() => generateText(model, tokenizer, { temperature: 0 }), 'generateText', 'temperature', '> 0');
    assertThrowsMentioning(() => generateText(model, tokenizer, { lenght: 3 } as never), 'generateText', 'lenght');
    model.dispose();
  });
});
