/**
 * The page template: skip link, a one-line header (home, search, theme toggle), "On this page",
 * the content, and a footer with the chapter pager, the downloads and how the page was made.
 * Every value is interpolated through `html`, so a notebook's name, text or metadata can never
 * become markup here.
 */
import { fileHref, html, trusted, type SafeHtml } from './html';
import type { ChapterPage, PageLang } from './model';

/** The site's name, in the header and in page titles. */
export const SITE_TITLE = 'tfjs-accumulate';
/** Where the theme choice is remembered (localStorage). */
export const THEME_KEY = 'tfjs-accumulate-theme';

/** What every page's frame needs. */
export interface LayoutArgs {
  lang: PageLang;
  title: string;
  description: string;
  /** The main content. */
  main: SafeHtml;
  /** Before `<main>`: the "On this page" navigation of a chapter. */
  aside?: SafeHtml;
  footer: SafeHtml;
  /** Load KaTeX's stylesheet (pages with math). */
  math: boolean;
  /** The header search box; the search page has its own. Default true. */
  headerSearch?: boolean;
  /** Extra scripts at the end of the body (the search page's index and code). */
  scripts?: string[];
}

// Runs before the first paint, so a remembered dark theme never flashes light.
const THEME_BOOT = `try{var t=localStorage.getItem(${JSON.stringify(THEME_KEY)});if(t==='light'||t==='dark')document.documentElement.setAttribute('data-theme',t)}catch(e){}`;

export function layout(a: LayoutArgs): string {
  const search = a.headerSearch === false
    ? ''
    : html`<form class="header-search" role="search" action="search.html"><label class="visually-hidden" for="header-q">Search the tutorial</label><input id="header-q" name="q" type="search" placeholder="Search" autocomplete="off"></form>`;
  return html`<!doctype html>
<html lang="${a.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${a.title}</title>
<meta name="description" content="${a.description}">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
${a.math ? html`<link rel="stylesheet" href="assets/katex/katex.min.css">\n` : ''}<link rel="stylesheet" href="assets/site.css">
<script>${trusted(THEME_BOOT)}</script>
</head>
<body>
<a class="skip-link" href="#content">Skip to content</a>
<header class="site-header"><a class="home" href="index.html">${SITE_TITLE}</a>${search}<button class="theme-toggle" type="button" aria-pressed="false" hidden>Dark</button></header>
<div class="page">
${a.aside ?? ''}<main id="content" tabindex="-1">
${a.main}
</main>
</div>
<footer class="site-footer">${a.footer}</footer>
<script src="assets/site.js" defer></script>
${(a.scripts ?? []).map((s) => html`<script src="${s}" defer></script>\n`)}</body>
</html>
`.value;
}

/** The previous/next/contents links of a chapter. */
export function pager(pages: ChapterPage[], i: number): SafeHtml {
  const prev = pages[i - 1];
  const next = pages[i + 1];
  return html`<nav class="pager" aria-label="Chapters">${prev ? html`<a rel="prev" href="${fileHref(prev.file)}">← ${prev.title}</a>` : ''}<a href="index.html">Contents</a>${
    next ? html`<a rel="next" href="${fileHref(next.file)}">${next.title} →</a>` : ''
  }</nav>`;
}

/** "On this page": the chapter's second-level headings. */
export function onThisPage(p: ChapterPage): SafeHtml {
  const sections = p.headings.filter((h) => h.level === 2);
  if (sections.length === 0) return html``;
  return html`<nav class="on-this-page" aria-label="On this page"><p class="on-this-page-title">On this page</p><ol>${sections.map(
    (s) => html`<li><a href="${`#${s.id}`}">${s.text}</a></li>`,
  )}</ol></nav>\n`;
}

/** How the page was made: the runner's numbers, each validated and escaped. */
export function runnerNote(p: ChapterPage): SafeHtml {
  const r = p.runner;
  if (!r) return html`Not executed by <code>npm run notebooks</code>.`;
  const when = r.executedAt ? ` on ${r.executedAt.slice(0, 10)}` : '';
  const cells = r.executedCells !== null && r.codeCells !== null ? `: ${r.executedCells} of ${r.codeCells} code cells` : '';
  const time = r.totalMs !== null ? ` in ${(r.totalMs / 1000).toFixed(1)} s` : '';
  return html`Executed by <code>npm run notebooks</code>${when}${cells}${time}.`;
}

/** A banner over a notebook that did not run to the end. */
export function failureBanner(p: ChapterPage): SafeHtml {
  const r = p.runner;
  if (!r || r.status === 'ok') return html``;
  const where = r.error?.cell != null ? html`<a href="${`#cell-${r.error.cell}`}">cell ${r.error.cell}</a>` : html`a cell`;
  return html`<p class="status-banner">This notebook did not run to the end: ${where} failed (${r.error?.kind ?? r.status}). Outputs below stop there.</p>`;
}
