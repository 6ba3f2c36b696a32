/**
 * The text form of a figure: a few lines a terminal, a log, a screen reader or a search index
 * can use where the chart itself cannot be seen. It is written in the figure's locale
 * (`layout.meta.locale`, set by `localizeFigure`), whatever process draws it.
 */

import { axis, titleText, type PlotlyFigure } from './figures';
import type { DisplayLocale } from './locale';
import { figureLocale } from './localize';

/** A number as a chart label: integers as they are, others to four significant digits. */
export const tickLabel = (v: number): string =>
  Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || Math.abs(v) < 1e-3 ? v.toExponential(2) : String(+v.toPrecision(4));

/** The words of the text form, per locale. */
const WORDS: Record<DisplayLocale, { figure: string; trace: (i: number) => string; kind: (type: string) => string; points: (n: number) => string; min: string; max: string; label: string; chart: (title: string) => string; sep: string; open: string; close: string }> = {
  en: {
    figure: 'Figure',
    trace: (i) => `trace ${i}`,
    kind: (type) => type,
    points: (n) => `${n} points`,
    min: 'min',
    max: 'max',
    label: 'The chart as text',
    chart: (title) => `Chart: ${title}`,
    sep: ', ',
    open: ' (',
    close: ')',
  },
  zh: {
    figure: '图',
    trace: (i) => `序列 ${i}`,
    kind: (type) => ({ scatter: '折线', bar: '柱状' })[type] ?? type,
    points: (n) => `${n} 个点`,
    min: '最小',
    max: '最大',
    label: '图表的文字版',
    chart: (title) => `图表：${title}`,
    sep: '，',
    open: '（',
    close: '）',
  },
};

/** The heading of a figure's text form in the figure's locale ("The chart as text"), for a page that shows it. */
export function figureTextLabel(fig: PlotlyFigure): string {
  return WORDS[figureLocale(fig)].label;
}

/** A label naming the chart for assistive technology (`Chart: <title>`), in the figure's locale. */
export function figureAriaLabel(fig: PlotlyFigure, title: string = titleText(fig.layout.title)): string {
  return WORDS[figureLocale(fig)].chart(title);
}

/** The text/plain representation: the title, the axes, then one line per trace. */
export function figureText(fig: PlotlyFigure): string {
  const w = WORDS[figureLocale(fig)];
  const x = axis(fig.layout, 'xaxis');
  const y = axis(fig.layout, 'yaxis');
  const lines = [`${titleText(fig.layout.title) || w.figure}${w.open}x: ${x.title || 'x'}${w.sep}y: ${y.title || 'y'}${w.close}`];
  for (const [i, t] of fig.data.entries()) {
    const ys = (t.y ?? []).filter((v) => typeof v === 'number' && Number.isFinite(v));
    const xs = t.x ?? [];
    const f = tickLabel;
    const range = ys.length ? `${w.sep}y ${f(ys[0])} → ${f(ys[ys.length - 1])}${w.open}${w.min} ${f(Math.min(...ys))}${w.sep}${w.max} ${f(Math.max(...ys))}${w.close}` : '';
    const xr = xs.length ? `${w.sep}x ${String(xs[0])} … ${String(xs[xs.length - 1])}` : '';
    lines.push(`  ${t.name ?? w.trace(i)}: ${w.kind(t.type ?? 'scatter')}${w.sep}${w.points((t.y ?? []).length)}${xr}${range}`);
  }
  return lines.join('\n');
}
