// Draws `application/vnd.plotly.v1+json` outputs (showFigure's figures) with the same plotly.js
// the static site ships (plotly.js-basic-dist-min, the version of the root lockfile), from the
// figure's own layout: its height, fonts and colours come from the JSON, as on the site.
// Unlike jupyterlab-plotly it adds no image/png to the output, so opening an executed notebook
// leaves it unmodified (docs/notebooks.md).
import { Widget } from '@lumino/widgets';

export const PLOTLY_MIME = 'application/vnd.plotly.v1+json';

/** plotly.js, loaded on the first figure only: most pages of the lab have none. */
let plotly;
function loadPlotly() {
  plotly ??= import('plotly.js-basic-dist-min').then((m) => m.default ?? m);
  return plotly;
}

class PlotlyRenderer extends Widget {
  constructor() {
    super();
    this.addClass('tfjs-accumulate-plotly');
  }

  async renderModel(model) {
    const fig = model.data[PLOTLY_MIME];
    const Plotly = await loadPlotly();
    // The layout as the site draws it: the figure's own, fitted to the width of the output.
    const layout = { ...fig.layout, width: undefined, autosize: true };
    await Plotly.react(this.node, fig.data, layout, { displaylogo: false, responsive: true });
  }

  // A figure drawn before its cell was laid out takes plotly.js's 700 px default; fit it now.
  onAfterAttach() {
    this.fit();
  }

  onResize() {
    this.fit();
  }

  fit() {
    if (plotly && this.node.querySelector('.main-svg')) void plotly.then((Plotly) => Plotly.Plots.resize(this.node));
  }
}

/** The mime extension: ranked before text/html, so a figure is drawn, not its static SVG. */
export default {
  id: 'tfjs-accumulate-lab:plotly',
  description: "Draws showFigure's Plotly JSON with the site's plotly.js.",
  rendererFactory: { safe: true, mimeTypes: [PLOTLY_MIME], createRenderer: () => new PlotlyRenderer() },
  rank: 0,
  dataType: 'json',
};
