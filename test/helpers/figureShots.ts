import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { exportSite } from '../../scripts/site/exportSite';
import { HANG_MS } from './ceilings';
import { newPage } from './chromium';

// The same figure in every front end (docs/notebooks.md, "Charts in each front end"): a chart
// drawn by plotly.js in the site, classic Notebook or JupyterLab is measured where the reader
// sees it, then drawn again at one common width and screenshotted, so that two front ends can be
// compared pixel by pixel although their columns differ.

/** The width every front end's chart is redrawn at for the pixel comparison (px). */
export const COMMON_WIDTH = 800;

/** One chart as a front end drew it. */
export interface FigureShot {
  /** Where it was taken, for messages. */
  label: string;
  /** The chart's size at the front end's own width (px). */
  width: number;
  height: number;
  /** The content width of the output column the chart sits in (px). */
  column: number;
  /** The distinct `font-family` of the chart's texts, as computed. */
  fonts: string[];
  /** The colour (#rrggbb) at the centre of each trace's first marker, in trace order. */
  traceColors: string[];
  /** The colour a few pixels inside the chart's corner. */
  background: string;
  /** A PNG of the chart redrawn at COMMON_WIDTH. */
  png: Buffer;
}

/**
 * Measures the plotly.js chart `chart` (the node plotly.js drew into, drawn with `responsive`),
 * inside the column `column` (a selector of its ancestor), then redraws it at COMMON_WIDTH and
 * screenshots it. The page is left with the chart at that width.
 */
export async function shootFigure(page: Page, args: { label: string; chart: string; column: string; timeoutMs?: number }): Promise<FigureShot> {
  const gd = page.locator(args.chart).first();
  try {
    await gd.scrollIntoViewIfNeeded({ timeout: args.timeoutMs ?? HANG_MS });
    await page.waitForFunction((sel) => (document.querySelector(sel)?.querySelectorAll('.main-svg .trace').length ?? 0) > 0, args.chart, { timeout: args.timeoutMs ?? HANG_MS, polling: 250 });
  } catch (e) {
    throw new Error(`${args.label}: no chart drawn by plotly.js at ${args.chart} (${(e as Error).message.split('\n')[0]})`);
  }
  const natural = await gd.evaluate((node, column) => {
    const box = node.querySelector('.main-svg')!.getBoundingClientRect();
    const col = node.closest(column) as HTMLElement;
    const style = getComputedStyle(col);
    const inner = col.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - parseFloat(style.borderLeftWidth) - parseFloat(style.borderRightWidth);
    const fonts = [...new Set(Array.from(node.querySelectorAll('svg text')).map((t) => getComputedStyle(t).fontFamily))];
    return { width: box.width, height: box.height, column: inner, fonts };
  }, args.column);
  // plotly.js refits a responsive chart to its node on the window's resize event. The node may
  // be a flex item that grows to its row (JupyterLab's output), hence flex none.
  await gd.evaluate((node, width) => {
    Object.assign((node as HTMLElement).style, { width: `${width}px`, minWidth: `${width}px`, maxWidth: `${width}px`, flex: 'none' });
    window.dispatchEvent(new Event('resize'));
  }, COMMON_WIDTH);
  await page.waitForFunction(({ sel, width }) => Math.abs((document.querySelector(sel)?.querySelector('.main-svg')?.getBoundingClientRect().width ?? 0) - width) < 0.5, { sel: args.chart, width: COMMON_WIDTH });
  const { png, points } = await settledShot(page, gd);
  const colors = await pixelColors(page, png, [{ x: 4, y: 4 }, ...points]);
  return { label: args.label, ...natural, background: colors[0], traceColors: colors.slice(1), png };
}

/** The most screenshots taken while waiting for a chart to stop changing. */
const MAX_SHOTS = 8;

/**
 * The chart's box on the page and its first marker per trace, relative to the box, measured now,
 * with the chart scrolled to the middle of the window first: a screenshot is cut at the window's
 * edge where the page scrolls inside an element (classic Notebook's #site), and a chart left
 * partly below it came out 800 x 395 instead of 800 x 420.
 */
const measureMarks = (gd: Locator) =>
  gd.evaluate((node) => {
    node.scrollIntoView({ block: 'center', inline: 'nearest' });
    const box = node.querySelector('.main-svg')!.getBoundingClientRect();
    const points = Array.from(node.querySelectorAll('.scatterlayer .trace')).map((trace) => {
      const r = trace.querySelector('.point')!.getBoundingClientRect();
      return { x: r.x + r.width / 2 - box.x, y: r.y + r.height / 2 - box.y };
    });
    return { box: { x: box.x + window.scrollX, y: box.y + window.scrollY, width: box.width, height: box.height }, points };
  });

/**
 * A screenshot of the chart `gd` once two taken in a row are identical, each of the box measured
 * just before it: on a loaded machine plotly.js may still be redrawing after the resize, or the
 * page may scroll (classic Notebook scrolls its own container after a load), and a half-drawn or
 * shifted chart would fail the comparison for a reason that is not the figure's.
 */
async function settledShot(page: Page, gd: Locator): Promise<{ png: Buffer; points: { x: number; y: number }[] }> {
  let last: Buffer | undefined;
  for (let i = 0; i < MAX_SHOTS; i++) {
    if (i > 0) await page.waitForTimeout(150);
    const marks = await measureMarks(gd);
    const png = await page.screenshot({ clip: marks.box, fullPage: true, animations: 'disabled', caret: 'hide' });
    if (last?.equals(png)) return { png, points: marks.points };
    last = png;
  }
  throw new Error(`the chart was still changing after ${MAX_SHOTS} screenshots, 150 ms apart`);
}

