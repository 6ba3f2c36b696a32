/**
 * Renders one executed notebook into a chapter page: markdown through markdown-it (raw HTML
 * off, KaTeX math, heading ids with permalink anchors), code highlighted by highlight.js, and
 * every output in the form a front end would choose. Everything that can overflow a phone
 * (tables, long outputs, code, display math) sits in a labelled, focusable scroll box.
 */
import * as path from 'node:path';
import hljs from 'highlight.js';
import katexPlugin from '@vscode/markdown-it-katex';
import MarkdownIt from 'markdown-it';
import { PLOTLY_MIME, type PlotlyFigure } from '../../src/tutorial/index';
import { cellSource, REPORT_KEY, type Cell, type MimeBundle, type Notebook, type Output } from '../notebooks/nbformat';
import { html, trusted, type SafeHtml } from './html';
import { sanitizeOutput } from './htmlOutput';
import { cellView, type PartView } from './cellTags';
import type { ChapterPage, Heading, PageLang, RunnerSummary, SearchEntry } from './model';
import { fill, ui, type UiStrings } from './strings';
import { chartHtml, figureTitle, missingTraceTypes } from './plotlyBundle';
import { repoLinksPlugin, type LinkContext } from './repoLinks';

/** Output representations in order of preference, as a notebook front end would choose. */
const MIME_ORDER = [PLOTLY_MIME, 'image/png', 'image/jpeg', 'image/gif', 'image/svg+xml', 'text/html', 'text/markdown', 'text/latex', 'application/json', 'text/plain'];
/** Searchable text kept per output; the index stays small enough to ship as a script. */
const SEARCH_TEXT_LIMIT = 4000;

/**
 * Printed text wraps at the box's width, as JupyterLab wraps it, so that a sentence printed by a
 * cell (chapter 6's conclusions) reads as a paragraph instead of scrolling sideways. Text drawn
 * as a grid (box-drawing characters, tabs) keeps its lines, and scrolls.
 */
const wrapClass = (body: string): string => (/[\u2500-\u257f\t]/.test(body) ? 'grid' : 'wrap');
const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
const text = (v: unknown): string => (Array.isArray(v) ? v.join('') : typeof v === 'string' ? v : v == null ? '' : String(v));

export function slugify(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '') || 'section'
  );
}

/** Per-page state shared by the markdown rules: used ids, headings, numbered scroll boxes. */
interface RenderEnv {
  usedIds?: Set<string>;
  headings?: Heading[];
  boxes?: number;
  /** The page's UI strings (labels of boxes and permalinks); English when absent. */
  ui?: UiStrings;
  /** Where the page's repository links go (repoLinks.ts); without it only `x.ipynb` links are rewritten. */
  links?: LinkContext;
}

/** A labelled, focusable box that scrolls its content instead of the page (axe's scrollable-region-focusable). */
export function scrollBox(label: string, inner: SafeHtml, className = ''): SafeHtml {
  return html`<div class="scroll-box${className ? ` ${className}` : ''}" role="region" tabindex="0" aria-label="${label}">${inner}</div>`;
}

