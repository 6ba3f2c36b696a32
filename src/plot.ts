/**
 * The one plotting module: every chart in the notebooks, the experiments and the site is built
 * here, so that style lives in one place. Figures are plain Plotly JSON (`{ data, layout }`),
 * which JupyterLab, classic Notebook and the exported site can all draw.
 */

import { argumentError } from './errors';

/** One Plotly trace. Only the fields this project uses are typed; Plotly accepts many more. */
export interface PlotlyTrace {
  type: 'scatter' | 'bar';
  name?: string;
  x: (number | string)[];
  y: number[];
  mode?: 'lines' | 'markers' | 'lines+markers';
  error_y?: { type: 'data'; array: number[]; visible: boolean };
  line?: { dash?: 'solid' | 'dash' | 'dot'; color?: string; width?: number };
  marker?: { color?: string; size?: number };
  [key: string]: unknown;
}

/** A Plotly figure as JSON. */
export interface PlotlyFigure {
  data: PlotlyTrace[];
  layout: Record<string, unknown>;
}

/** One line of a {@link lineChart}. */
export interface Series {
  /** Legend label. */
  name: string;
  x: (number | string)[];
  y: number[];
  /** Error bars (one standard deviation, say), same length as `y`. Default: none. */
  errorY?: number[];
  /** Draw a dashed line, e.g. for a reference. Default false. */
  dashed?: boolean;
}

/** Options of {@link lineChart}. */
export interface LineChartArgs {
  /** Chart title. Required. */
  title: string;
  /** x-axis title, in the project's vocabulary (`microBatchSize`, `updateStep`, …). Required. */
  xTitle: string;
  /** y-axis title. Required. */
  yTitle: string;
  /** The lines. Required, at least one. */
  series: Series[];
  /** Logarithmic x axis. Default false. */
  logX?: boolean;
  /** Logarithmic y axis. Default false. */
  logY?: boolean;
  /** Markers on the points as well as lines. Default true. */
  markers?: boolean;
}

/** The palette, colour-blind safe (Okabe-Ito), shared by every chart. */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#F0E442', '#000000'];

const GRID_COLOR = '#e5e9f0';
const AXIS_COLOR = '#9aa3ad';

/** The layout every chart starts from. */
export function baseLayout(title: string, xTitle: string, yTitle: string): Record<string, unknown> {
  return {
    title: { text: title },
    xaxis: { title: { text: xTitle }, zeroline: false, gridcolor: GRID_COLOR, linecolor: AXIS_COLOR },
    yaxis: { title: { text: yTitle }, zeroline: false, gridcolor: GRID_COLOR, linecolor: AXIS_COLOR },
    // plotly.js ignores a template given by name (only plotly.py resolves names), so the white
    // style is spelled out.
    paper_bgcolor: '#ffffff',
    plot_bgcolor: '#ffffff',
    font: { family: 'system-ui, -apple-system, Segoe UI, sans-serif', size: 13 },
    margin: { l: 60, r: 20, t: 50, b: 50 },
    legend: { orientation: 'h', y: -0.2 },
    colorway: PALETTE,
    width: 720,
    height: 420,
  };
}

/** A line chart with one trace per series. */
export function lineChart(args: LineChartArgs): PlotlyFigure {
  checkSeries('lineChart', args);
  const markers = args.markers ?? true;
  const layout = baseLayout(args.title, args.xTitle, args.yTitle);
  if (args.logX) (layout.xaxis as Record<string, unknown>).type = 'log';
  if (args.logY) (layout.yaxis as Record<string, unknown>).type = 'log';
  return {
    data: args.series.map((s, i) => ({
      type: 'scatter',
      name: s.name,
      x: s.x,
      y: s.y,
      mode: markers ? 'lines+markers' : 'lines',
      line: { color: PALETTE[i % PALETTE.length], dash: s.dashed ? 'dash' : 'solid' },
      ...errorBars(s.errorY),
    })),
    layout,
  };
}

