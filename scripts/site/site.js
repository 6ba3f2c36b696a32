// The site's behaviour: the remembered theme toggle, copy buttons, scroll cues, and charts drawn
// with plotly.js when they scroll into view. Pages read and work without it.
(function () {
  'use strict';
  var THEME_KEY = 'tfjs-accumulate-theme';
  var root = document.documentElement;
  // The assets folder, from this script's own URL: pages of the Chinese edition sit one folder down.
  var me = document.currentScript;
  var ASSETS = me && me.src ? me.src.replace(/[^/]*$/, '') : 'assets/';
  // The page's UI strings, in its language (scripts/site/strings.ts).
  var stringsEl = document.getElementById('ui-strings');
  var S = stringsEl ? JSON.parse(stringsEl.textContent) : {};

  // Theme: follows prefers-color-scheme until the reader picks one; the pick is remembered.
  var toggle = document.querySelector('.theme-toggle');
  var media = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  function isDark() {
    var chosen = root.getAttribute('data-theme');
    return chosen ? chosen === 'dark' : !!(media && media.matches);
  }
  function showTheme() {
    if (toggle) toggle.setAttribute('aria-pressed', String(isDark()));
  }
  if (toggle) {
    toggle.hidden = false;
    toggle.addEventListener('click', function () {
      var next = isDark() ? 'light' : 'dark';
      root.setAttribute('data-theme', next);
      try {
        localStorage.setItem(THEME_KEY, next);
      } catch (e) {
        // Storage may be off (private mode); the choice then lasts for this page only.
      }
      showTheme();
    });
    if (media && media.addEventListener) media.addEventListener('change', showTheme);
    showTheme();
  }

  // Copy buttons on code cells.
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    var ok = document.execCommand('copy');
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }
  var cells = document.querySelectorAll('.code-cell');
  for (var i = 0; i < cells.length; i++) {
    (function (cell) {
      var head = cell.querySelector('.source-head');
      var code = cell.querySelector('pre code');
      if (!head || !code) return;
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'copy-button';
      button.textContent = S.copy;
      button.setAttribute('aria-label', S.copyLabel.replace('{n}', cell.id.replace('cell-', '')));
      button.addEventListener('click', function () {
        copyText(code.textContent).then(
          function () { button.textContent = S.copied; },
          function () { button.textContent = S.copyFailed; }
        );
        setTimeout(function () { button.textContent = S.copy; }, 2000);
      });
      head.appendChild(button);
    })(cells[i]);
  }

  // A link to a cell (a search result) whose code or output is collapsed (hide-input,
  // hide-output) opens it, so the reader lands on what the search found.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target || !target.classList.contains('code-cell')) return;
    var parts = target.querySelectorAll('details.cell-part');
    for (var p = 0; p < parts.length; p++) parts[p].open = true;
  }
  openTarget();
  window.addEventListener('hashchange', openTarget);

  // A visible cue under each box whose content is larger than the box.
  var boxes = document.querySelectorAll('.scroll-box');
  for (var b = 0; b < boxes.length; b++) {
    var box = boxes[b];
    var wide = box.scrollWidth > box.clientWidth + 1;
    var tall = box.scrollHeight > box.clientHeight + 1;
    if (!wide && !tall) continue;
    var cue = document.createElement('span');
    cue.className = 'scroll-cue';
    cue.setAttribute('aria-hidden', 'true');
    cue.textContent = wide && tall ? S.cueBoth : wide ? S.cueSideways : S.cueDown;
    box.parentNode.insertBefore(cue, box.nextSibling);
  }

  // Charts: plotly.js (about 1 MB) is loaded only when a chart comes near the viewport.
  var figures = document.querySelectorAll('.plotly-figure');
  if (figures.length === 0) return;
  var loading = null;
  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (loading) return loading;
    loading = new Promise(function (resolve, reject) {
      var script = document.createElement('script');
      script.src = ASSETS + 'plotly.min.js';
      script.async = true;
      script.onload = function () { resolve(window.Plotly); };
      script.onerror = function () { reject(new Error(ASSETS + 'plotly.min.js did not load')); };
      document.head.appendChild(script);
    });
    return loading;
  }
  // Plotly never wraps a title; on a narrow screen it would run off both edges, so it is broken
  // into lines and set a little smaller. Latin text breaks at spaces; Chinese (no spaces) may
  // break between any two characters, each counted as two Latin ones wide.
  var WIDE = /[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/;
  function fitTitle(layout, width) {
    var title = layout.title;
    if (typeof title === 'string') title = { text: title };
    if (!title || !title.text || width >= 640) return;
    var perLine = Math.max(16, Math.floor(width / 8.5));
    var tokens = title.text.match(/[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+|\s+/g) || [];
    var lines = [];
    var line = '';
    var used = 0;
    tokens.forEach(function (token) {
      var space = /^\s+$/.test(token);
      var size = WIDE.test(token) ? 2 : token.length;
      if (space) {
        if (line) { line += ' '; used += 1; }
        return;
      }
      if (line && used + size > perLine) {
        lines.push(line.replace(/\s+$/, ''));
        line = '';
        used = 0;
      }
      line += token;
      used += size;
    });
    if (line) lines.push(line.replace(/\s+$/, ''));
    layout.title = Object.assign({}, title, { text: lines.join('<br>'), font: Object.assign({}, title.font, { size: 14 }) });
    var margin = Object.assign({ t: 50 }, layout.margin);
    margin.t = Math.max(margin.t, 24 + 18 * lines.length);
    layout.margin = margin;
  }
  function draw(figure) {
    if (figure.getAttribute('data-state')) return;
    figure.setAttribute('data-state', 'loading');
    loadPlotly().then(
      function (Plotly) {
        var fig = JSON.parse(figure.querySelector('script.plotly-data').textContent);
        var target = figure.querySelector('.plotly-target');
        fitTitle(fig.layout, target.clientWidth);
        return Plotly.newPlot(target, fig.data, fig.layout, { displaylogo: false, displayModeBar: false, responsive: true }).then(function () {
          figure.classList.add('drawn');
          figure.setAttribute('data-state', 'drawn');
        });
      },
      function (error) {
        // The static chart stays; say why in the console for whoever serves the site.
        figure.setAttribute('data-state', 'failed');
        console.error('tfjs-accumulate site: ' + error.message + '; the static chart is shown instead.');
      }
    );
  }
  if ('IntersectionObserver' in window) {
    var observer = new IntersectionObserver(function (entries) {
      for (var e = 0; e < entries.length; e++) {
        if (entries[e].isIntersecting) {
          observer.unobserve(entries[e].target);
          draw(entries[e].target);
        }
      }
    }, { rootMargin: '200px 0px' });
    for (var f = 0; f < figures.length; f++) observer.observe(figures[f]);
  } else {
    for (var g = 0; g < figures.length; g++) draw(figures[g]);
  }
  // A printed page shows every chart as its static SVG with its text.
  window.addEventListener('beforeprint', function () {
    var details = document.querySelectorAll('.chart-text');
    for (var d = 0; d < details.length; d++) details[d].open = true;
  });
})();
