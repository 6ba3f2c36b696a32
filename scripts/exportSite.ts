/**
 * Exports the executed notebooks (from `npm run notebooks`) to a static HTML site: an index with
 * the table of contents, one page per notebook, a search page, and the executed notebooks for
 * download.
 *
 *   npm run site [-- [--in=DIR] [--out=DIR] [--source-url=URL]]
 *
 * The pieces live in scripts/site/: html.ts (escaping by construction), render.ts (cells and
 * outputs), plotlyBundle.ts (charts and the trace types the shipped Plotly bundle holds),
 * layout.ts (the page frame), search.ts (the search index) and the browser files site.css,
 * site.js and search.js. Every asset is local, so the site works from file:// and from any
 * static server.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Notebook } from './notebooks/nbformat';
import { fileHref, html, trusted, type SafeHtml } from './site/html';
import { failureBanner, layout, onThisPage, pager, runnerNote, SITE_TITLE } from './site/layout';
import type { ChapterPage } from './site/model';
import { PLOTLY_BUNDLE } from './site/plotlyBundle';
import { createMarkdown, renderNotebook } from './site/render';
import { buildSearchIndex, searchIndexScript, searchMain } from './site/search';
import { liveBlocks } from './site/live/export';

/** The exporter's options; each can be set from the command line. */
export interface ExportSiteArgs {
  /** Folder of executed notebooks. Default `build/notebooks`. */
  inDir?: string;
  /** Folder that receives the site; it is replaced on each export. Default `build/site`. */
  outDir?: string;
  /**
   * Where the notebooks' sources are browsed, e.g. `https://github.com/o/r/blob/main/notebooks/`;
   * each page links to `<sourceUrl><name>.ipynb`. Default: none, and pages name the source
   * path (`notebooks/<name>.ipynb`) as text.
   */
  sourceUrl?: string;
}

const ROOT = path.resolve(__dirname, '..');
const DEFAULTS = {
  inDir: path.join(ROOT, 'build', 'notebooks'),
  outDir: path.join(ROOT, 'build', 'site'),
};
const SITE_DESCRIPTION = 'Gradient accumulation and small-batch normalization for TensorFlow.js, taught by executable TypeScript notebooks.';
/** Marks a folder as one this exporter made, so that it may be emptied on the next export. */
const MARKER = '.tfjs-accumulate-site';

/** What the exporter wrote. */
export interface SiteReport {
  outDir: string;
  index: string;
  search: string;
  pages: { file: string; title: string; plotlyOutputs: number }[];
}

/** Replaces `outDir` with a fresh site, refusing to empty a folder this exporter did not make. */
function prepareOutDir(outDir: string): void {
  if (fs.existsSync(outDir)) {
    const entries = fs.readdirSync(outDir);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new Error(`exportSite: --out must be a new folder or one made by a previous export; ${outDir} holds other files.`);
    }
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  fs.mkdirSync(path.join(outDir, 'assets'), { recursive: true });
  fs.mkdirSync(path.join(outDir, 'notebooks'));
  fs.writeFileSync(path.join(outDir, MARKER), 'Made by scripts/exportSite.ts; emptied on each export.\n');
}

function copyAssets(outDir: string): void {
  const assets = path.join(outDir, 'assets');
  fs.copyFileSync(require.resolve(PLOTLY_BUNDLE), path.join(assets, 'plotly.min.js'));
  const katexDist = path.dirname(require.resolve('katex'));
  fs.mkdirSync(path.join(assets, 'katex'));
  fs.copyFileSync(path.join(katexDist, 'katex.min.css'), path.join(assets, 'katex', 'katex.min.css'));
  fs.cpSync(path.join(katexDist, 'fonts'), path.join(assets, 'katex', 'fonts'), { recursive: true });
  for (const f of ['site.css', 'site.js', 'search.js']) fs.copyFileSync(path.join(__dirname, 'site', f), path.join(assets, f));
  fs.writeFileSync(path.join(outDir, 'robots.txt'), 'User-agent: *\nAllow: /\n');
}

function chapterFooter(pages: ChapterPage[], i: number, sourceUrl: string | undefined): SafeHtml {
  const p = pages[i];
  const source = sourceUrl ? html`<a href="${sourceUrl + encodeURIComponent(p.notebook)}">notebooks/${p.notebook}</a>` : html`<code>notebooks/${p.notebook}</code>`;
  return html`${pager(pages, i)}<p class="page-links"><a href="${fileHref(`notebooks/${p.notebook}`)}" download>Download the executed notebook (.ipynb)</a> · Source: ${source}</p><p class="runner-note">${runnerNote(p)}</p>`;
}

