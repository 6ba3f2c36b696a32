/**
 * The rule "every chapter page links every other chapter" (issue 24: a reader moves between
 * chapters from any chapter, not only to the neighbours the pager offers). Used by the unit
 * tests on exported fixtures (test/scripts/site/nav.test.ts) and by the browser test on the
 * real site (test/e2e/siteZh.e2e.ts), both editions.
 */
import * as path from 'node:path';

/** The local pages a page's HTML links to, as paths from the site's root (fragments dropped). */
export function linkedPages(pageRel: string, html: string): Set<string> {
  const dir = path.posix.dirname(pageRel);
  const out = new Set<string>();
  for (const [, href] of html.matchAll(/<a\b[^>]*\shref="([^"]*)"/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#')) continue; // other sites, data:, fragments of the page itself
    const file = decodeURIComponent(href.replace(/[#?].*$/, ''));
    out.add(path.posix.normalize(path.posix.join(dir, file)));
  }
  return out;
}

/**
 * For each chapter of an edition, the other chapters it does not link to; empty when the rule
 * holds. `chapters` are paths from the site's root (`zh/03-accumulation.html`), `read` gives a
 * page's HTML.
 */
export function missingChapterLinks(chapters: readonly string[], read: (rel: string) => string): Map<string, string[]> {
  const missing = new Map<string, string[]>();
  for (const page of chapters) {
    const links = linkedPages(page, read(page));
    const lacking = chapters.filter((c) => c !== page && !links.has(c));
    if (lacking.length > 0) missing.set(page, lacking);
  }
  return missing;
}
