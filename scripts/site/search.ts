/**
 * The search index, built at export time and shipped as a plain script
 * (`assets/search-index.js`), so that search works from file:// where fetch() of a JSON file is
 * refused. Entries are the chapters' prose, code and outputs, each scoped to the section it sits
 * in. The browser side (assets/search.js) matches every query word as a substring, which needs no
 * tokenizer for English; a page's `lang` picks the tokenizer by name, so a language without
 * spaces between words can declare n-gram matching later without changing the index's shape.
 */
import { html, scriptJson, type SafeHtml } from './html';
import type { ChapterPage, PageLang } from './model';

/** How the browser splits a query and the text into comparable pieces, per page language. */
export type Tokenizer = 'words';

/** The shipped index. Entries are tuples to keep the file small. */
export interface SearchIndex {
  version: 1;
  pages: { file: string; title: string; lang: PageLang; tokenizer: Tokenizer }[];
  /** [page index, section id, section title, kind, text]. */
  entries: [number, string, string, 'prose' | 'code' | 'output', string][];
}

/** The tokenizer for a page's language; only `words` exists today. */
export function tokenizerFor(lang: PageLang): Tokenizer {
  void lang;
  return 'words';
}

export function buildSearchIndex(pages: ChapterPage[]): SearchIndex {
  return {
    version: 1,
    pages: pages.map((p) => ({ file: p.file, title: p.title, lang: p.lang, tokenizer: tokenizerFor(p.lang) })),
    entries: pages.flatMap((p, i) => p.search.map((e) => [i, e.section, e.sectionTitle, e.kind, e.text] as SearchIndex['entries'][number])),
  };
}

/** The index as the script the search page loads. */
export function searchIndexScript(index: SearchIndex): string {
  return `// Made by scripts/exportSite.ts: the site's search index.\nwindow.TFJS_ACCUMULATE_SEARCH = ${scriptJson(index)};\n`;
}

/** The search page's content; assets/search.js fills in the results. */
export function searchMain(): SafeHtml {
  return html`<h1>Search</h1>
<form class="search-form" role="search" action="search.html"><label for="q">Search the chapters' text, code and outputs</label>
<div class="search-row"><input id="q" name="q" type="search" autocomplete="off"><button type="submit">Search</button></div></form>
<p id="search-status" role="status" aria-live="polite"></p>
<ol id="search-results" class="search-results"></ol>
<noscript><p>Search needs JavaScript; the <a href="index.html">contents</a> list every chapter and section.</p></noscript>`;
}