// Installed in the page as a string: tsx names the functions of a callback given to evaluate
// with a helper (`__name`) that the page lacks. It decodes a base64 PNG with the browser's own
// decoder into its RGBA pixels.
const DECODER = `window.__decodePng = window.__decodePng || (async (b64) => {
  const bitmap = await createImageBitmap(await (await fetch('data:image/png;base64,' + b64)).blob());
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(bitmap, 0, 0);
  return ctx.getImageData(0, 0, bitmap.width, bitmap.height);
});`;

/** The page's decoder, once DECODER ran. */
type Decoder = { __decodePng(b64: string): Promise<{ width: number; height: number; data: Uint8ClampedArray }> };

/** The colours (#rrggbb) of a PNG at `points` (px from its top left corner). */
export async function pixelColors(page: Page, png: Buffer, points: { x: number; y: number }[]): Promise<string[]> {
  await page.evaluate(DECODER);
  return page.evaluate(
    async ({ b64, points }) => {
      const image = await (window as unknown as Decoder).__decodePng(b64);
      return points.map((p) => {
        const i = (Math.round(p.y - 0.5) * image.width + Math.round(p.x - 0.5)) * 4;
        return '#' + [0, 1, 2].map((k) => image.data[i + k].toString(16).padStart(2, '0')).join('');
      });
    },
    { b64: png.toString('base64'), points },
  );
}

/** How two PNGs differ: their sizes, and the share of pixels with a channel apart by more than `tolerance` (1 when the sizes differ). */
export async function pixelDifference(page: Page, a: Buffer, b: Buffer, tolerance = 48): Promise<{ sizes: [string, string]; differing: number }> {
  await page.evaluate(DECODER);
  return page.evaluate(
    async ({ a, b, tolerance }) => {
      const [x, y] = await Promise.all([a, b].map((s) => (window as unknown as Decoder).__decodePng(s)));
      const sizes: [string, string] = [`${x.width}x${x.height}`, `${y.width}x${y.height}`];
      if (sizes[0] !== sizes[1]) return { sizes, differing: 1 };
      let n = 0;
      for (let i = 0; i < x.data.length; i += 4) {
        if (Math.max(Math.abs(x.data[i] - y.data[i]), Math.abs(x.data[i + 1] - y.data[i + 1]), Math.abs(x.data[i + 2] - y.data[i + 2])) > tolerance) n++;
      }
      return { sizes, differing: n / (x.width * x.height) };
    },
    { a: a.toString('base64'), b: b.toString('base64'), tolerance },
  );
}

/** Where a chart is drawn on the site's pages (scripts/site/plotlyBundle.ts, site.js). */
export const SITE_CHART = { chart: '.plotly-figure .plotly-target', column: '.plotly-figure' };

/**
 * The site's drawing of the first figure of an executed notebook: the site's own exporter makes
 * the site of that one notebook in `workDir`, and a page of `viewport` opens it. The page stays
 * open for the caller to compare on and close.
 */
export async function siteFigure(browser: Browser, notebook: string, workDir: string, viewport: { width: number; height: number }): Promise<{ shot: FigureShot; page: Page }> {
  const inDir = path.join(workDir, 'site-in');
  fs.mkdirSync(inDir, { recursive: true });
  fs.copyFileSync(notebook, path.join(inDir, path.basename(notebook)));
  const report = exportSite({ inDir, outDir: path.join(workDir, 'site') });
  const page = await newPage(browser, { viewport });
  await page.goto(`file://${report.pages[0].file}`);
  return { shot: await shootFigure(page, { label: 'site', ...SITE_CHART }), page };
}

/** The most pixels two drawings of one figure at COMMON_WIDTH may differ in (anti-aliasing). */
export const MAX_DIFFERING = 0.005;

/**
 * What differs between two drawings of the same figure, as sentences; empty when they are the
 * same figure: the same height, each as wide as its own column, the same fonts, background and
 * trace colours, and at COMMON_WIDTH at most MAX_DIFFERING of their pixels apart (`differing`,
 * from pixelDifference).
 */
export function compareShots(reference: FigureShot, candidate: FigureShot, differing: number): string[] {
  const size = (s: FigureShot): string => `${s.png.readUInt32BE(16)}x${s.png.readUInt32BE(20)}`;
  const problems: string[] = [];
  const [r, c] = [reference, candidate];
  if (Math.abs(r.height - c.height) > 1) problems.push(`height: ${c.label} ${c.height} px, ${r.label} ${r.height} px`);
  for (const s of [r, c]) {
    if (s.width > s.column + 0.5 || s.width < s.column - 2) problems.push(`width: ${s.label} draws ${s.width} px in a column of ${s.column} px`);
  }
  if (JSON.stringify(r.fonts) !== JSON.stringify(c.fonts)) problems.push(`fonts: ${c.label} ${JSON.stringify(c.fonts)}, ${r.label} ${JSON.stringify(r.fonts)}`);
  if (r.background !== c.background) problems.push(`background: ${c.label} ${c.background}, ${r.label} ${r.background}`);
  if (JSON.stringify(r.traceColors) !== JSON.stringify(c.traceColors)) problems.push(`trace colours: ${c.label} ${c.traceColors.join(' ')}, ${r.label} ${r.traceColors.join(' ')}`);
  if (size(r) !== size(c)) problems.push(`screenshots: ${c.label} ${size(c)} px, ${r.label} ${size(r)} px`);
  if (differing > MAX_DIFFERING) problems.push(`pixels: ${(differing * 100).toFixed(2)}% differ at ${COMMON_WIDTH} px wide (at most ${MAX_DIFFERING * 100}%)`);
  return problems;
}
