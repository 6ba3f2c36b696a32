/**
 * The page template: skip link, a one-line header (chapter menu on narrow screens, home, search,
 * language, theme toggle), the chapter sidebar (nav.ts), the content, and a footer with the chapter pager, the downloads and how the page was made.
 * Every value is interpolated through `html`, so a notebook's name, text or metadata can never
 * become markup here.
 */
import { fileHref, html, scriptJson, trusted, type SafeHtml } from './html';
import type { ChapterPage, PageLang } from './model';
import { chapterMenu, chapterSidebar, type NavArgs } from './nav';
import { fillHtml, ui } from './strings';

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
  /** The edition's chapters, for the sidebar (wide screens) and the header's menu (narrow ones). Default: neither. */
  nav?: NavArgs;
  footer: SafeHtml;
  /** Load KaTeX's stylesheet (pages with math). */
  math: boolean;
  /** The header search box; the search page has its own. Default true. */
  headerSearch?: boolean;
  /** Extra scripts at the end of the body (the search page's index and code), relative to the site's root. */
  scripts?: string[];
  /** The way from this page to the site's root: '' for top-level pages, '../' for an edition's folder. Default ''. */
  root?: string;
  /**
   * The way from this page to its edition's folder, where its index and search page are: ''
   * for chapters, '../' for a page of the edition's `docs/`. Default ''.
   */
  base?: string;
  /**
   * The same page in the other language: a `<link rel="alternate" hreflang>` in the head and a
   * visible link in the header. Default: none.
   */
  alternate?: { lang: PageLang; href: string };
  /**
   * Where the site is published (ends with `/`), so that the head's hreflang link can be the
   * fully-qualified URL search engines (and Lighthouse's SEO audit) require. Default: none, and a
   * one-line script in the head adds the link resolved against the page's own URL.
   */
  siteUrl?: string;
  /** This page's path from the site's root (e.g. `zh/03-accumulation.html`), for `siteUrl`. */
  path?: string;
}

// Runs before the first paint, so a remembered dark theme never flashes light.
const THEME_BOOT = `try{var t=localStorage.getItem(${JSON.stringify(THEME_KEY)});if(t==='light'||t==='dark')document.documentElement.setAttribute('data-theme',t)}catch(e){}`;

/** The head's hreflang link: static when the site's URL is known, else resolved by the browser. */
function alternateLink(alt: { lang: PageLang; href: string }, a: LayoutArgs): SafeHtml {
  if (a.siteUrl && a.path !== undefined) return html`<link rel="alternate" hreflang="${alt.lang}" href="${new URL(alt.href, new URL(a.path, a.siteUrl)).href}">\n`;
  const add = `(function(){var l=document.createElement('link');l.rel='alternate';l.hreflang=${scriptJson(alt.lang)};l.href=new URL(${scriptJson(alt.href)},location.href).href;document.head.appendChild(l)})()`;
  return html`<script>${trusted(add)}</script>\n`;
}

export function layout(a: LayoutArgs): string {
  const t = ui(a.lang);
  const root = a.root ?? '';
  const base = a.base ?? '';
  const search = a.headerSearch === false
    ? ''
    : html`<form class="header-search" role="search" action="${`${base}search.html`}"><label class="visually-hidden" for="header-q">${t.searchLabel}</label><input id="header-q" name="q" type="search" placeholder="${t.searchPlaceholder}" autocomplete="off"></form>`;
  const alt = a.alternate;
  const langLink = alt ? html`<a class="lang-link" href="${alt.href}" hreflang="${alt.lang}" lang="${alt.lang}">${ui(alt.lang).languageName}</a>` : '';
  return html`<!doctype html>
<html lang="${a.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${a.title}</title>
<meta name="description" content="${a.description}">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
${alt ? alternateLink(alt, a) : ''}${a.math ? html`<link rel="stylesheet" href="${`${root}assets/katex/katex.min.css`}">\n` : ''}<link rel="stylesheet" href="${`${root}assets/site.css`}">
<script>${trusted(THEME_BOOT)}</script>
</head>
<body>
<a class="skip-link" href="#content">${t.skipLink}</a>
<header class="site-header">${a.nav ? chapterMenu(a.nav) : ''}<a class="home" href="${`${base}index.html`}">${SITE_TITLE}</a>${search}${langLink}<button class="theme-toggle" type="button" aria-pressed="false" hidden>${t.themeToggle}</button></header>
<div class="${`page${a.nav ? ' with-nav' : ''}`}">
${a.nav ? chapterSidebar(a.nav) : ''}<main id="content" tabindex="-1">
${a.main}
</main>
</div>
<footer class="site-footer">${a.footer}</footer>
<script type="application/json" id="ui-strings">${trusted(scriptJson(t.browser))}</script>
<script src="${`${root}assets/site.js`}" defer></script>
${(a.scripts ?? []).map((s) => html`<script src="${root + s}" defer></script>\n`)}</body>
</html>
`.value;
}

/** How the page was made: the runner's numbers, each validated and escaped. */
export function runnerNote(p: ChapterPage): SafeHtml {
  const t = ui(p.lang);
  const cmd = html`<code>npm run notebooks</code>`;
  const r = p.runner;
  if (!r) return fillHtml(t.notExecuted, { cmd });
  const when = r.executedAt ? fillHtml(t.executedOn, { date: r.executedAt.slice(0, 10) }) : '';
  const cells = r.executedCells !== null && r.codeCells !== null ? fillHtml(t.executedCells, { done: r.executedCells, total: r.codeCells }) : '';
  const time = r.totalMs !== null ? fillHtml(t.executedTime, { s: (r.totalMs / 1000).toFixed(1) }) : '';
  return fillHtml(t.executed, { cmd, when, cells, time });
}

/** A banner over a notebook that did not run to the end. */
export function failureBanner(p: ChapterPage): SafeHtml {
  const t = ui(p.lang);
  const r = p.runner;
  if (!r || r.status === 'ok') return html``;
  const where = r.error?.cell != null ? html`<a href="${`#cell-${r.error.cell}`}">${fillHtml(t.failedCell, { n: r.error.cell })}</a>` : html`${t.aCell}`;
  return html`<p class="status-banner">${fillHtml(t.failureBanner, { where, kind: r.error?.kind ?? r.status })}</p>`;
}
