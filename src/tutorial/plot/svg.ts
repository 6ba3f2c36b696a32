/**
 * The static SVG of a figure, drawn without plotly.js: what a reader sees where no Plotly
 * renderer and no script can run (an untrusted notebook, a front end without network, a printed
 * page). It is drawn at the layout's size (or DEFAULT_FIGURE_SIZE) and scales down to fit.
 */

import { AXIS_COLOR, axis, DEFAULT_FIGURE_SIZE, GRID_COLOR, PALETTE, titleText, type PlotlyFigure } from './figures';
import { formatNumber as fmt } from './text';

/** Escapes text for SVG/XML content and attribute values. */
export const xmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

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

/** A static SVG of a scatter/bar figure (see the module comment). */
export function figureSvg(fig: PlotlyFigure): string {
  const L = fig.layout;
  const W = typeof L.width === 'number' ? L.width : DEFAULT_FIGURE_SIZE.width;
  const H = typeof L.height === 'number' ? L.height : DEFAULT_FIGURE_SIZE.height;
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
    `<svg xmlns="http://www.w3.org/2000/svg" class="tfjs-accumulate-static-figure" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" style="max-width:100%;height:auto" ` +
    `role="img" aria-label="${xmlEscape(titleText(L.title))}" font-family="system-ui, sans-serif" font-size="12" fill="#2a3f5f">` +
    parts.join('') +
    '</svg>'
  );
}
