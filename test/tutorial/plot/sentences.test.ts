import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { joinSentences, spacesAfterChinesePunctuation } from '../../../src/tutorial/plot/sentences';

describe('joinSentences', () => {
  it('puts one space between English sentences', () => {
    assert.equal(joinSentences(['It fits.', 'It is fast.', 'Done.']), 'It fits. It is fast. Done.');
  });

  it('puts none after Chinese punctuation, so a Chinese paragraph has no gaps', () => {
    const text = joinSentences(['跳过第一层省下了 1.2 MFLOP。', '在 wasm 上达到了峰值的 40%。', '也就是说：', '很快']);
    assert.equal(text, '跳过第一层省下了 1.2 MFLOP。在 wasm 上达到了峰值的 40%。也就是说：很快');
    assert.deepEqual(spacesAfterChinesePunctuation(text), []);
  });

  it('keeps a space after a Latin ending inside Chinese text, and drops empty sentences', () => {
    // "×" and a number are not full-width punctuation: the space before the next word stays.
    assert.equal(joinSentences(['加速比 1.9×', '', '  ', '上限 2×。', 'Done.']), '加速比 1.9× 上限 2×。Done.');
  });

  it('refuses what is not an array of strings (negative case)', () => {
    assert.throws(() => joinSentences('a. b.' as never), /joinSentences: sentences must be an array of strings/);
    assert.throws(() => joinSentences(['a.', 3] as never), /joinSentences: sentences must be an array of strings/);
  });
});

describe('spacesAfterChinesePunctuation', () => {
  it('finds an ASCII space after 。 ， ； ： and the other full-width marks (negative case)', () => {
    // What `['…MFLOP。', '在 wasm 上…'].join(' ')` wrote in chapter 7 before joinSentences.
    const found = spacesAfterChinesePunctuation('省下了 1.2 MFLOP。 在 wasm 上，  峰值的 40%； 完。');
    assert.equal(found.length, 3);
    assert.ok(found[0].includes('MFLOP。 在'), found[0]);
    assert.ok(found[1].includes('上，  峰值'), found[1]);
    assert.ok(found[2].includes('40%； 完'), found[2]);
  });

  it('passes English spacing, a line that ends in 。, and spaces before or inside Chinese text', () => {
    assert.deepEqual(spacesAfterChinesePunctuation('It fits. It is fast, and small; done.'), []);
    assert.deepEqual(spacesAfterChinesePunctuation('1. 第一条。\n2. 第二条。 \n'), []);
    assert.deepEqual(spacesAfterChinesePunctuation('| 章 | 问题 |\n|---|---|\n| 1 | 由哪个后端执行？ |\n'), []);
    assert.deepEqual(spacesAfterChinesePunctuation('在 wasm 上达到了 40%，是峰值的 1.2 倍。'), []);
  });
});
