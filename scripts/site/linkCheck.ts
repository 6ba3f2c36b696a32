/**
 * Follows every link of an exported site, as a reader's browser would from file:// or any static
 * server, and reports each one that does not resolve inside the site. A broken link is found
 * here, when the site is made, instead of by a reader: a relative link must name a file the site
 * holds, and a `#fragment` an id on that page (an empty `#` is the page itself). Absolute URLs (`https:`, `http:`, `mailto:`) leave the site on purpose and are not
 * fetched; `data:` URLs carry their content. Anything else (another scheme, a root-absolute
 * `/path`, which means a different file under file://) is reported.
 *
 * The scan reads the exporter's own HTML: attribute values are always double-quoted and a
 * quote inside text is always escaped (html.ts, highlight.js, KaTeX, sanitize-html), so
 * ` href="` only occurs in a tag. Script elements are skipped: their JSON and code hold strings,
 * not links.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One link that does not resolve. */
export interface BrokenLink {
  /** The page it is on, from the site's root (`zh/03-x.html`). */
  file: string;
  /** The link's text (an `<a>`), or its element (`<img>`, `<link>`, `<form>`). */
  name: string;
  /** The link as written in the page. */
  href: string;
  /** Why it does not resolve. */
  reason: string;
}

/** What a link may be; said in every report so that the fix is clear. */
export const ACCEPTED_LINKS =
  'accepted: a relative link to a file in the site, with an optional #fragment that names an id on that page; or an absolute https:, http:, mailto: or data: URL';

/** The site has links that do not resolve. */
export class BrokenLinksError extends Error {
  override name = 'BrokenLinksError';
  constructor(readonly links: readonly BrokenLink[]) {
    super(`${links.length} broken link(s) on the site (${ACCEPTED_LINKS}):\n  ${links.map(formatBrokenLink).join('\n  ')}`);
  }
}

/** One line of a report: file, link name, target and reason. */
export function formatBrokenLink(b: BrokenLink): string {
  return `${b.file}: "${b.name}" → ${b.href}: ${b.reason}`;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: '\u00a0' };
/** An attribute value or text as the browser reads it. */
const decodeEntities = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, e: string) => {
    if (e in ENTITIES) return ENTITIES[e];
    if (/^#x/i.test(e)) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(Number(e.slice(1)));
    return whole;
  });

/** A page's HTML without its script elements' content. */
const withoutScripts = (page: string): string => page.replace(/(<script\b[^>]*>)[\s\S]*?(<\/script>)/gi, '$1$2');

/** The ids a page defines (`id="…"` on any element), as the browser reads them. */
export function pageIds(page: string): Set<string> {
  return new Set([...withoutScripts(page).matchAll(/<[a-z][\w-]*\s(?:[^>]*?\s)?id="([^"]*)"/gi)].map((m) => decodeEntities(m[1])));
}

/** Every link of a page: its name (an `<a>`'s text, else its element) and its target. */
export function pageLinks(page: string): { name: string; href: string }[] {
  const body = withoutScripts(page);
  const links: { name: string; href: string }[] = [];
  for (const m of body.matchAll(/<([a-z][\w-]*)\s(?:[^>]*?\s)?(href|src|action)="([^"]*)"[^>]*>/gi)) {
    const tag = m[1].toLowerCase();
    let name = `<${tag}>`;
    if (tag === 'a') {
      const start = (m.index ?? 0) + m[0].length;
      const end = body.indexOf('</a>', start);
      const text = decodeEntities(body.slice(start, end < 0 ? undefined : end).replace(/<[^>]*>/g, '')).replace(/\s+/g, ' ').trim();
      if (text) name = text;
    }
    links.push({ name, href: decodeEntities(m[3]) });
  }
  return links;
}

/** All files under `dir`, as site paths with `/`. */
function siteFiles(dir: string, prefix = ''): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? siteFiles(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
}

/** Why a link from `file` does not resolve in a site holding `files`, or null when it does. */
export function linkProblem(file: string, href: string, files: ReadonlySet<string>, idsOf: (sitePath: string) => Set<string>): string | null {
  if (/^(https?|mailto|data):/i.test(href)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return `the scheme ${href.slice(0, href.indexOf(':') + 1)} is not followed`;
  if (href.startsWith('//')) return 'a protocol-relative URL changes meaning under file://';
  if (href.startsWith('/')) return 'a root-absolute path changes meaning under file:// and under a sub-path';
  const hash = href.indexOf('#');
  const rawPath = (hash < 0 ? href : href.slice(0, hash)).replace(/\?.*$/, '');
  let target = file;
  if (rawPath !== '') {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath);
    } catch {
      return 'the path is not valid percent-encoding';
    }
    target = path.posix.normalize(path.posix.join(path.posix.dirname(file), decoded)).replace(/\/$/, '');
    if (target.startsWith('../') || target === '..') return `it resolves to ${target}, outside the site`;
    // A folder is served as its index.html, by static servers and by the site's own links.
    if (target === '.') target = 'index.html';
    else if (decoded.endsWith('/') || !files.has(target)) target = files.has(`${target}/index.html`) ? `${target}/index.html` : target;
    if (!files.has(target)) return `no file ${target} in the site`;
  }
  if (hash < 0 || hash === href.length - 1) return null;
  if (!target.endsWith('.html')) return null; // a fragment of a download (.ipynb) names no element
  let fragment: string;
  try {
    fragment = decodeURIComponent(href.slice(hash + 1));
  } catch {
    return 'the #fragment is not valid percent-encoding';
  }
  return idsOf(target).has(fragment) ? null : `${target} has no element with id "${fragment}"`;
}

/** Every broken link of the site in `outDir`, by page in path order. */
export function checkSiteLinks(outDir: string): BrokenLink[] {
  const files = new Set(siteFiles(outDir));
  const cache = new Map<string, Set<string>>();
  const idsOf = (sitePath: string): Set<string> => {
    let ids = cache.get(sitePath);
    if (!ids) cache.set(sitePath, (ids = pageIds(fs.readFileSync(path.join(outDir, sitePath), 'utf8'))));
    return ids;
  };
  const broken: BrokenLink[] = [];
  for (const file of [...files].filter((f) => f.endsWith('.html')).sort()) {
    for (const link of pageLinks(fs.readFileSync(path.join(outDir, file), 'utf8'))) {
      const reason = linkProblem(file, link.href, files, idsOf);
      if (reason) broken.push({ file, name: link.name, href: link.href, reason });
    }
  }
  return broken;
}

/** Throws {@link BrokenLinksError} when the site in `outDir` has a link that does not resolve. */
export function assertSiteLinks(outDir: string): void {
  const broken = checkSiteLinks(outDir);
  if (broken.length > 0) throw new BrokenLinksError(broken);
}