/** markdown-it set up for notebook cells. */
export function createMarkdown(): MarkdownIt {
  const md: MarkdownIt = new MarkdownIt({
    html: false, // a <script> (any tag) in markdown is shown as text, never run
    linkify: true,
    highlight: (code, lang) => (lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang }).value : ''),
  });
  md.use(katexPlugin, { throwOnError: false });
  // Ids on headings, unique per page, so that "On this page", search and permalinks can link.
  md.core.ruler.push('heading_ids', (state) => {
    const env = state.env as RenderEnv;
    const used = (env.usedIds ??= new Set<string>());
    state.tokens.forEach((token, i) => {
      if (token.type !== 'heading_open') return;
      const title = state.tokens[i + 1].children?.map((c) => c.content).join('') ?? '';
      let id = slugify(title);
      for (let n = 2; used.has(id); n++) id = `${slugify(title)}-${n}`;
      used.add(id);
      token.attrSet('id', id);
      (env.headings ??= []).push({ level: Number(token.tag.slice(1)), id, text: title });
    });
  });
  // A visible permalink at the end of each heading.
  md.renderer.rules.heading_close = (tokens, i, _options, env) => {
    const open = tokens.slice(0, i).reverse().find((t) => t.type === 'heading_open');
    const id = open?.attrGet('id');
    const title = tokens[i - 1]?.children?.map((c) => c.content).join('') ?? '';
    return id ? `${html` <a class="anchor" href="${`#${id}`}" aria-label="${fill((env as RenderEnv).ui?.linkToSection ?? ui('en').linkToSection, { title })}">#</a>`}</${tokens[i].tag}>\n` : `</${tokens[i].tag}>\n`;
  };
  // Links written as repository paths (`../docs/x.md`, `02-model.ipynb#the-setup`) go to their
  // pages on the site, or to the repository (repoLinks.ts).
  md.use(repoLinksPlugin);
  // Tables, display math and fenced code scroll in their own box on a narrow screen.
  const box = (env: RenderEnv, kind: 'table' | 'equation' | 'codeBlock'): string => {
    env.boxes = (env.boxes ?? 0) + 1;
    return html`<div class="scroll-box" role="region" tabindex="0" aria-label="${fill((env.ui ?? ui('en'))[kind], { n: env.boxes })}">`.value;
  };
  md.renderer.rules.table_open = (_t, _i, _o, env: RenderEnv) => `${box(env, 'table')}<table>\n`;
  md.renderer.rules.table_close = () => '</table></div>\n';
  const fence = md.renderer.rules.fence!;
  md.renderer.rules.fence = (tokens, i, options, env: RenderEnv, self) => `${box(env, 'codeBlock')}${fence(tokens, i, options, env, self).trimEnd()}</div>\n`;
  const indented = md.renderer.rules.code_block!;
  md.renderer.rules.code_block = (tokens, i, options, env: RenderEnv, self) => `${box(env, 'codeBlock')}${indented(tokens, i, options, env, self).trimEnd()}</div>\n`;
  // A header cell with no text names no column (axe's empty-table-header): it is an ordinary cell.
  const emptyHeader = (tokens: { type: string; content: string }[], i: number): boolean => tokens[i + 1]?.type === 'inline' && tokens[i + 1].content.trim() === '';
  md.renderer.rules.th_open = (tokens, i, options, _env, self) => (emptyHeader(tokens, i) ? '<td>' : self.renderToken(tokens, i, options));
  md.renderer.rules.th_close = (tokens, i, options, _env, self) => (emptyHeader(tokens, i - 2) ? '</td>' : self.renderToken(tokens, i, options));
  const mathBlock = md.renderer.rules.math_block!;
  md.renderer.rules.math_block = (tokens, i, options, env: RenderEnv, self) => `${box(env, 'equation')}${mathBlock(tokens, i, options, env, self)}</div>`;
  return md;
}

/** A rendered output: its HTML, the text a search can find, whether it is a chart. */
interface RenderedOutput {
  html: SafeHtml;
  searchText: string;
  plotly: boolean;
}

