/**
 * The Plotly bundle the site ships: the minified "basic" distribution, which holds only the
 * trace types the tutorial's figures use. A figure that needs any other type fails the export,
 * naming the figure, instead of drawing nothing in a reader's browser.
 */
import { figureAriaLabel, figureSvg, figureText, figureTextLabel, type PlotlyFigure } from '../../src/tutorial/index';
import { html, scriptJson, trusted, type SafeHtml } from './html';

/** The npm file the site copies to `assets/plotly.min.js`. */
export const PLOTLY_BUNDLE = 'plotly.js-basic-dist-min/plotly-basic.min.js';

/**
 * The trace types in plotly.js-basic-dist-min (its README: scatter, bar, pie). The browser test
 * checks this list against `Plotly.PlotSchema` of the shipped file, so it cannot drift.
 */
export const BUNDLE_TRACE_TYPES: readonly string[] = ['bar', 'pie', 'scatter'];

/** The trace types a figure needs that the bundle lacks (Plotly's default type is scatter). */
export function missingTraceTypes(fig: PlotlyFigure): string[] {
  const types = new Set(fig.data.map((t) => (typeof t.type === 'string' ? t.type : 'scatter')));
  return [...types].filter((t) => !BUNDLE_TRACE_TYPES.includes(t)).sort();
}

/** The chart's title, for its label and for error messages. */
export function figureTitle(fig: PlotlyFigure): string {
  const t = fig.layout?.title as unknown;
  if (typeof t === 'string') return t;
  if (t && typeof t === 'object' && typeof (t as { text?: unknown }).text === 'string') return (t as { text: string }).text;
  return 'untitled figure';
}

/**
 * A chart on the site: the static SVG and its text summary (the accessible form, the print form,
 * and what shows before or without plotly.js), plus the figure's JSON, which assets/site.js
 * draws with plotly.js once the chart scrolls into view. Its labels are in the figure's own
 * locale (`layout.meta.locale`, set when a Chinese notebook showed it).
 */
export function chartHtml(fig: PlotlyFigure, id: string): SafeHtml {
  const title = figureTitle(fig);
  // The plotly.js layout of the page: the figure's own, fitted to its container.
  const layout = { ...fig.layout, width: undefined, autosize: true };
  return html`<figure class="output plotly-figure" id="${id}">
<div class="chart" role="img" aria-label="${figureAriaLabel(fig, title)}" aria-describedby="${`${id}-text`}">
<div class="static-chart" aria-hidden="true">${trustedSvg(fig)}</div>
<div class="plotly-target"></div>
</div>
<details class="chart-text"><summary>${figureTextLabel(fig)}</summary><pre id="${`${id}-text`}">${figureText(fig)}</pre></details>
<script type="application/json" class="plotly-data">${trustedJson({ data: fig.data, layout })}</script>
</figure>`;
}

// figureSvg escapes every string it draws (see src/tutorial/plot/svg.ts); scriptJson escapes `<`.
const trustedSvg = (fig: PlotlyFigure): SafeHtml => trusted(figureSvg(fig));
const trustedJson = (value: unknown): SafeHtml => trusted(scriptJson(value));
