/**
 * The one plotting module: every chart in the notebooks, the experiments and the site is built
 * here, so that style lives in one place. Figures are plain Plotly JSON (`{ data, layout }`),
 * which JupyterLab, classic Notebook and the exported site can all draw.
 */

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

/** The layout every chart starts from. */
export function baseLayout(title: string, xTitle: string, yTitle: string): Record<string, unknown> {
  return {
    title: { text: title },
    xaxis: { title: { text: xTitle }, zeroline: false },
    yaxis: { title: { text: yTitle }, zeroline: false },
    template: 'plotly_white',
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
  if (!args || !Array.isArray(args.series) || args.series.length === 0) {
    throw new Error('lineChart: series must be a non-empty array of { name, x, y }.');
  }
  for (const s of args.series) {
    if (s.x.length !== s.y.length) {
      throw new Error(`lineChart: series "${s.name}" must have as many x as y values; got ${s.x.length} and ${s.y.length}.`);
    }
  }
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
      ...(s.errorY ? { error_y: { type: 'data' as const, array: s.errorY, visible: true } } : {}),
    })),
    layout,
  };
}