/** Options of {@link barChart}: one group of bars per x category, one bar per series. */
export interface BarChartArgs {
  /** Chart title. Required. */
  title: string;
  /** x-axis title. Required. */
  xTitle: string;
  /** y-axis title. Required. */
  yTitle: string;
  /** One series per bar colour; `x` holds the categories. Required, at least one. */
  series: Omit<Series, 'dashed'>[];
}

/** A grouped bar chart: for comparing a few quantities across categories (models, backends). */
export function barChart(args: BarChartArgs): PlotlyFigure {
  checkSeries('barChart', args);
  return {
    data: args.series.map((s, i) => ({
      type: 'bar',
      name: s.name,
      x: s.x,
      y: s.y,
      marker: { color: PALETTE[i % PALETTE.length] },
      ...errorBars(s.errorY),
    })),
    layout: { ...baseLayout(args.title, args.xTitle, args.yTitle), barmode: 'group' },
  };
}

/** Plotly's error bars for a trace, or nothing. */
function errorBars(errorY: number[] | undefined): Pick<PlotlyTrace, 'error_y'> {
  return errorY ? { error_y: { type: 'data', array: errorY, visible: true } } : {};
}

/** The checks every chart builder makes on its series. */
function checkSeries(owner: string, args: { series?: unknown } | undefined): void {
  const series = args?.series as { name: string; x: unknown[]; y: unknown[] }[] | undefined;
  if (!Array.isArray(series) || series.length === 0) {
    throw new Error(`${owner}: series must be a non-empty array of { name, x, y }.`);
  }
  for (const s of series) {
    if (s.x.length !== s.y.length) {
      throw new Error(`${owner}: series "${s.name}" must have as many x as y values; got ${s.x.length} and ${s.y.length}.`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Showing a figure: one Jupyter display bundle with three representations of the same chart.

/** MIME type of a Plotly figure in a display bundle, drawn by JupyterLab's Plotly renderer, VS Code and the site. */
export const PLOTLY_MIME = 'application/vnd.plotly.v1+json';

/** One Jupyter output with several representations; each front end picks the richest it can draw. */
export interface DisplayBundle {
  data: {
    /** The figure itself (`{ data, layout }`), for a Plotly renderer. */
    'application/vnd.plotly.v1+json': PlotlyFigure;
    /** A static SVG of the chart, upgraded to the interactive chart where `window.Plotly` exists. */
    'text/html': string;
    /** A few lines describing each trace, for terminals and logs. */
    'text/plain': string;
  };
  metadata: Record<string, unknown>;
}

/** The function tslab's kernel hands each cell to publish display data (`display_data` messages). */
type WriteDisplayData = (content: { data: Record<string, unknown>; metadata: Record<string, unknown>; transient: Record<string, unknown> }, update?: boolean) => void;

let figureCounter = 0;

/**
 * Turns a figure into one display bundle: the Plotly JSON, an HTML representation that draws the
 * chart without any network access, and plain text.
 */
export function figureBundle(fig: PlotlyFigure): DisplayBundle {
  checkFigure('figureBundle', fig);
  // Unique on a page that shows outputs of several kernel sessions.
  const id = `tfjs-accumulate-figure-${(figureCounter++).toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  // `<` is escaped so that no string in the figure can close the script element.
  const json = JSON.stringify(fig).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  const html =
    `<div class="tfjs-accumulate-figure" id="${id}">${figureSvg(fig)}</div>\n` +
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
 * (see {@link figureBundle}). Works in a cell run by the tslab kernel (JupyterLab, classic
 * Notebook, `jupyter nbconvert --execute`) and by `npm run notebooks`; throws anywhere else.
 */
export function showFigure(fig: PlotlyFigure): void {
  checkFigure('showFigure', fig);
  const write = kernelDisplayWriter();
  if (!write) {
    throw new Error(
      'showFigure: no tslab kernel is running in this process. showFigure only works in a notebook cell run by the ' +
        'tslab kernel (JupyterLab, classic Notebook, jupyter nbconvert) or by `npm run notebooks`; elsewhere use ' +
        'figureBundle(fig) to get the display bundle, or JSON.stringify(fig).',
    );
  }
  const bundle = figureBundle(fig);
  write({ data: bundle.data, metadata: bundle.metadata, transient: {} });
}

/**
 * Finds tslab's `lastWriteDisplayData`, which the kernel sets before each cell. `display.raw`
 * in tslab's public API can only send one MIME type as a string, so the bundle goes through the
 * kernel's own writer. The library and the kernel may load different copies of tslab (a global
 * tslab, or this package installed elsewhere), so every loaded copy is asked, not just the one
 * `require('tslab')` would resolve from here.
 */
function kernelDisplayWriter(): WriteDisplayData | undefined {
  const cache: Record<string, NodeModule | undefined> = typeof require === 'function' && require.cache ? require.cache : {};
  for (const [file, mod] of Object.entries(cache)) {
    if (!/[\\/]tslab[\\/]dist[\\/]jupyter\.js$/.test(file)) continue;
    const write = (mod?.exports as { lastWriteDisplayData?: unknown } | undefined)?.lastWriteDisplayData;
    if (typeof write === 'function') return write as WriteDisplayData;
  }
  return undefined;
}

function checkFigure(owner: string, fig: PlotlyFigure): void {
  if (!fig || typeof fig !== 'object' || !Array.isArray(fig.data) || typeof fig.layout !== 'object' || fig.layout === null) {
    throw argumentError(owner, 'fig', 'a Plotly figure { data: trace[], layout: object }', fig);
  }
}

/** Reads `title` whether Plotly got it as a string or as `{ text }`. */
function titleText(title: unknown): string {
  if (typeof title === 'string') return title;
  if (title && typeof title === 'object' && typeof (title as { text?: unknown }).text === 'string') return (title as { text: string }).text;
  return '';
}

function axis(layout: Record<string, unknown>, name: 'xaxis' | 'yaxis'): { title: string; log: boolean } {
  const a = (layout[name] ?? {}) as { title?: unknown; type?: unknown };
  return { title: titleText(a.title), log: a.type === 'log' };
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(2) : String(+v.toPrecision(4)));

/** The text/plain representation: the title, the axes, then one line per trace. */
export function figureText(fig: PlotlyFigure): string {
  const x = axis(fig.layout, 'xaxis');
  const y = axis(fig.layout, 'yaxis');
  const lines = [`${titleText(fig.layout.title) || 'Figure'} (x: ${x.title || 'x'}, y: ${y.title || 'y'})`];
  for (const [i, t] of fig.data.entries()) {
    const ys = (t.y ?? []).filter((v) => typeof v === 'number' && Number.isFinite(v));
    const xs = t.x ?? [];
    const range = ys.length ? `, y ${fmt(ys[0])} → ${fmt(ys[ys.length - 1])} (min ${fmt(Math.min(...ys))}, max ${fmt(Math.max(...ys))})` : '';
    const xr = xs.length ? `, x ${String(xs[0])} … ${String(xs[xs.length - 1])}` : '';
    lines.push(`  ${t.name ?? `trace ${i}`}: ${t.type ?? 'scatter'}, ${(t.y ?? []).length} points${xr}${range}`);
  }
  return lines.join('\n');
}

const xmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Tick values 1, 2 or 5 times a power of ten, about `count` of them across [lo, hi]. */
function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow;
  const ticks: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  return ticks;
}

/**
 * A static SVG of a scatter/bar figure, drawn without plotly.js: what a reader sees where no
 * Plotly renderer and no script can run (an untrusted notebook, a front end without network).
 */
export function figureSvg(fig: PlotlyFigure): string {
  const L = fig.layout;
  const W = typeof L.width === 'number' ? L.width : 720;
  const H = typeof L.height === 'number' ? L.height : 420;
  const m = { l: 70, r: 20, t: 50, b: 60, ...((L.margin ?? {}) as Record<string, number>) };
  const legendRows = Math.ceil(fig.data.length / 3);
  // Below the plot area: tick labels, the x-axis title, then the legend rows.
  const plot = { x0: m.l, x1: W - m.r, y0: m.t, y1: H - m.b - 18 * legendRows - 10 };
  const xa = axis(L, 'xaxis');
  const ya = axis(L, 'yaxis');
  // Categorical x (strings) are placed at their index among all categories.
  const categories = [...new Set(fig.data.flatMap((t) => t.x.filter((v): v is string => typeof v === 'string')))];
  const xValue = (v: number | string): number => (typeof v === 'string' ? categories.indexOf(v) : xa.log ? Math.log10(v) : v);
  const yValue = (v: number): number => (ya.log ? Math.log10(v) : v);
  const usable = (v: number, log: boolean): boolean => Number.isFinite(v) && (!log || v > 0);
  const xs: number[] = [];
  const ys: number[] = [];
  for (const t of fig.data) {
    t.x.forEach((v, i) => {
      const yv = t.y[i];
      if ((typeof v === 'string' || usable(v, xa.log)) && usable(yv, ya.log)) {
        xs.push(xValue(v));
        const err = t.error_y?.visible ? (t.error_y.array[i] ?? 0) : 0;
        ys.push(yValue(ya.log && yv - err <= 0 ? yv : yv - err), yValue(yv + err));
      }
    });
    if (t.type === 'bar' && !ya.log) ys.push(0); // bars grow from zero
  }
  let [xMin, xMax] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  let [yMin, yMax] = ys.length ? [Math.min(...ys), Math.max(...ys)] : [0, 1];
  if (categories.length > 0 || fig.data.some((t) => t.type === 'bar')) [xMin, xMax] = [xMin - 0.5, xMax + 0.5];
  if (xMax === xMin) [xMin, xMax] = [xMin - 1, xMax + 1];
  else if (categories.length === 0) [xMin, xMax] = [xMin - (xMax - xMin) * 0.02, xMax + (xMax - xMin) * 0.02];
  if (yMax === yMin) [yMin, yMax] = [yMin - 1, yMax + 1];
  const pad = (yMax - yMin) * 0.05;
  [yMin, yMax] = [yMin - pad, yMax + pad];
  const px = (v: number): number => plot.x0 + ((v - xMin) / (xMax - xMin)) * (plot.x1 - plot.x0);
  const py = (v: number): number => plot.y1 - ((v - yMin) / (yMax - yMin)) * (plot.y1 - plot.y0);
  const r = (v: number): string => v.toFixed(1);
  const parts: string[] = [];
  parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  const yTicks = ya.log ? niceTicks(Math.ceil(yMin), Math.floor(yMax), Math.max(1, Math.floor(yMax) - Math.ceil(yMin))) : niceTicks(yMin, yMax);
  for (const v of yTicks) {
    parts.push(`<line x1="${plot.x0}" x2="${plot.x1}" y1="${r(py(v))}" y2="${r(py(v))}" stroke="${GRID_COLOR}"/>`);
    parts.push(`<text x="${plot.x0 - 6}" y="${r(py(v) + 4)}" text-anchor="end">${xmlEscape(fmt(ya.log ? 10 ** v : v))}</text>`);
  }
  const xTicks = categories.length
    ? categories.map((_, i) => i)
    : xa.log
      ? niceTicks(Math.ceil(xMin), Math.floor(xMax), Math.max(1, Math.floor(xMax) - Math.ceil(xMin)))
      : niceTicks(xMin, xMax, 6);
  for (const v of xTicks) {
    const label = categories.length ? categories[v] : fmt(xa.log ? 10 ** v : v);
    parts.push(`<text x="${r(px(v))}" y="${plot.y1 + 16}" text-anchor="middle">${xmlEscape(label)}</text>`);
  }
  parts.push(`<rect x="${plot.x0}" y="${plot.y0}" width="${plot.x1 - plot.x0}" height="${plot.y1 - plot.y0}" fill="none" stroke="${AXIS_COLOR}"/>`);
  const bars = fig.data.filter((t) => t.type === 'bar');
  const slot = bars.length ? ((px(1) - px(0)) * 0.8) / bars.length : 0;
  fig.data.forEach((t, i) => {
    const color = t.line?.color ?? t.marker?.color ?? PALETTE[i % PALETTE.length];
    const pts = t.x
      .map((v, j) => ({ v, yv: t.y[j], err: t.error_y?.visible ? (t.error_y.array[j] ?? 0) : 0 }))
      .filter(({ v, yv }) => (typeof v === 'string' || usable(v, xa.log)) && usable(yv, ya.log))
      .map(({ v, yv, err }) => ({ x: px(xValue(v)), y: py(yValue(yv)), err, yv }));
    if (t.type === 'bar') {
      const k = bars.indexOf(t);
      const base = py(Math.max(yMin, ya.log ? yMin : 0));
      for (const p of pts) {
        const x = p.x - (slot * bars.length) / 2 + k * slot;
        parts.push(`<rect x="${r(x)}" y="${r(Math.min(p.y, base))}" width="${r(slot)}" height="${r(Math.abs(base - p.y))}" fill="${color}"/>`);
      }
    } else {
      const dash = t.line?.dash === 'dash' ? ' stroke-dasharray="6 4"' : t.line?.dash === 'dot' ? ' stroke-dasharray="2 3"' : '';
      if (t.mode !== 'markers') parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${pts.map((p) => `${r(p.x)},${r(p.y)}`).join(' ')}"/>`);
      if (t.mode === 'markers' || (t.mode === 'lines+markers' && pts.length <= 200)) {
        for (const p of pts) parts.push(`<circle cx="${r(p.x)}" cy="${r(p.y)}" r="3" fill="${color}"/>`);
      }
    }
    for (const p of pts) {
      if (p.err <= 0) continue;
      const low = ya.log && p.yv - p.err <= 0 ? yMin : yValue(p.yv - p.err);
      parts.push(`<line x1="${r(p.x)}" x2="${r(p.x)}" y1="${r(py(yValue(p.yv + p.err)))}" y2="${r(py(low))}" stroke="${color}"/>`);
    }
    const lx = plot.x0 + (i % 3) * ((plot.x1 - plot.x0) / 3);
    const ly = plot.y1 + 62 + Math.floor(i / 3) * 18;
    parts.push(`<rect x="${r(lx)}" y="${ly - 9}" width="14" height="4" fill="${color}"/>`);
    parts.push(`<text x="${r(lx + 20)}" y="${ly - 3}">${xmlEscape(t.name ?? `trace ${i}`)}</text>`);
  });
  parts.push(`<text x="${W / 2}" y="${m.t / 2 + 6}" text-anchor="middle" font-size="16">${xmlEscape(titleText(L.title))}</text>`);
  parts.push(`<text x="${(plot.x0 + plot.x1) / 2}" y="${plot.y1 + 36}" text-anchor="middle">${xmlEscape(xa.title)}</text>`);
  parts.push(`<text transform="translate(16 ${(plot.y0 + plot.y1) / 2}) rotate(-90)" text-anchor="middle">${xmlEscape(ya.title)}</text>`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="tfjs-accumulate-static-figure" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
    `role="img" aria-label="${xmlEscape(titleText(L.title))}" font-family="system-ui, sans-serif" font-size="12" fill="#2a3f5f">` +
    parts.join('') +
    '</svg>'
  );
}
