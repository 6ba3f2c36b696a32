/**
 * The search index, built at export time and shipped as a plain script
 * (`assets/search-index.js`), so that search works from file:// where fetch() of a JSON file is
 * refused. Entries are the chapters' prose, code and outputs, each scoped to the section it sits
 * in. The browser side (assets/search.js) splits the query with the tokenizer the page's `lang`
 * names (assets/tokenizers.js): `words` for English, `bigram` for Chinese, which is written
 * without spaces between words, so its runs of CJK characters are cut into overlapping pairs.
 */
import { fileHref, html, scriptJson, type SafeHtml } from './html';
import type { ChapterPage, PageLang } from './model';
import { fillHtml, ui } from './strings';

/** How the browser splits a query and the text into comparable pieces, per page language. */
export type Tokenizer = 'words' | 'bigram';

/** The shipped index. Entries are tuples to keep the file small. */
export interface SearchIndex {
  version: 1;
  /**
   * `href` is the page's link as every other link of the site writes it ({@link fileHref}), so
   * that the search page never builds a link from a raw file name (a notebook named
   * `javascript:….ipynb` would otherwise become a `javascript:` link).
   */
  pages: { href: string; title: string; lang: PageLang; tokenizer: Tokenizer }[];
  /** [page index, section id, section title, kind, text]. */
  entries: [number, string, string, 'prose' | 'code' | 'output', string][];
}

/** The tokenizer for a page's language: `bigram` for Chinese and Japanese, `words` for the rest. */
export function tokenizerFor(lang: PageLang): Tokenizer {
  return /^(zh|ja)(-|$)/i.test(lang) ? 'bigram' : 'words';
}

export function buildSearchIndex(pages: ChapterPage[]): SearchIndex {
  return {
    version: 1,
    pages: pages.map((p) => ({ href: fileHref(p.file), title: p.title, lang: p.lang, tokenizer: tokenizerFor(p.lang) })),
    entries: pages.flatMap((p, i) => p.search.map((e) => [i, e.section, e.sectionTitle, e.kind, e.text] as SearchIndex['entries'][number])),
  };
}

/** The index as the script the search page loads. */
export function searchIndexScript(index: SearchIndex): string {
  return `// Made by scripts/site/exportSite.ts: the site's search index.\nwindow.TFJS_ACCUMULATE_SEARCH = ${scriptJson(index)};\n`;
}

/** The search page's content; assets/search.js fills in the results. */
export function searchMain(lang: PageLang = 'en'): SafeHtml {
  const t = ui(lang);
  return html`<h1>${t.searchTitle}</h1>
<form class="search-form" role="search" action="search.html"><label for="q">${t.searchFormLabel}</label>
<div class="search-row"><input id="q" name="q" type="search" autocomplete="off"><button type="submit">${t.searchButton}</button></div></form>
<p id="search-status" role="status" aria-live="polite"></p>
<ol id="search-results" class="search-results"></ol>
<noscript><p>${fillHtml(t.searchNoScript, { contents: html`<a href="index.html">${t.contents.toLowerCase()}</a>` })}</p></noscript>`;
}
