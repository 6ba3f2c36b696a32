/**
 * Showing a figure: one Jupyter display bundle with three representations of the same chart,
 * so that every front end (JupyterLab, classic Notebook, VS Code, the exported site, a terminal)
 * picks the richest one it can draw.
 */

import { checkOptions } from '../../core/errors';
import { checkFigure, type PlotlyFigure } from './figures';
import { requireKernelPublisher } from './kernel';
import type { DisplayLocale } from './locale';
import { localizeFigure } from './localize';
import { figureImage } from './svg';
import { figureText } from './text';

/** MIME type of a Plotly figure in a display bundle, drawn by JupyterLab's Plotly renderer, VS Code and the site. */
export const PLOTLY_MIME = 'application/vnd.plotly.v1+json';

/** One Jupyter output with several representations; each front end picks the richest it can draw. */
export interface DisplayBundle {
  data: {
    /** The figure itself (`{ data, layout }`), for a Plotly renderer. */
    'application/vnd.plotly.v1+json': PlotlyFigure;
    /** The static SVG of the chart as an image, upgraded to the interactive chart where `window.Plotly` exists. */
    'text/html': string;
    /** A few lines describing each trace, for terminals and logs. */
    'text/plain': string;
  };
  metadata: Record<string, unknown>;
}

let figureCounter = 0;

/** Options of {@link figureBundle} and {@link showFigure}. */
export interface FigureArgs {
  /**
   * The language of the figure's texts (see `activeLocale` and `localizeFigure`): outside `en`
   * every title, axis title, legend name and category is translated, and one that looks English
   * with no translation throws `MissingTranslationError`. Default: the active locale, which is
   * `zh` in a notebook of `notebooks/zh/`.
   */
  locale?: DisplayLocale;
}

/**
 * Turns a figure into one display bundle, in the active locale (or `args.locale`): the Plotly
 * JSON, an HTML representation that draws the chart without any network access, and plain text.
 */
export function figureBundle(figure: PlotlyFigure, args: FigureArgs = {}): DisplayBundle {
  return bundleOf('figureBundle', figure, args);
}

function bundleOf(owner: string, figure: PlotlyFigure, args: FigureArgs): DisplayBundle {
  checkFigure(owner, figure);
  const fig = localizeFigure(figure, checkOptions<FigureArgs>(owner, 'args', args, ['locale']).locale, owner);
  // Unique on a page that shows outputs of several kernel sessions.
  const id = `tfjs-accumulate-figure-${(figureCounter++).toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  // `<` is escaped so that no string in the figure can close the script element.
  const json = JSON.stringify(fig).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  const html =
    `<div class="tfjs-accumulate-figure" id="${id}">${figureImage(fig)}</div>\n` +
    '<script type="text/javascript">\n' +
    '(function () {\n' +
    `  var el = document.getElementById(${JSON.stringify(id)});\n` +
    '  // Without plotly.js on the page (no Plotly renderer, no network) the static SVG stays.\n' +
    '  if (!el || !window.Plotly) return;\n' +
    `  var fig = ${json};\n` +
    "  el.innerHTML = '';\n" +
    '  window.Plotly.newPlot(el, fig.data, fig.layout, { displaylogo: false, responsive: true });\n' +
    '})();\n' +
    '</script>';
  return { data: { [PLOTLY_MIME]: fig, 'text/html': html, 'text/plain': figureText(fig) }, metadata: {} };
}

/**
 * Shows a figure as the output of the current notebook cell, as one multi-MIME display bundle
 * (see {@link figureBundle}), with its texts in the active locale: in a notebook of
 * `notebooks/zh/` every title, axis, legend and category is Chinese, and a text the zh table
 * (locales/zh.ts) lacks throws `MissingTranslationError` instead of reaching the reader in
 * English. Works in a cell run by the tslab or the Deno kernel (JupyterLab,
 * classic Notebook, `jupyter nbconvert --execute`) and by `npm run notebooks`; throws anywhere
 * else. Bad input and a missing kernel throw at once; the promise resolves when the kernel has the
 * output, so write `await showFigure(fig)` to keep it in its cell under Deno.
 */
export function showFigure(fig: PlotlyFigure, args: FigureArgs = {}): Promise<void> {
  const bundle = bundleOf('showFigure', fig, args);
  const publish = requireKernelPublisher('showFigure', 'figureBundle(fig) to get the display bundle, or JSON.stringify(fig)');
  return publish(bundle);
}