/** Renders one output of cell `cell` (1-based), the `n`-th of that cell. */
function renderOutput(out: Output, md: MarkdownIt, env: RenderEnv, where: { notebook: string; cell: number; n: number; errors: string[] }): RenderedOutput {
  const label = fill((env.ui ?? ui('en')).outputOfCell, { n: where.n, cell: where.cell });
  if (out.output_type === 'stream') {
    const body = stripAnsi(text(out.text));
    return { html: scrollBox(label, html`<pre class="${`output stream ${out.name === 'stderr' ? 'stderr' : 'stdout'} ${wrapClass(body)}`}">${body}</pre>`), searchText: body, plotly: false };
  }
  if (out.output_type === 'error') {
    const body = stripAnsi(Array.isArray(out.traceback) && out.traceback.length ? out.traceback.join('\n') : `${text(out.ename)}: ${text(out.evalue)}`);
    return { html: scrollBox(label, html`<pre class="output error">${body}</pre>`), searchText: body, plotly: false };
  }
  const data: MimeBundle = out.data ?? {};
  const mime = MIME_ORDER.find((m) => m in data);
  const value = mime ? data[mime] : undefined;
  const plain = stripAnsi(text(data['text/plain']));
  switch (mime) {
    case PLOTLY_MIME: {
      const fig = value as PlotlyFigure;
      const missing = missingTraceTypes(fig);
      if (missing.length > 0) {
        where.errors.push(`${where.notebook}, cell ${where.cell}: the figure "${figureTitle(fig)}" needs trace type(s) ${missing.join(', ')}, which the site's Plotly bundle (plotly.js-basic-dist-min) lacks.`);
      }
      return { html: chartHtml(fig, `figure-${where.cell}-${where.n}`), searchText: plain, plotly: true };
    }
    case 'image/png':
    case 'image/jpeg':
    case 'image/gif':
      return { html: html`<div class="output image"><img alt="${plain || label}" src="${`data:${mime};base64,${text(value).replace(/\s/g, '')}`}"></div>`, searchText: plain, plotly: false };
    case 'image/svg+xml': {
      // As an <img>, an SVG cannot run scripts.
      const b64 = Buffer.from(text(value)).toString('base64');
      return { html: html`<div class="output image"><img alt="${plain || label}" src="${`data:image/svg+xml;base64,${b64}`}"></div>`, searchText: plain, plotly: false };
    }
    case 'text/html': {
      // Sanitized (htmlOutput.ts); a note says so when the sanitizer removed anything.
      const clean = sanitizeOutput(text(value));
      const note = clean.removed ? html`<p class="output unsupported">${(env.ui ?? ui('en')).htmlSanitized}</p>` : '';
      return { html: scrollBox(label, html`<div class="output html">${trusted(clean.html)}</div>${note}`), searchText: plain, plotly: false };
    }
    case 'text/markdown':
    case 'text/latex':
      return { html: html`<div class="output markdown">${trusted(md.render(text(value), env))}</div>`, searchText: text(value), plotly: false };
    case 'application/json': {
      const body = JSON.stringify(value, null, 2);
      return { html: scrollBox(label, html`<pre class="output json">${body}</pre>`), searchText: body, plotly: false };
    }
    case 'text/plain':
      return { html: scrollBox(label, html`<pre class="${`output text ${wrapClass(plain)}`}">${plain}</pre>`), searchText: plain, plotly: false };
    default:
      return { html: html`<p class="output unsupported">${fill((env.ui ?? ui('en')).unsupportedOutput, { types: Object.keys(data).join(', ') || 'none' })}</p>`, searchText: '', plotly: false };
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

/** Markdown as the plain text a search should match: no markup, no link targets. */
function proseText(source: string): string {
  return source
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`#>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** An ISO 8601 timestamp as Jupyter and the runner write them; V8's Date.parse accepts far more. */
const isoTime = (v: unknown): v is string => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.test(v) && Number.isFinite(Date.parse(v));

/** The runner's metadata, read defensively: a field of the wrong type is treated as absent. */
export function runnerSummary(metadata: unknown): RunnerSummary | null {
  const r = (metadata as Record<string, { runner?: unknown }> | undefined)?.[REPORT_KEY]?.runner as Record<string, unknown> | undefined;
  if (!r || typeof r !== 'object') return null;
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const err = r.error && typeof r.error === 'object' ? (r.error as Record<string, unknown>) : null;
  return {
    status: r.status === 'ok' ? 'ok' : r.status === 'failed' ? 'failed' : 'other',
    executedCells: num(r.executedCells),
    codeCells: num(r.codeCells),
    totalMs: num(r.totalMs),
    executedAt: isoTime(r.executedAt) ? (r.executedAt as string) : null,
    error: err ? { cell: Number.isInteger(err.cell) ? (err.cell as number) : null, kind: typeof err.kind === 'string' ? err.kind : 'error' } : null,
  };
}

/**
 * A code cell's source: its execution count on the line above (the cell's run time stays in the
 * downloadable notebook, out of the reader's way), and, for `hide-input`, behind a disclosure.
 */
function codeHtml(cell: Cell, source: string, n: number, view: PartView, t: UiStrings): SafeHtml {
  if (view === 'removed') return html``;
  const count = Number.isInteger(cell.execution_count) ? `[${cell.execution_count}]` : '[ ]';
  const code = trusted(hljs.highlight(source, { language: 'typescript' }).value);
  const box = html`<div class="source"><div class="source-head"><span class="meta">${count}</span></div>${scrollBox(fill(t.codeOfCell, { cell: n }), html`<pre><code class="hljs language-typescript">${code}</code></pre>`)}</div>`;
  return view === 'hidden' ? html`<details class="cell-part"><summary>${t.showCode}</summary>${box}</details>` : box;
}

/** A code cell's outputs, behind a disclosure for `hide-output`. */
function outputsHtml(outputs: RenderedOutput[], view: PartView, t: UiStrings): SafeHtml {
  if (outputs.length === 0) return html``;
  const box = html`<div class="outputs">${outputs.map((o) => o.html)}</div>`;
  return view === 'hidden' ? html`<details class="cell-part"><summary>${t.showOutput}</summary>${box}</details>` : box;
}

/**
 * Renders a notebook into a chapter page. Problems (broken math, unsupported charts) go to
 * `errors`. `links` says where the notebook sits in the repository and its page in the site, so
 * that its links to other files reach their pages (default: only `x.ipynb` links are rewritten).
 */
export function renderNotebook(file: string, nb: Notebook, md: MarkdownIt, errors: string[], lang: PageLang = 'en', links?: LinkContext): ChapterPage {
  const notebook = path.basename(file);
  const name = path.basename(file, '.ipynb');
  const env: RenderEnv = { ui: ui(lang), links };
  const parts: SafeHtml[] = [];
  const search: SearchEntry[] = [];
  let plotlyOutputs = 0;
  let section = { id: 'main', title: '' };
  nb.cells.forEach((cell, i) => {
    const view = cellView(cell);
    if (!view.present) return;
    const source = cellSource(cell);
    if (cell.cell_type === 'markdown') {
      const before = env.headings?.length ?? 0;
      const rendered = md.render(inlineAttachments(source, cell), env);
      if (rendered.includes('katex-error')) {
        const bad = /title="([^"]*)"/.exec(rendered.slice(rendered.indexOf('katex-error')))?.[1] ?? '';
        errors.push(`${notebook}, cell ${i + 1}: KaTeX cannot render the math ${bad}`);
      }
      // Prose is indexed per heading: the text under each heading belongs to its section.
      const headings = (env.headings ?? []).slice(before);
      let inFence = false;
      let chunk: string[] = [];
      const flush = (): void => {
        const t = proseText(chunk.join('\n'));
        if (t) search.push({ kind: 'prose', section: section.id, sectionTitle: section.title, text: t });
        chunk = [];
      };
      for (const line of source.split('\n')) {
        if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
        if (!inFence && /^#{1,6}\s/.test(line) && headings.length > 0) {
          flush();
          const h = headings.shift()!;
          section = { id: h.id, title: h.text };
        }
        chunk.push(line);
      }
      flush();
      parts.push(html`<section class="cell markdown-cell">${trusted(rendered)}</section>`);
      return;
    }
    if (cell.cell_type !== 'code') return; // raw cells are not shown, as in Jupyter's HTML export
    const n = i + 1;
    const t = env.ui ?? ui('en');
    const removedOutputs = view.outputs === 'removed';
    const outputs = removedOutputs ? [] : (cell.outputs ?? []).map((o, k) => renderOutput(o, md, env, { notebook, cell: n, n: k + 1, errors }));
    plotlyOutputs += outputs.filter((o) => o.plotly).length;
    if (view.input !== 'removed') search.push({ kind: 'code', section: `cell-${n}`, sectionTitle: section.title, text: source });
    for (const o of outputs) {
      if (o.searchText.trim()) search.push({ kind: 'output', section: `cell-${n}`, sectionTitle: section.title, text: o.searchText.slice(0, SEARCH_TEXT_LIMIT) });
    }
    if (view.input === 'removed' && outputs.length === 0) return;
    parts.push(html`<section class="${`cell code-cell${view.input === 'removed' ? ' no-input' : ''}`}" id="${`cell-${n}`}">${codeHtml(cell, source, n, view.input, t)}${outputsHtml(outputs, view.outputs, t)}</section>`);
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
    lang,
    notebook,
    file: `${name}.html`,
    title: h1?.text ?? name,
    subtitle: trusted(md.renderInline(subtitle, { links })),
    description: proseText(subtitle).replace(/\$/g, ''),
    headings,
    body: trusted(parts.join('\n')),
    plotlyOutputs,
    hasMath: parts.some((p) => p.value.includes('class="katex')),
    runner: runnerSummary(nb.metadata),
    search,
  };
}