/** Exports the site. Throws with every problem found (unreadable notebooks, broken math, charts the bundle cannot draw). */
export function exportSite(args: ExportSiteArgs = {}): SiteReport {
  const inDir = path.resolve(args.inDir ?? DEFAULTS.inDir);
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  const files = fs.existsSync(inDir) ? fs.readdirSync(inDir).filter((f) => f.endsWith('.ipynb')).sort() : [];
  if (files.length === 0) {
    throw new Error(`exportSite: no executed notebooks in ${path.relative(process.cwd(), inDir) || inDir}; run \`npm run notebooks\` first.`);
  }
  const md = createMarkdown();
  const errors: string[] = [];
  const pages: ChapterPage[] = [];
  for (const f of files) {
    const file = path.join(inDir, f);
    try {
      const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
      if (nb.nbformat !== 4 || !Array.isArray(nb.cells)) throw new Error(`nbformat must be 4; got ${String(nb.nbformat)}`);
      pages.push(renderNotebook(file, nb, md, errors));
    } catch (e) {
      errors.push(`${f}: ${(e as Error).message}`);
    }
  }
  if (errors.length > 0) throw new Error(`exportSite: ${errors.length} problem(s):\n  ${errors.join('\n  ')}`);

  prepareOutDir(outDir);
  copyAssets(outDir);
  // The "run it in your browser" blocks: built by their own module, HTML we write ourselves.
  const live = liveBlocks(outDir, pages.map((p) => p.notebook));
  pages.forEach((p, i) => {
    fs.copyFileSync(path.join(inDir, p.notebook), path.join(outDir, 'notebooks', p.notebook));
    const page = layout({
      lang: p.lang,
      title: `${p.title} · ${SITE_TITLE}`,
      description: p.description || `${p.title}: a chapter of the ${SITE_TITLE} tutorial.`,
      aside: onThisPage(p),
      main: html`${failureBanner(p)}\n${p.body}${trusted(live[i])}`,
      footer: chapterFooter(pages, i, args.sourceUrl),
      math: p.hasMath,
    });
    fs.writeFileSync(path.join(outDir, p.file), page);
  });
  const toc = pages.map((p) => {
    const badge = p.runner && p.runner.status !== 'ok' ? html` <span class="badge">failed</span>` : '';
    const sections = p.headings.filter((h) => h.level === 2);
    return html`<li><a href="${fileHref(p.file)}">${p.title}</a>${badge}${p.subtitle.value ? html`<div class="subtitle">${p.subtitle}</div>` : ''}${
      sections.length ? html`<ul class="sections">${sections.map((s) => html`<li><a href="${fileHref(p.file, s.id)}">${s.text}</a></li>`)}</ul>` : ''
    }</li>\n`;
  });
  const total = pages.reduce((s, p) => s + (p.runner?.totalMs ?? 0), 0);
  const index = layout({
    lang: 'en',
    title: `${SITE_TITLE}: the notebooks`,
    description: SITE_DESCRIPTION,
    main: html`<h1>${SITE_TITLE}</h1>
<p>${SITE_DESCRIPTION} Every page below was produced by running its notebook; the charts are interactive.</p>
<h2 id="contents">Contents</h2>
<ul class="toc">
${toc}</ul>`,
    footer: html`<p class="runner-note">${pages.length} notebooks, executed in ${(total / 1000).toFixed(1)} s.</p>`,
    math: false,
  });
  fs.writeFileSync(path.join(outDir, 'index.html'), index);
  fs.writeFileSync(path.join(outDir, 'assets', 'search-index.js'), searchIndexScript(buildSearchIndex(pages)));
  const search = layout({
    lang: 'en',
    title: `Search · ${SITE_TITLE}`,
    description: `Search the ${SITE_TITLE} tutorial's prose, code and outputs.`,
    main: searchMain(),
    footer: html`<nav class="pager" aria-label="Chapters"><a href="index.html">Contents</a></nav>`,
    math: false,
    headerSearch: false,
    scripts: ['assets/search-index.js', 'assets/search.js'],
  });
  fs.writeFileSync(path.join(outDir, 'search.html'), search);
  return {
    outDir,
    index: path.join(outDir, 'index.html'),
    search: path.join(outDir, 'search.html'),
    pages: pages.map((p) => ({ file: path.join(outDir, p.file), title: p.title, plotlyOutputs: p.plotlyOutputs })),
  };
}

function parseArgs(argv: string[]): ExportSiteArgs {
  const args: ExportSiteArgs = {};
  for (const arg of argv) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--in' && value) args.inDir = value;
    else if (flag === '--out' && value) args.outDir = value;
    else if (flag === '--source-url' && value) args.sourceUrl = value;
    else throw new Error(`exportSite: unknown argument ${arg}; accepted: --in=DIR (executed notebooks), --out=DIR (the site), --source-url=URL (where notebooks/ is browsed).`);
  }
  return args;
}

function main(): void {
  try {
    const report = exportSite(parseArgs(process.argv.slice(2)));
    const figures = report.pages.reduce((s, p) => s + p.plotlyOutputs, 0);
    console.log(`Site: ${report.pages.length} page(s), an index and a search page, ${figures} Plotly chart(s).`);
    console.log(`Open ${path.relative(process.cwd(), report.index) || report.index}  (file://${report.index})`);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}

if (require.main === module) main();
