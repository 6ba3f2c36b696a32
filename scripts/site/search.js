// The search page: matches the query against the index that assets/search-index.js defines
// (window.TFJS_ACCUMULATE_SEARCH), shows the best sections with the matches highlighted, and links
// to each section. Works from file:// since nothing is fetched.
(function () {
  'use strict';
  var index = window.TFJS_ACCUMULATE_SEARCH;
  var form = document.querySelector('.search-form');
  var input = document.getElementById('q');
  var status = document.getElementById('search-status');
  var list = document.getElementById('search-results');
  var MAX_RESULTS = 30;
  // Tokenizers by name, as the index declares per page, and the matching rule (assets/tokenizers.js).
  var T = window.TFJS_ACCUMULATE_TOKENIZERS;
  // The page's UI strings, in its language (scripts/site/strings.ts).
  var S = JSON.parse(document.getElementById('ui-strings').textContent);
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (m, k) { return k in values ? String(values[k]) : m; });
  }

  function escapeRegExp(s) {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  /** Appends `text` to `el`, with every match of `pattern` in a <mark>; text only, never HTML. */
  function appendHighlighted(el, text, pattern) {
    var last = 0;
    var m;
    pattern.lastIndex = 0;
    while ((m = pattern.exec(text)) !== null) {
      if (m[0].length === 0) { pattern.lastIndex++; continue; }
      el.appendChild(document.createTextNode(text.slice(last, m.index)));
      var mark = document.createElement('mark');
      mark.textContent = m[0];
      el.appendChild(mark);
      last = m.index + m[0].length;
    }
    el.appendChild(document.createTextNode(text.slice(last)));
  }

  function snippet(text, lower, first) {
    var start = Math.max(0, first - 60);
    var end = Math.min(text.length, first + 140);
    return (start > 0 ? '… ' : '') + text.slice(start, end).replace(/\s+/g, ' ') + (end < text.length ? ' …' : '');
  }

  function search(query) {
    list.textContent = '';
    var q = query.trim();
    if (!q) { status.textContent = ''; return; }
    if (!index || !T) { status.textContent = S.noIndex; return; }
    var phrase = q.toLowerCase();
    var results = [];
    for (var i = 0; i < index.entries.length; i++) {
      var e = index.entries[i];
      var page = index.pages[e[0]];
      var lower = e[4].toLowerCase();
      var m = T.match(page.tokenizer, q, lower);
      var score = m ? m.found : 0;
      var first = m ? m.first : -1;
      var exact = lower.indexOf(phrase);
      if (exact >= 0) { score += 10; first = exact; } else if (!m) continue;
      if (e[3] === 'prose') score += 1;
      results.push({ e: e, page: page, score: score, first: first });
    }
    results.sort(function (a, b) { return b.score - a.score || a.e[0] - b.e[0]; });
    status.textContent = results.length === 0
      ? fill(S.noMatch, { q: q })
      : fill(results.length > MAX_RESULTS ? S.matchesTruncated : results.length === 1 ? S.oneMatch : S.matches, { n: results.length, q: q, max: MAX_RESULTS });
    var tokenizer = T.tokenizers[(index.pages[0] || {}).tokenizer] || T.tokenizers.words;
    var words = tokenizer(q).map(escapeRegExp);
    words.sort(function (a, b) { return b.length - a.length; });
    var pattern = new RegExp('(' + [escapeRegExp(q)].concat(words).join('|') + ')', 'giu');
    for (var r = 0; r < Math.min(MAX_RESULTS, results.length); r++) {
      var res = results[r];
      var li = document.createElement('li');
      var a = document.createElement('a');
      // page.href is already encoded by the exporter (fileHref); the section id is encoded the same way.
      a.href = res.page.href + '#' + encodeURIComponent(res.e[1]);
      a.textContent = res.page.title + (res.e[2] ? ' › ' + res.e[2] : '');
      li.appendChild(a);
      var where = document.createElement('span');
      where.className = 'where';
      where.textContent = S.inThe[res.e[3]] + (res.e[1].indexOf('cell-') === 0 ? fill(S.ofCell, { n: res.e[1].slice(5) }) : '');
      li.appendChild(where);
      var snip = document.createElement('span');
      snip.className = 'snippet';
      appendHighlighted(snip, snippet(res.e[4], res.e[4].toLowerCase(), res.first), pattern);
      li.appendChild(snip);
      list.appendChild(li);
    }
  }

  var initial = new URLSearchParams(window.location.search).get('q') || '';
  input.value = initial;
  search(initial);
  var timer = null;
  input.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () { search(input.value); }, 120);
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    search(input.value);
    if (history.replaceState) {
      try { history.replaceState(null, '', '?q=' + encodeURIComponent(input.value)); } catch (e) { /* file:// may refuse */ }
    }
  });
})();
