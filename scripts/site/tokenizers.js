// The search's tokenizers, by the name the index gives each page (scripts/site/search.ts), and
// the rule that decides whether a section matches a query. Loaded by the search page as
// window.TFJS_ACCUMULATE_TOKENIZERS, and by the unit tests through module.exports.
(function (root) {
  'use strict';
  // Scripts written without spaces between words.
  var CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/u;
  var RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;

  /** Words: split on anything that is not a letter, digit, `_` or `.`. */
  function words(s) {
    return s.toLowerCase().split(/[^\p{L}\p{N}_.]+/u).filter(function (t) { return t.length > 0; });
  }

  /**
   * Bigrams: each run of CJK characters becomes its overlapping character pairs (one character
   * stays itself); the rest of the text is split into words.
   */
  function bigram(s) {
    var out = [];
    var runs = s.toLowerCase().match(RUNS) || [];
    for (var r = 0; r < runs.length; r++) {
      if (CJK_RUN.test(runs[r])) {
        var chars = Array.from(runs[r]);
        if (chars.length === 1) out.push(chars[0]);
        for (var i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
      } else {
        out = out.concat(words(runs[r]));
      }
    }
    return out.filter(function (t, k) { return out.indexOf(t) === k; });
  }

  var TOKENIZERS = { words: words, bigram: bigram };

  function isCjk(token) {
    return CJK_RUN.test(token);
  }

  /**
   * Whether `text` (lower case) matches `query` split by the tokenizer `name`: every word must
   * occur in it; of the CJK pairs, all when there are one or two, else at least two thirds, so
   * that a query written as one run ("微批次梯度") finds its words apart ("微批次的梯度"), where
   * the pair across the gap ("次梯") is missing. Returns the number of tokens found and where the
   * first one is, or null.
   */
  function match(name, query, text) {
    var tokens = (TOKENIZERS[name] || words)(query);
    if (tokens.length === 0) return null;
    var cjk = 0;
    var cjkFound = 0;
    var found = 0;
    var first = -1;
    for (var t = 0; t < tokens.length; t++) {
      var at = text.indexOf(tokens[t]);
      var pair = isCjk(tokens[t]);
      if (pair) cjk++;
      if (at < 0) {
        if (!pair) return null;
        continue;
      }
      if (pair) cjkFound++;
      found++;
      if (first < 0 || at < first) first = at;
    }
    var needed = cjk <= 2 ? cjk : Math.ceil((2 * cjk) / 3);
    if (cjkFound < needed) return null;
    return { found: found, first: first };
  }

  var api = { tokenizers: TOKENIZERS, match: match };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.TFJS_ACCUMULATE_TOKENIZERS = api;
})(typeof window !== 'undefined' ? window : this);
