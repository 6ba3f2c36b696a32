/**
 * Exports the executed notebooks (from `npm run notebooks`) to a static HTML site: an index with
 * the table of contents and one page per notebook with previous/next links.
 *
 *   npm run site [-- [--in=DIR] [--out=DIR]]
 *
 * Markdown goes through markdown-it with raw HTML disabled, so a `<script>` in a markdown cell is
 * shown as text; LaTeX is rendered to HTML at build time by KaTeX; TypeScript is highlighted by
 * highlight.js. Outputs: text is escaped, HTML outputs are kept, images are inlined, and Plotly
 * figures are drawn in the browser by the plotly.js that is copied into the site once. Every
 * asset is local, so the site works from file:// and from any static server.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import hljs from 'highlight.js';
import katexPlugin from '@vscode/markdown-it-katex';
import MarkdownIt from 'markdown-it';
import { PLOTLY_MIME } from 'tfjs-accumulate/tutorial';
import { cellSource, REPORT_KEY, type Cell, type MimeBundle, type Notebook, type NotebookReport, type Output } from './notebooks/nbformat';

/** The exporter's options; both can be set from the command line. */
export interface ExportSiteArgs {
  /** Folder of executed notebooks. Default `build/notebooks`. */
  inDir?: string;
  /** Folder that receives the site; it is replaced on each export. Default `build/site`. */
  outDir?: string;
}

const ROOT = path.resolve(__dirname, '..');
const DEFAULTS = {
  inDir: path.join(ROOT, 'build', 'notebooks'),
  outDir: path.join(ROOT, 'build', 'site'),
  siteTitle: 'tfjs-accumulate',
};
/** Marks a folder as one this exporter made, so that it may be emptied on the next export. */
const MARKER = '.tfjs-accumulate-site';
/** Output representations in order of preference, as a notebook front end would choose. */
const MIME_ORDER = [PLOTLY_MIME, 'image/png', 'image/jpeg', 'image/gif', 'image/svg+xml', 'text/html', 'text/markdown', 'text/latex', 'application/json', 'text/plain'];

/** What the exporter wrote. */
export interface SiteReport {
  outDir: string;
  index: string;
  pages: { file: string; title: string; plotlyOutputs: number }[];
}

interface Page {
  source: string;
  file: string;
  title: string;
  subtitle: string;
  sections: { id: string; text: string }[];
  body: string;
  plotlyOutputs: number;
  runner?: Omit<NotebookReport, 'file' | 'outFile'> & { executedAt?: string };
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON for a `<script type="application/json">`: `<` escaped so no value can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
const text = (v: unknown): string => (Array.isArray(v) ? v.join('') : String(v ?? ''));

function slugify(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '') || 'section'
  );
}

