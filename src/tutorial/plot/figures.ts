/**
 * Figure specs: every chart in the notebooks, the experiments and the site is built here, so
 * that style lives in one place. Figures are plain Plotly JSON (`{ data, layout }`), which
 * JupyterLab, classic Notebook and the exported site can all draw.
 */

import { argumentError } from '../../core/errors';

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

/** Grid lines, shared by Plotly's layout and the static SVG. */
export const GRID_COLOR = '#e5e9f0';
/** Axis lines, shared by Plotly's layout and the static SVG. */
export const AXIS_COLOR = '#9aa3ad';

/**
 * The size the static SVG is drawn at when the layout gives none; it scales down to fit. The
 * width is small enough that text of {@link FONT_SIZE} stays at 10 px or more on a 390 px phone
 * (a 358 px column), and Plotly's own chart, which fills its container, keeps the height.
 */
export const DEFAULT_FIGURE_SIZE = { width: 480, height: 420 };

/**
 * The fonts of every chart, in the figure's JSON so that every front end draws the same text:
 * the platforms' UI fonts, then CJK fonts for the Chinese edition (Debian's fonts-noto-cjk).
 */
export const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'PingFang SC', 'Microsoft YaHei', sans-serif";
/** The size of every chart text in px but the title's; the smallest text a chart draws. */
export const FONT_SIZE = 14;
/** The title's size in px. */
export const TITLE_FONT_SIZE = 16;
/** The colour of every chart text. */
export const TEXT_COLOR = '#2a3f5f';

/** The layout every chart starts from. */
export function baseLayout(title: string, xTitle: string, yTitle: string): Record<string, unknown> {
  const axisStyle = { zeroline: false, gridcolor: GRID_COLOR, linecolor: AXIS_COLOR, automargin: true };
  return {
    title: { text: title, font: { size: TITLE_FONT_SIZE } },
    xaxis: { title: { text: xTitle }, ...axisStyle },
    yaxis: { title: { text: yTitle }, ...axisStyle },
    // plotly.js ignores a template given by name (only plotly.py resolves names), so the white
    // style is spelled out.
    paper_bgcolor: '#ffffff',
    plot_bgcolor: '#ffffff',
    font: { family: FONT_FAMILY, size: FONT_SIZE, color: TEXT_COLOR },
    margin: { l: 60, r: 20, t: 50, b: 50 },
    // At the bottom of the whole figure (`yref: 'container'`, plotly.js 2.22 and later), so that
    // Plotly grows the bottom margin to fit it below the x-axis title. Placed at a fraction of
    // the plot's height below the plot, as before, the rows a narrow chart needs ran into the
    // axis title (a 390 px phone, six normalizations: one row each).
    legend: { orientation: 'h', x: 0, xanchor: 'left', yref: 'container', y: 0, yanchor: 'bottom', font: { size: FONT_SIZE } },
    colorway: PALETTE,
    // No width: Plotly fills its container, so a chart fits a 320 px phone as well as a desktop.
    // The static SVG takes DEFAULT_FIGURE_SIZE's width as its drawing size and scales to fit.
    autosize: true,
    height: DEFAULT_FIGURE_SIZE.height,
  };
}

/**
 * Ticks of a log axis at the data's own values (1, 2, 4, …, 32) instead of Plotly's decades
 * (1, 10), when the data take a few integer values, as sizes and counts do; undefined otherwise.
 */
export function dataTicks(values: (number | string)[]): number[] | undefined {
  const distinct = [...new Set(values.filter((v): v is number => typeof v === 'number' && v > 0 && Number.isFinite(v)))].sort((a, b) => a - b);
  if (distinct.length === 0 || distinct.length > 12 || !distinct.every(Number.isInteger)) return undefined;
  return distinct;
}

/** A line chart with one trace per series. */
export function lineChart(args: LineChartArgs): PlotlyFigure {
  checkSeries('lineChart', args);
  const markers = args.markers ?? true;
  const layout = baseLayout(args.title, args.xTitle, args.yTitle);
  for (const [log, name, key] of [[args.logX, 'xaxis', 'x'], [args.logY, 'yaxis', 'y']] as const) {
    if (!log) continue;
    const ticks = dataTicks(args.series.flatMap((s) => s[key]));
    layout[name] = { ...(layout[name] as Record<string, unknown>), type: 'log', ...(ticks ? { tickvals: ticks } : {}) };
  }
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

/** Throws the named argument error unless `fig` looks like a Plotly figure. */
export function checkFigure(owner: string, fig: PlotlyFigure): void {
  if (!fig || typeof fig !== 'object' || !Array.isArray(fig.data) || typeof fig.layout !== 'object' || fig.layout === null) {
    throw argumentError(owner, 'fig', 'a Plotly figure { data: trace[], layout: object }', fig);
  }
}

/** Reads `title` whether Plotly got it as a string or as `{ text }`. */
export function titleText(title: unknown): string {
  if (typeof title === 'string') return title;
  if (title && typeof title === 'object' && typeof (title as { text?: unknown }).text === 'string') return (title as { text: string }).text;
  return '';
}

/** An axis's title and whether it is logarithmic. */
export function axis(layout: Record<string, unknown>, name: 'xaxis' | 'yaxis'): { title: string; log: boolean } {
  const a = (layout[name] ?? {}) as { title?: unknown; type?: unknown };
  return { title: titleText(a.title), log: a.type === 'log' };
}
