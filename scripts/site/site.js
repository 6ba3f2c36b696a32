// Draws every Plotly figure of a page from the JSON the exporter embedded next to it. Loaded
// after assets/plotly.js; no network access is needed.
(function () {
  'use strict';
  var figures = document.querySelectorAll('.plotly-figure');
  for (var i = 0; i < figures.length; i++) {
    var figure = figures[i];
    var target = figure.querySelector('.plotly-target');
    var data = figure.querySelector('script.plotly-data');
    if (!window.Plotly) {
      target.textContent = 'plotly.js did not load, so this chart cannot be drawn.';
      console.error('tfjs-accumulate site: window.Plotly is missing; is assets/plotly.js present?');
      return;
    }
    var fig = JSON.parse(data.textContent);
    window.Plotly.newPlot(target, fig.data, fig.layout, { displaylogo: false, responsive: true });
  }
})();