/** markdown-it set up for notebook cells: no raw HTML, KaTeX math, highlighted fences, heading ids. */
function createMarkdown(): MarkdownIt {
  const md: MarkdownIt = new MarkdownIt({
    html: false, // a <script> (any tag) in markdown is shown as text, never run
    linkify: true,
    highlight: (code, lang) => (lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang }).value : ''),
  });
  md.use(katexPlugin, { throwOnError: false });
  // Ids on headings, unique per page, so that the table of contents can link to sections.
  md.core.ruler.push('heading_ids', (state) => {
    const used: Set<string> = state.env.usedIds ?? (state.env.usedIds = new Set<string>());
    state.tokens.forEach((token, i) => {
      if (token.type !== 'heading_open') return;
      const title = state.tokens[i + 1].children?.map((c) => c.content).join('') ?? '';
      let id = slugify(title);
      for (let n = 2; used.has(id); n++) id = `${slugify(title)}-${n}`;
      used.add(id);
      token.attrSet('id', id);
      (state.env.headings ??= []).push({ level: Number(token.tag.slice(1)), id, text: title });
    });
  });
  // A link to another notebook (`02-model.ipynb#the-setup`) points to its page on the site.
  md.core.ruler.push('notebook_links', (state) => {
    for (const block of state.tokens) {
      for (const token of block.children ?? []) {
        const href = token.type === 'link_open' ? token.attrGet('href') : null;
        if (href && /^[^:/?#]+\.ipynb(#.*)?$/.test(href)) token.attrSet('href', href.replace(/\.ipynb(?=#|$)/, '.html'));
      }
    }
  });
  return md;
}

/** Renders one output; returns the HTML and whether it is a Plotly figure. */
function renderOutput(out: Output, md: MarkdownIt, env: object): { html: string; plotly: boolean } {
  if (out.output_type === 'stream') {
    return { html: `<pre class="output stream ${out.name}">${escapeHtml(stripAnsi(text(out.text)))}</pre>`, plotly: false };
  }
  if (out.output_type === 'error') {
    const body = out.traceback.length ? out.traceback.join('\n') : `${out.ename}: ${out.evalue}`;
    return { html: `<pre class="output error">${escapeHtml(stripAnsi(body))}</pre>`, plotly: false };
  }
  const data: MimeBundle = out.data ?? {};
  const mime = MIME_ORDER.find((m) => m in data);
  const value = mime ? data[mime] : undefined;
  switch (mime) {
    case PLOTLY_MIME:
      return {
        html:
          '<div class="output plotly-figure">' +
          '<div class="plotly-target"></div>' +
          `<script type="application/json" class="plotly-data">${scriptJson(value)}</script>` +
          '</div>',
        plotly: true,
      };
    case 'image/png':
    case 'image/jpeg':
    case 'image/gif':
      return { html: `<div class="output image"><img alt="" src="data:${mime};base64,${escapeHtml(text(value).replace(/\s/g, ''))}"></div>`, plotly: false };
    case 'image/svg+xml': {
      // As an <img>, an SVG cannot run scripts.
      const b64 = Buffer.from(text(value)).toString('base64');
      return { html: `<div class="output image"><img alt="" src="data:image/svg+xml;base64,${b64}"></div>`, plotly: false };
    }
    case 'text/html':
      return { html: `<div class="output html">${text(value)}</div>`, plotly: false };
    case 'text/markdown':
      return { html: `<div class="output markdown">${md.render(text(value), env)}</div>`, plotly: false };
    case 'text/latex':
      return { html: `<div class="output latex">${md.render(text(value), env)}</div>`, plotly: false };
    case 'application/json':
      return { html: `<pre class="output json">${escapeHtml(JSON.stringify(value, null, 2))}</pre>`, plotly: false };
    case 'text/plain':
      return { html: `<pre class="output text">${escapeHtml(stripAnsi(text(value)))}</pre>`, plotly: false };
    default:
      return { html: `<p class="output unsupported">(an output of type ${escapeHtml(Object.keys(data).join(', ') || 'none')} that a static page cannot show)</p>`, plotly: false };
  }
}

/** `![](attachment:name.png)` in a markdown cell → the attachment inlined as a data URI. */
function inlineAttachments(source: string, cell: Cell): string {
  const attachments = cell.attachments as Record<string, Record<string, string>> | undefined;
  if (!attachments) return source;
  return source.replace(/attachment:([^\s)"]+)/g, (whole, name: string) => {
    const bundle = attachments[name];
    const mime = bundle && Object.keys(bundle).find((m) => m.startsWith('image/'));
    return mime ? `data:${mime};base64,${bundle[mime]}` : whole;
  });
}

/** Renders a notebook's cells and collects what the index needs. Problems go to `errors`. */
function renderNotebook(file: string, nb: Notebook, md: MarkdownIt, errors: string[]): Page {
  const name = path.basename(file, '.ipynb');
  const env: { headings?: { level: number; id: string; text: string }[] } = {};
  const parts: string[] = [];
  let plotlyOutputs = 0;
  nb.cells.forEach((cell, i) => {
    const source = cellSource(cell);
    if (cell.cell_type === 'markdown') {
      const html = md.render(inlineAttachments(source, cell), env);
      if (html.includes('katex-error')) {
        const bad = /title="([^"]*)"/.exec(html.slice(html.indexOf('katex-error')))?.[1] ?? '';
        errors.push(`${path.basename(file)}, cell ${i + 1}: KaTeX cannot render the math ${bad}`);
      }
      parts.push(`<section class="cell markdown-cell">${html}</section>`);
      return;
    }
    if (cell.cell_type !== 'code') return; // raw cells are not shown, as in Jupyter's HTML export
    const timing = (cell.metadata?.execution ?? {}) as Record<string, string>;
    const ms = Date.parse(timing['shell.execute_reply']) - Date.parse(timing['iopub.execute_input']);
    const meta = [cell.execution_count != null ? `[${cell.execution_count}]` : '[ ]', Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : ''].filter(Boolean).join(' ');
    const code = hljs.highlight(source, { language: 'typescript' }).value;
    const outputs = (cell.outputs ?? []).map((o) => renderOutput(o, md, env));
    plotlyOutputs += outputs.filter((o) => o.plotly).length;
    parts.push(
      `<section class="cell code-cell" id="cell-${i + 1}">` +
        `<div class="source"><span class="meta">${escapeHtml(meta)}</span><pre><code class="hljs language-typescript">${code}</code></pre></div>` +
        (outputs.length ? `<div class="outputs">${outputs.map((o) => o.html).join('')}</div>` : '') +
        '</section>',
    );
  });
  const headings = env.headings ?? [];
  const h1 = headings.find((h) => h.level === 1);
  // The subtitle is the first paragraph line under the title, as notebooks are written.
  const firstMarkdown = nb.cells.find((c) => c.cell_type === 'markdown');
  const subtitle = firstMarkdown
    ? (cellSource(firstMarkdown)
        .split('\n')
        .map((l) => l.trim())
        .find((l) => l !== '' && !l.startsWith('#')) ?? '')
    : '';
  return {
    source: file,
    file: `${name}.html`,
    title: h1?.text ?? name,
    subtitle: md.renderInline(subtitle, {}),
    sections: headings.filter((h) => h.level === 2),
    body: parts.join('\n'),
    plotlyOutputs,
    runner: (nb.metadata[REPORT_KEY] as { runner?: Page['runner'] } | undefined)?.runner,
  };
}

