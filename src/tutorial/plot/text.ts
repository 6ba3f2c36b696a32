/**
 * The text form of a figure: a few lines a terminal, a log, a screen reader or a search index
 * can use where the chart itself cannot be seen.
 */

import { axis, titleText, type PlotlyFigure } from './figures';

/** A number as a chart label: integers as they are, others to four significant digits. */
export const formatNumber = (v: number): string =>
  Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(2) : String(+v.toPrecision(4));

/** The text/plain representation: the title, the axes, then one line per trace. */
export function figureText(fig: PlotlyFigure): string {
  const x = axis(fig.layout, 'xaxis');
  const y = axis(fig.layout, 'yaxis');
  const lines = [`${titleText(fig.layout.title) || 'Figure'} (x: ${x.title || 'x'}, y: ${y.title || 'y'})`];
  for (const [i, t] of fig.data.entries()) {
    const ys = (t.y ?? []).filter((v) => typeof v === 'number' && Number.isFinite(v));
    const xs = t.x ?? [];
    const f = formatNumber;
    const range = ys.length ? `, y ${f(ys[0])} → ${f(ys[ys.length - 1])} (min ${f(Math.min(...ys))}, max ${f(Math.max(...ys))})` : '';
    const xr = xs.length ? `, x ${String(xs[0])} … ${String(xs[xs.length - 1])}` : '';
    lines.push(`  ${t.name ?? `trace ${i}`}: ${t.type ?? 'scatter'}, ${(t.y ?? []).length} points${xr}${range}`);
  }
  return lines.join('\n');
}
