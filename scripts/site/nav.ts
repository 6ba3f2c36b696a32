/**
 * The site's navigation, as readers know it from d2l and Jupyter Book: on wide screens a sidebar
 * with the edition's chapters and, under the current one, its sections ("On this page"); on
 * narrow ones the chapters in a menu in the header and the sections in a disclosure right after
 * the title; previous/next links at the bottom. One sidebar column (not a second one on the
 * right) leaves the text column the width that code and tables need at 1280 px. Each list is
 * written in both forms and the stylesheet shows one (`display: none` on the other also takes it
 * out of the accessibility tree, so no landmark is announced twice).
 */
import { fileHref, html, trusted, type SafeHtml } from './html';
import type { ChapterPage, Heading, PageLang } from './model';
import { ui } from './strings';

/** Where a page sits among its edition's chapters. */
export interface NavArgs {
  lang: PageLang;
  /** The edition's chapters, in order. */
  pages: readonly Pick<ChapterPage, 'file' | 'title'>[];
  /** The current page's file name (`03-accumulation.html`); none on the index and search pages. */
  current?: string;
  /** The current chapter's headings; its second-level ones are listed under it in the sidebar. Default none. */
  headings?: readonly Heading[];
  /** The way from the page to the edition's folder: '' for chapters, '../' for a docs page. Default ''. */
  base?: string;
}

/** The chapter list: every chapter of the edition, the current one marked `aria-current`, with its sections when `withSections`. */
function chapterList(a: NavArgs, withSections: boolean): SafeHtml {
  const t = ui(a.lang);
  const base = a.base ?? '';
  const items = a.pages.map((p) => {
    const current = p.file === a.current;
    const sections = current && withSections ? sectionItems(a.headings ?? []) : [];
    return html`<li><a href="${base + fileHref(p.file)}"${current ? html` aria-current="page"` : ''}>${p.title}</a>${
      sections.length ? html`<ol class="sections" aria-label="${t.onThisPage}">${sections}</ol>` : ''
    }</li>`;
  });
  return html`<p class="chapter-nav-home"><a href="${`${base}index.html`}"${a.current === undefined ? html` aria-current="page"` : ''}>${t.contents}</a></p><ol>${items}</ol>`;
}

/** The sidebar of wide screens. */
export function chapterSidebar(a: NavArgs): SafeHtml {
  return html`<nav class="chapter-nav" aria-label="${ui(a.lang).chapters}">${chapterList(a, true)}</nav>\n`;
}

/**
 * The header's menu of narrow screens: a disclosure, so that it opens without JavaScript. It also
 * links the search page, for the narrowest screens, where the header has no room for the box.
 */
export function chapterMenu(a: NavArgs): SafeHtml {
  const t = ui(a.lang);
  return html`<details class="chapter-menu"><summary><span class="menu-icon" aria-hidden="true">☰</span><span class="menu-word">${t.menu}</span></summary><nav class="chapter-menu-list" aria-label="${t.chapters}">${chapterList(a, false)}<p class="menu-search"><a href="${`${a.base ?? ''}search.html`}">${t.searchTitle}</a></p></nav></details>`;
}

/** Second-level headings as list items. */
function sectionItems(headings: readonly Heading[]): SafeHtml[] {
  return headings.filter((h) => h.level === 2).map((s) => html`<li><a href="${`#${s.id}`}">${s.text}</a></li>`);
}

/** "On this page" right after the title (narrow screens): a disclosure that keeps the text near. */
export function onThisPage(p: Pick<ChapterPage, 'lang' | 'headings'>): SafeHtml {
  const items = sectionItems(p.headings);
  if (items.length === 0) return html``;
  const t = ui(p.lang);
  return html`<nav class="on-this-page" aria-label="${t.onThisPage}"><details><summary>${t.onThisPage}</summary><ol>${items}</ol></details></nav>\n`;
}

/**
 * A chapter's body with {@link onThisPage} placed right after its first `<h1>`, or at
 * the top when the chapter has none. The body is the exporter's own rendering, so its first
 * `</h1>` is the title's.
 */
export function withSectionsAfterTitle(p: Pick<ChapterPage, 'lang' | 'headings' | 'body'>): SafeHtml {
  const body = p.body.value;
  const inline = onThisPage(p).value;
  const end = body.indexOf('</h1>');
  return trusted(end < 0 ? inline + body : body.slice(0, end + 5) + inline + body.slice(end + 5));
}

/** The previous/next/contents links of a chapter. */
export function pager(pages: ChapterPage[], i: number): SafeHtml {
  const prev = pages[i - 1];
  const next = pages[i + 1];
  const t = ui(pages[i].lang);
  return html`<nav class="pager" aria-label="${t.pagerLabel}">${prev ? html`<a rel="prev" href="${fileHref(prev.file)}">← ${prev.title}</a>` : ''}<a href="index.html">${t.contents}</a>${
    next ? html`<a rel="next" href="${fileHref(next.file)}">${next.title} →</a>` : ''
  }</nav>`;
}