function layout(title: string, body: string, opts: { header: string; footer: string; plotly: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/katex/katex.min.css">
<link rel="stylesheet" href="assets/hljs.css">
<link rel="stylesheet" href="assets/site.css">
</head>
<body>
<header class="site-header">${opts.header}</header>
<main>
${body}
</main>
<footer class="site-footer">${opts.footer}</footer>
${opts.plotly ? '<script src="assets/plotly.js"></script>\n<script src="assets/site.js"></script>\n' : ''}</body>
</html>
`;
}

function pager(pages: Page[], i: number): string {
  const prev = pages[i - 1];
  const next = pages[i + 1];
  return (
    '<nav class="pager">' +
    (prev ? `<a rel="prev" href="${prev.file}">← ${escapeHtml(prev.title)}</a>` : '<span class="disabled">← previous</span>') +
    '<a href="index.html">Contents</a>' +
    (next ? `<a rel="next" href="${next.file}">${escapeHtml(next.title)} →</a>` : '<span class="disabled">next →</span>') +
    '</nav>'
  );
}

function runnerNote(p: Page): string {
  const r = p.runner;
  if (!r) return 'Not executed by npm run notebooks.';
  const when = r.executedAt ? ` on ${r.executedAt.slice(0, 10)}` : '';
  return `Executed by <code>npm run notebooks</code>${when}: ${r.executedCells} of ${r.codeCells} code cells in ${(r.totalMs / 1000).toFixed(1)} s.`;
}

function failureBanner(p: Page): string {
  const r = p.runner;
  if (!r || r.status === 'ok') return '';
  const where = r.error?.cell ? `<a href="#cell-${r.error.cell}">cell ${r.error.cell}</a>` : 'a cell';
  return `<p class="status-banner">This notebook did not run to the end: ${where} failed (${escapeHtml(r.error?.kind ?? 'error')}). Outputs below stop there.</p>`;
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
  fs.writeFileSync(path.join(outDir, MARKER), 'Made by scripts/exportSite.ts; emptied on each export.\n');
}

function copyAssets(outDir: string): void {
  const assets = path.join(outDir, 'assets');
  fs.copyFileSync(require.resolve('plotly.js-dist'), path.join(assets, 'plotly.js'));
  const katexDist = path.dirname(require.resolve('katex'));
  fs.mkdirSync(path.join(assets, 'katex'));
  fs.copyFileSync(path.join(katexDist, 'katex.min.css'), path.join(assets, 'katex', 'katex.min.css'));
  fs.cpSync(path.join(katexDist, 'fonts'), path.join(assets, 'katex', 'fonts'), { recursive: true });
  fs.copyFileSync(path.join(path.dirname(require.resolve('highlight.js')), '..', 'styles', 'github.min.css'), path.join(assets, 'hljs.css'));
  for (const f of ['site.css', 'site.js']) fs.copyFileSync(path.join(__dirname, 'site', f), path.join(assets, f));
}

/** Exports the site. Throws with every problem found (unreadable notebooks, broken math). */
export function exportSite(args: ExportSiteArgs = {}): SiteReport {
  const inDir = path.resolve(args.inDir ?? DEFAULTS.inDir);
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  const files = fs.existsSync(inDir) ? fs.readdirSync(inDir).filter((f) => f.endsWith('.ipynb')).sort() : [];
  if (files.length === 0) {
    throw new Error(`exportSite: no executed notebooks in ${path.relative(process.cwd(), inDir) || inDir}; run \`npm run notebooks\` first.`);
  }
  const md = createMarkdown();
  const errors: string[] = [];
  const pages: Page[] = [];
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
  const home = `<a class="home" href="index.html">${escapeHtml(DEFAULTS.siteTitle)}</a>`;
  pages.forEach((p, i) => {
    const body = `${failureBanner(p)}\n${p.body}\n${pager(pages, i)}`;
    const html = layout(`${p.title} · ${DEFAULTS.siteTitle}`, body, {
      header: `${home}${pager(pages, i)}`,
      footer: `<span>${runnerNote(p)}</span>${pager(pages, i)}`,
      plotly: p.plotlyOutputs > 0,
    });
    fs.writeFileSync(path.join(outDir, p.file), html);
  });
  const toc = pages
    .map((p) => {
      const badge = p.runner && p.runner.status !== 'ok' ? ' <span class="badge">failed</span>' : '';
      const sections = p.sections.length
        ? `<ul class="sections">${p.sections.map((s) => `<li><a href="${p.file}#${s.id}">${escapeHtml(s.text)}</a></li>`).join('')}</ul>`
        : '';
      return `<li><a href="${p.file}">${escapeHtml(p.title)}</a>${badge}${p.subtitle ? `<div class="subtitle">${p.subtitle}</div>` : ''}${sections}</li>`;
    })
    .join('\n');
  const total = pages.reduce((s, p) => s + (p.runner?.totalMs ?? 0), 0);
  const index = layout(
    `${DEFAULTS.siteTitle}: the notebooks`,
    `<h1>${escapeHtml(DEFAULTS.siteTitle)}</h1>\n` +
      '<p>Gradient accumulation and small-batch normalization for TensorFlow.js, taught by executable TypeScript notebooks. ' +
      'Every page below was produced by running its notebook; the charts are interactive.</p>\n' +
      `<h2 id="contents">Contents</h2>\n<ul class="toc">\n${toc}\n</ul>`,
    { header: home, footer: `<span>${pages.length} notebooks, executed in ${(total / 1000).toFixed(1)} s.</span>`, plotly: false },
  );
  fs.writeFileSync(path.join(outDir, 'index.html'), index);
  return {
    outDir,
    index: path.join(outDir, 'index.html'),
    pages: pages.map((p) => ({ file: path.join(outDir, p.file), title: p.title, plotlyOutputs: p.plotlyOutputs })),
  };
}

function parseArgs(argv: string[]): ExportSiteArgs {
  const args: ExportSiteArgs = {};
  for (const arg of argv) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--in' && value) args.inDir = value;
    else if (flag === '--out' && value) args.outDir = value;
    else throw new Error(`exportSite: unknown argument ${arg}; accepted: --in=DIR (executed notebooks), --out=DIR (the site).`);
  }
  return args;
}

function main(): void {
  try {
    const report = exportSite(parseArgs(process.argv.slice(2)));
    const figures = report.pages.reduce((s, p) => s + p.plotlyOutputs, 0);
    console.log(`Site: ${report.pages.length} page(s) and an index, ${figures} Plotly chart(s).`);
    console.log(`Open ${path.relative(process.cwd(), report.index) || report.index}  (file://${report.index})`);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}

if (require.main === module) main();
