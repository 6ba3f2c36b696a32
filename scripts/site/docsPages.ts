/**
 * The project's reference documentation (docs/*.md) as pages of the site. The chapters link to
 * it (`../docs/guarantees.md#limits`), and those links must land somewhere on a published site
 * that holds no repository. Each edition gets its own copy under `<edition>/docs/`, so that a
 * reader of the Chinese edition keeps the Chinese chrome (sidebar, header, search) around a page
 * that is written in English only, and says so.
 *
 * The markdown goes through the chapters' markdown-it (render.ts): raw HTML shown as text, the
 * same heading ids and permalinks, KaTeX, scroll boxes; links are rewritten by repoLinks.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type MarkdownIt from 'markdown-it';
import { fileHref, html, trusted, type SafeHtml } from './html';
import { layout, SITE_TITLE } from './layout';
import type { ChapterPage, Heading, PageLang } from './model';
import { withSectionsAfterTitle } from './nav';
import type { Repository } from './packageInfo';
import type { LinkContext, SiteMap } from './repoLinks';
import { fill, fillHtml, ui } from './strings';

/** A docs/ file rendered for one edition, before it is laid out. */
export interface DocPage {
  /** The file in docs/, e.g. `guarantees.md`. */
  source: string;
  /** Its page in the edition's `docs/` folder, e.g. `guarantees.html`. */
  file: string;
  /** The first `#` heading, else the file's name. */
  title: string;
  headings: Heading[];
  body: SafeHtml;
  hasMath: boolean;
}

/** The markdown files of `docsDir`, sorted; none when the folder does not exist. */
export function listDocs(docsDir: string): string[] {
  return fs.existsSync(docsDir) ? fs.readdirSync(docsDir).filter((f) => f.endsWith('.md')).sort() : [];
}

/** The site path of a docs page in an edition (`zh/docs/guarantees.html`). */
export const docSitePath = (editionDir: string, source: string): string => `${editionDir}docs/${source.replace(/\.md$/, '.html')}`;

/** Renders one docs/ file for the edition in `editionDir`. Broken math goes to `errors`. */
export function renderDoc(docsDir: string, source: string, md: MarkdownIt, map: SiteMap, editionDir: string, lang: PageLang, errors: string[]): DocPage {
  const links: LinkContext = { repoPath: `docs/${source}`, sitePath: docSitePath(editionDir, source), editionDir, map };
  // The permalinks' labels are in the page's chrome language: they belong to the site, not to the text.
  const env: { ui: ReturnType<typeof ui>; links: LinkContext; headings?: Heading[] } = { ui: ui(lang), links };
  const rendered = md.render(fs.readFileSync(path.join(docsDir, source), 'utf8'), env);
  if (rendered.includes('katex-error')) errors.push(`docs/${source}: KaTeX cannot render the math ${/title="([^"]*)"/.exec(rendered.slice(rendered.indexOf('katex-error')))?.[1] ?? ''}`);
  const headings = env.headings ?? [];
  return {
    source,
    file: source.replace(/\.md$/, '.html'),
    title: headings.find((h) => h.level === 1)?.text ?? source,
    headings,
    body: trusted(rendered),
    hasMath: rendered.includes('class="katex'),
  };
}

/** What a docs page's frame needs from its edition. */
export interface DocsEdition {
  lang: PageLang;
  /** The edition's folder in the site: `''` or `zh/`. */
  dir: string;
  /** The edition's chapters, for the sidebar. */
  chapters: readonly Pick<ChapterPage, 'file' | 'title'>[];
  /** The other edition, for the language link: its language and folder. */
  other?: { lang: PageLang; dir: string };
  siteUrl?: string;
  repository: Repository | null;
}

/** The footer of a docs page: back to the contents, and the page's source file. */
function docFooter(e: DocsEdition, doc: DocPage): SafeHtml {
  const t = ui(e.lang);
  const src = `docs/${doc.source}`;
  const url = e.repository?.fileUrl(src, false);
  return html`<nav class="pager" aria-label="${t.pagerLabel}"><a href="../index.html#reference">${t.reference}</a><a href="../index.html">${t.contents}</a></nav><p class="page-links">${t.source}: ${url ? html`<a href="${url}">${src}</a>` : html`<code>${src}</code>`}</p>`;
}

/** Lays out a docs page of edition `e` into the site's HTML. */
export function docPageHtml(e: DocsEdition, doc: DocPage): string {
  const t = ui(e.lang);
  const sitePath = docSitePath(e.dir, doc.source);
  const from = path.posix.dirname(sitePath);
  const alternate = e.other ? { lang: e.other.lang, href: path.posix.relative(from, docSitePath(e.other.dir, doc.source)) } : undefined;
  const body = withSectionsAfterTitle({ lang: e.lang, headings: doc.headings, body: doc.body });
  // Styled as a chapter's prose. The text is English in every edition; its lang tells screen
  // readers and hyphenation so, and a Chinese reader is told before the first line.
  const main =
    e.lang === 'en'
      ? html`<section class="markdown-cell doc">${body}</section>`
      : html`<p class="doc-note">${t.docsInEnglish}</p>\n<section class="markdown-cell doc" lang="en">${body}</section>`;
  return layout({
    lang: e.lang,
    root: e.dir ? '../../' : '../',
    base: '../',
    siteUrl: e.siteUrl,
    path: sitePath,
    alternate,
    title: `${doc.title} · ${SITE_TITLE}`,
    description: fill(t.docDescription, { title: doc.title, site: SITE_TITLE }),
    nav: { lang: e.lang, pages: e.chapters, current: `docs/${doc.file}`, base: '../' },
    main,
    footer: docFooter(e, doc),
    math: doc.hasMath,
  });
}

/** The index's list of an edition's docs pages (relative to the edition's folder). */
export function referenceList(e: { lang: PageLang }, docs: readonly DocPage[]): SafeHtml {
  if (docs.length === 0) return html``;
  const t = ui(e.lang);
  const items = docs.map((d) => html`<li><a href="${`docs/${fileHref(d.file)}`}">${d.title}</a></li>\n`);
  return html`<h2 id="reference">${t.reference}</h2>
<p>${fillHtml(t.referenceLead, { docs: html`<code>docs/</code>` })}</p>
<ul class="toc reference"${e.lang === 'en' ? '' : html` lang="en"`}>
${items}</ul>
`;
}
