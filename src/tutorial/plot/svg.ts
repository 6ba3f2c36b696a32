/**
 * The static SVG of a figure, drawn without plotly.js: what a reader sees where no Plotly
 * renderer and no script can run (an untrusted notebook, a front end without network, a printed
 * page). It is drawn at the layout's size (or DEFAULT_FIGURE_SIZE) and scales down to fit. It
 * follows the figure's JSON as Plotly does, so both draw the same chart: the fonts and colours
 * of the layout, the ticks it names (`tickvals`, `ticktext`), and a legend laid out in rows
 * that never overlap, whatever the length of its names.
 */

import { AXIS_COLOR, axis, DEFAULT_FIGURE_SIZE, FONT_FAMILY, FONT_SIZE, GRID_COLOR, PALETTE, TEXT_COLOR, TITLE_FONT_SIZE, titleText, type PlotlyFigure, type PlotlyTrace } from './figures';
import { tickLabel as fmt } from './text';

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

/** Ticks of a log axis spanning [lo, hi] in log10 units: decades, with 2 and 5 when few decades fit. */
function logTicks(lo: number, hi: number): number[] {
  const decades: number[] = [];
  for (let d = Math.floor(lo); d <= Math.ceil(hi); d++) decades.push(d);
  const steps = hi - lo <= 2.5 ? [1, 2, 5] : [1];
  return decades.flatMap((d) => steps.map((m) => d + Math.log10(m))).filter((v) => v >= lo - 1e-9 && v <= hi + 1e-9);
}

/**
 * About how wide `text` is drawn at `size` px in a UI font: CJK and full-width characters one
 * em, narrow Latin letters and punctuation a third, other characters a little over half. Used
 * to lay out the legend and wrap the title; it errs wide so that nothing overlaps.
 */
