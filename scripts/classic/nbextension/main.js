// The classic Notebook's (6.x) renderer for `application/vnd.plotly.v1+json`, showFigure's
// figure JSON: it draws the figure with the plotly.js the site and lab/ ship
// (plotly.js-basic-dist-min, copied beside this file by scripts/classic/nbextension.ts), from the
// figure's own layout, so classic shows the chart the site and JupyterLab show: the JSON's
// height, fonts and colours, the width of the output. Without this extension classic falls back
// to the bundle's text/html, the library's static SVG. An AMD module, as classic loads them.
define(['require', 'jquery', 'base/js/namespace', 'notebook/js/outputarea'], function (require, $, Jupyter, outputarea) {
  'use strict';

  var MIME = 'application/vnd.plotly.v1+json';
  var CLASS = 'tfjs-accumulate-plotly';

  /** plotly.js, loaded on the first figure only. It sets `window.Plotly` and defines no AMD module. */
  var plotly;
  function loadPlotly() {
    plotly = plotly || new Promise(function (resolve, reject) {
      require(['./plotly.min'], function () { resolve(window.Plotly); }, reject);
    });
    return plotly;
  }

  /**
   * Resolves once `node` is in the page and laid out, so that plotly.js can read its width: at
   * once, or when it gets a size (appended, or its collapsed output expanded).
   */
  function laidOut(node) {
    return new Promise(function (resolve) {
      var ready = function () { return node.isConnected && node.clientWidth > 0; };
      if (ready()) return resolve();
      var observer = new ResizeObserver(function () {
        if (!ready()) return;
        observer.disconnect();
        resolve();
      });
      observer.observe(node);
    });
  }

  function draw(node, fig) {
    // A copy: plotly.js writes into the traces it draws, and the output's JSON is what gets saved.
    var copy = JSON.parse(JSON.stringify(fig));
    // The layout as the site and lab/ draw it: the figure's own, fitted to the width of the output.
    var layout = $.extend({}, copy.layout, { width: undefined, autosize: true });
    return Promise.all([loadPlotly(), laidOut(node)]).then(function (loaded) {
      return loaded[0].newPlot(node, copy.data, layout, { displaylogo: false, responsive: true });
    }).catch(function (error) {
      console.error('tfjs-accumulate-plotly: the figure could not be drawn', error);
    });
  }

  /** The append function classic's OutputArea calls with the MIME type's value (`this` is the area). */
  function appendFigure(fig, md, element) {
    var subarea = this.create_output_subarea(md, CLASS, MIME);
    // plotly.js sizes the chart to its node's CSS width, which under classic's border-box sizing
    // includes the subarea's padding; a plain node inside gets the width the chart may take.
    var target = $('<div/>').addClass(CLASS + '-target');
    subarea.append(target);
    element.append(subarea);
    draw(target[0], fig);
    return subarea;
  }

  /**
   * Outputs shown before the extension loaded (the notebook came first) went to the text/html
   * fallback; they are shown again from their JSON. Nothing is marked modified: the outputs,
   * their trust and their collapsed and scrolled states stay as they were.
   */
  function redrawShown(notebook) {
    notebook.get_cells().forEach(function (cell) {
      var area = cell.output_area;
      if (!area) return;
      var outputs = area.toJSON();
      var hasFigure = outputs.some(function (o) { return o.data && o.data[MIME] !== undefined; });
      if (!hasFigure || area.element.find('.' + CLASS).length > 0) return;
      var state = { trusted: area.trusted, collapsed: area.collapsed, scrolled: area.scroll_state };
      area.clear_output(false, true);
      area.trusted = state.trusted;
      area.fromJSON(outputs, { collapsed: state.collapsed, scrolled: state.scrolled });
    });
  }

  function load_ipython_extension() {
    // Classic fits every output SVG to its column (`max-width: 100%; height: auto`), which made
    // plotly.js's 420 px chart 419.98 px high (its width attribute rounded to layout units); the
    // SVGs keep the size plotly.js gave them, the height of their container.
    $('<style/>').text('div.output_area .' + CLASS + ' svg.main-svg { max-width: none; height: 100%; }').appendTo('head');
    // Safe: the JSON is data that plotly.js draws, with no script in it, so an untrusted
    // notebook gets the chart too (as JupyterLab draws it) instead of its sanitized HTML.
    outputarea.OutputArea.prototype.register_mime_type(MIME, appendFigure, { safe: true, index: 0 });
    if (Jupyter.notebook && Jupyter.notebook._fully_loaded) redrawShown(Jupyter.notebook);
  }

  return { load_ipython_extension: load_ipython_extension };
});