export function textWidth(text: string, size: number): number {
  let em = 0;
  for (const c of text) {
    if (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(c)) em += 1;
    else if (/[ilj.,:;|!'`() \[\]]/.test(c)) em += 0.33;
    else if (/[A-Z#%&@MWmw]/.test(c)) em += 0.72;
    else em += 0.58;
  }
  return em * size;
}

/** `text` broken into lines no wider than `width`: at spaces, and between any two CJK characters. */
export function wrapText(text: string, size: number, width: number): string[] {
  const tokens = text.match(/[\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60][\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f]*|[^\s\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60]+|\s+/g) ?? [];
  const lines: string[] = [];
  let line = '';
  for (const token of tokens) {
    const next = line + token;
    if (line.trim() && textWidth(next.trimEnd(), size) > width) {
      lines.push(line.trimEnd());
      line = token.trimStart();
    } else line = next;
  }
  if (line.trim()) lines.push(line.trimEnd());
  return lines.length ? lines : [''];
}

/**
 * `text` wrapped into as few lines as fit `width`, of about equal length: the narrowest width
 * that needs no more lines, so that a title does not end in a line of one character.
 */
export function balancedLines(text: string, size: number, width: number): string[] {
  const lines = wrapText(text, size, width);
  if (lines.length < 2) return lines;
  let [lo, hi] = [width / lines.length, width];
  for (let i = 0; i < 12; i++) {
    const mid = (lo + hi) / 2;
    if (wrapText(text, size, mid).length > lines.length) lo = mid;
    else hi = mid;
  }
  return wrapText(text, size, hi);
}

/** The numbers in `layout[axis].tickvals`, or undefined when it gives none. */
function givenTicks(layout: Record<string, unknown>, name: 'xaxis' | 'yaxis'): { values: number[]; text?: string[] } | undefined {
  const a = (layout[name] ?? {}) as { tickvals?: unknown; ticktext?: unknown };
  if (!Array.isArray(a.tickvals) || !a.tickvals.every((v) => typeof v === 'number')) return undefined;
  const text = Array.isArray(a.ticktext) && a.ticktext.length === a.tickvals.length ? a.ticktext.map(String) : undefined;
  return { values: a.tickvals as number[], text };
}

/** A static SVG of a scatter/bar figure (see the module comment). */
export function figureSvg(fig: PlotlyFigure): string {
  const L = fig.layout;
  const font = { family: FONT_FAMILY, size: FONT_SIZE, color: TEXT_COLOR, ...((L.font ?? {}) as Record<string, unknown>) } as { family: string; size: number; color: string };
  const titleSize = ((L.title as { font?: { size?: unknown } } | undefined)?.font?.size as number | undefined) ?? TITLE_FONT_SIZE;
  const W = typeof L.width === 'number' ? L.width : DEFAULT_FIGURE_SIZE.width;
  const baseH = typeof L.height === 'number' ? L.height : DEFAULT_FIGURE_SIZE.height;
  const m = { l: 60, r: 20, t: 50, b: 50, ...((L.margin ?? {}) as Record<string, number>) };
  const line = Math.round(font.size * 1.4);
  const xa = axis(L, 'xaxis');
  const ya = axis(L, 'yaxis');
  // Categorical x (strings) are placed at their index among all categories.
  const categories = [...new Set(fig.data.flatMap((t) => t.x.filter((v): v is string => typeof v === 'string')))];
  const xValue = (v: number | string): number => (typeof v === 'string' ? categories.indexOf(v) : xa.log ? Math.log10(v) : v);
  const yValue = (v: number): number => (ya.log ? Math.log10(v) : v);
  const usable = (v: number, log: boolean): boolean => Number.isFinite(v) && (!log || v > 0);
  const errOf = (t: PlotlyTrace, i: number): number => (t.error_y?.visible ? (t.error_y.array[i] ?? 0) : 0);
  const xs: number[] = [];
  const ys: number[] = [];
  for (const t of fig.data) {
    t.x.forEach((v, i) => {
      const yv = t.y[i];
      if ((typeof v === 'string' || usable(v, xa.log)) && usable(yv, ya.log)) {
        xs.push(xValue(v));
        const err = errOf(t, i);
        ys.push(yValue(ya.log && yv - err <= 0 ? yv : yv - err), yValue(yv + err));
      }
    });
    if (t.type === 'bar' && !ya.log) ys.push(0); // bars grow from zero
  }
  let [xMin, xMax] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  let [yMin, yMax] = ys.length ? [Math.min(...ys), Math.max(...ys)] : [0, 1];
  if (categories.length > 0 || fig.data.some((t) => t.type === 'bar')) [xMin, xMax] = [xMin - 0.5, xMax + 0.5];
  if (xMax === xMin) [xMin, xMax] = [xMin - 1, xMax + 1];
  else if (categories.length === 0) [xMin, xMax] = [xMin - (xMax - xMin) * 0.04, xMax + (xMax - xMin) * 0.04];
  if (yMax === yMin) [yMin, yMax] = [yMin - 1, yMax + 1];
  const pad = (yMax - yMin) * 0.05;
  [yMin, yMax] = [yMin - pad, yMax + pad];

  // Ticks: the layout's own when it names them (as Plotly), else nice values or decades.
  const ticksOf = (name: 'xaxis' | 'yaxis', log: boolean, lo: number, hi: number, count: number): { at: number; label: string }[] => {
    const given = givenTicks(L, name);
    if (given) {
      return given.values
        .map((v, i) => ({ at: log ? Math.log10(v) : v, label: given.text?.[i] ?? fmt(v) }))
        .filter((t) => Number.isFinite(t.at) && t.at >= lo - 1e-9 && t.at <= hi + 1e-9);
    }
    return (log ? logTicks(lo, hi) : niceTicks(lo, hi, count)).map((v) => ({ at: v, label: fmt(log ? +(10 ** v).toPrecision(12) : v) }));
  };
  const yTicks = ticksOf('yaxis', ya.log, yMin, yMax, 5);
  const xTicks = categories.length ? categories.map((c, i) => ({ at: i, label: c })) : ticksOf('xaxis', xa.log, xMin, xMax, 6);

  // Geometry: the title's lines on top; the y tick labels and the rotated y title on the left;
  // below the plot the x tick labels, the x title, then the legend's rows.
  const titleLines = balancedLines(titleText(L.title), titleSize, W - 20);
  const top = Math.max(m.t, 12 + titleLines.length * Math.round(titleSize * 1.3));
  const left = Math.max(m.l, Math.ceil(Math.max(0, ...yTicks.map((t) => textWidth(t.label, font.size)))) + 12 + line);
  // Plotly shows no legend for a single trace unless asked; neither does the SVG.
  const showLegend = typeof L.showlegend === 'boolean' ? L.showlegend : fig.data.length > 1;
  const legend = showLegend ? legendLayout(fig, font.size, 12, W - 12) : { rows: 0, items: [] };
  // Category labels wrap within their slot, so that long names (Chinese ones too) never collide.
  const slotWidth = (W - m.r - left) / Math.max(1, xTicks.length) - 8;
  const xLabels = xTicks.map((t) => (categories.length ? wrapText(t.label, font.size, slotWidth) : [t.label]));
  const labelRows = Math.max(1, ...xLabels.map((l) => l.length));
  const tickBlock = labelRows * line;
  const below = tickBlock + line + 16 + legend.rows * line;
  const H = Math.max(baseH, top + below + 160); // at least 160 px of plot, whatever the legend takes
  const plot = { x0: left, x1: W - m.r, y0: top, y1: H - below };
  const px = (v: number): number => plot.x0 + ((v - xMin) / (xMax - xMin)) * (plot.x1 - plot.x0);
  const py = (v: number): number => plot.y1 - ((v - yMin) / (yMax - yMin)) * (plot.y1 - plot.y0);
  const r = (v: number): string => v.toFixed(1);
  const parts: string[] = [];
  parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="${typeof L.paper_bgcolor === 'string' ? L.paper_bgcolor : '#ffffff'}"/>`);
  for (const t of yTicks) {
    parts.push(`<line x1="${plot.x0}" x2="${plot.x1}" y1="${r(py(t.at))}" y2="${r(py(t.at))}" stroke="${GRID_COLOR}"/>`);
    parts.push(`<text x="${plot.x0 - 6}" y="${r(py(t.at) + font.size * 0.35)}" text-anchor="end">${xmlEscape(t.label)}</text>`);
  }
  xTicks.forEach((t, k) => {
    xLabels[k].forEach((text, j) => parts.push(`<text x="${r(px(t.at))}" y="${plot.y1 + line * (j + 1)}" text-anchor="middle">${xmlEscape(text)}</text>`));
  });
  parts.push(`<rect x="${plot.x0}" y="${plot.y0}" width="${plot.x1 - plot.x0}" height="${plot.y1 - plot.y0}" fill="none" stroke="${AXIS_COLOR}"/>`);
  const bars = fig.data.filter((t) => t.type === 'bar');
  const slot = bars.length ? ((px(1) - px(0)) * 0.8) / bars.length : 0;
  fig.data.forEach((t, i) => {
    const color = t.line?.color ?? t.marker?.color ?? PALETTE[i % PALETTE.length];
    const pts = t.x
      .map((v, j) => ({ v, yv: t.y[j], err: errOf(t, j) }))
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
    const at = legend.items[i];
    if (!at) return;
    const ly = plot.y1 + tickBlock + line + 16 + at.row * line + font.size * 0.35;
    parts.push(`<rect x="${r(at.x)}" y="${r(ly - font.size * 0.35 - 2)}" width="${LEGEND_SWATCH}" height="4" fill="${color}"/>`);
    parts.push(`<text x="${r(at.x + LEGEND_SWATCH + 6)}" y="${r(ly)}">${xmlEscape(at.name)}</text>`);
  });
  titleLines.forEach((text, k) => {
    const y = 6 + Math.round(titleSize * 1.3) * (k + 1) - Math.round(titleSize * 0.3);
    parts.push(`<text x="${W / 2}" y="${y}" text-anchor="middle" font-size="${titleSize}">${xmlEscape(text)}</text>`);
  });
  parts.push(`<text x="${r((plot.x0 + plot.x1) / 2)}" y="${plot.y1 + tickBlock + line}" text-anchor="middle">${xmlEscape(xa.title)}</text>`);
  parts.push(`<text transform="translate(${Math.round(line * 0.75)} ${r((plot.y0 + plot.y1) / 2)}) rotate(-90)" text-anchor="middle">${xmlEscape(ya.title)}</text>`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="tfjs-accumulate-static-figure" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" style="max-width:100%;height:auto" ` +
    `role="img" aria-label="${xmlEscape(titleText(L.title))}" font-family="${xmlEscape(font.family)}" font-size="${font.size}" fill="${xmlEscape(font.color)}">` +
    parts.join('') +
    '</svg>'
  );
}

/** The width of a legend's colour key in px. */
const LEGEND_SWATCH = 14;

/**
 * Where each legend entry goes: entries flow left to right from `x0` and start a new row
 * when the next would pass `x1`, each as wide as its name, so no two overlap.
 */
export function legendLayout(fig: PlotlyFigure, size: number, x0: number, x1: number): { rows: number; items: { name: string; x: number; row: number }[] } {
  let x = x0;
  let row = 0;
  const items = fig.data.map((t, i) => {
    const name = t.name ?? `trace ${i}`;
    const width = LEGEND_SWATCH + 6 + textWidth(name, size) + 18;
    if (x > x0 && x + width - 18 > x1) {
      row++;
      x = x0;
    }
    const item = { name, x, row };
    x += width;
    return item;
  });
  return { rows: fig.data.length ? row + 1 : 0, items };
}

/**
 * The static SVG as an image (`<img>` of a `data:` URI), the form the display bundle's text/html
 * carries: the same drawing, at the same size, and what an HTML sanitizer keeps. Classic Notebook
 * and JupyterLab sanitize the HTML of an untrusted notebook (one executed elsewhere); they drop
 * inline SVG elements and leave their texts behind as a line of stray tick labels, but keep an
 * image whose source is data.
 */
export function figureImage(fig: PlotlyFigure): string {
  const svg = figureSvg(fig);
  // The size figureSvg drew at, from its root element.
  const [, width, height] = /^<svg [^>]*?width="([\d.]+)" height="([\d.]+)"/.exec(svg)!;
  return (
    `<img class="tfjs-accumulate-static-figure" src="data:image/svg+xml;base64,${base64Utf8(svg)}" width="${width}" height="${height}" ` +
    `alt="${xmlEscape(titleText(fig.layout.title))}" style="max-width:100%;height:auto">`
  );
}

/** Base64 of a string's UTF-8 bytes, with what Node, Deno and browsers all have (`btoa`). */
function base64Utf8(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  // In slices: one call with every byte as an argument overflows the stack on a large chart.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
