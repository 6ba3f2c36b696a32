/**
 * Exports the executed notebooks (from `npm run notebooks`) to a static HTML site: an index with
 * the table of contents, one page per notebook, a search page, and the executed notebooks for
 * download.
 *
 *   npm run site [-- [--in=DIR] [--out=DIR] [--source-url=URL] [--site-url=URL] [--repo=DIR]]
 *
 * Two editions: English from `DIR` (pages at the site's root) and Chinese from `DIR/zh` (pages
 * under `zh/`, `<html lang="zh-CN">`), when that folder holds notebooks. Every page links to its
 * twin in the other edition (same file name; the other index when there is no twin). The
 * project's docs/*.md become each edition's `docs/` pages (docsPages.ts), links written as
 * repository paths are rewritten to the site's pages or the repository (repoLinks.ts), the
 * index says how to get the code (packageInfo.ts), and the export fails on any link that does
 * not resolve inside the site (linkCheck.ts).
 * The pieces live in scripts/site/: html.ts (escaping by construction), render.ts (cells and
 * outputs), plotlyBundle.ts (charts and the trace types the shipped Plotly bundle holds),
 * layout.ts (the page frame), search.ts (the search index) and the browser files site.css,
 * site.js and search.js. Every asset is local, so the site works from file:// and from any
 * static server.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Notebook } from '../notebooks/nbformat';
import { fileHref, html, trusted, type SafeHtml } from './html';
import { failureBanner, layout, runnerNote, SITE_TITLE, type LayoutArgs } from './layout';
import { pager, withSectionsAfterTitle } from './nav';
import type { ChapterPage, PageLang } from './model';
import { PLOTLY_BUNDLE } from './plotlyBundle';
import { createMarkdown, renderNotebook } from './render';
import { buildSearchIndex, searchIndexScript, searchMain } from './search';
import { liveBlocks } from './live/export';
import { fill, ui } from './strings';
import { docPageHtml, listDocs, referenceList, renderDoc, type DocPage } from './docsPages';
import { assertSiteLinks } from './linkCheck';
import { getCodeSection, readPackageInfo } from './packageInfo';
import type { SiteMap } from './repoLinks';

/** The exporter's options; each can be set from the command line. */
export interface ExportSiteArgs {
  /** Folder of executed notebooks; its `zh/` subfolder, when present, is the Chinese edition. Default `build/notebooks`. */
  inDir?: string;
  /** Folder that receives the site; it is replaced on each export. Default `build/site`. */
  outDir?: string;
  /**
   * Where the notebooks' sources are browsed, e.g. `https://github.com/o/r/blob/main/notebooks/`;
   * each page links to `<sourceUrl><name>.ipynb`. Default: the repository's `notebooks/` when
   * package.json names a repository on a known host, else none, and pages name the source path
   * (`notebooks/<name>.ipynb`) as text. The Chinese edition links to `<sourceUrl>zh/<name>.ipynb`.
   */
  sourceUrl?: string;
  /**
   * Where the site is published, e.g. `https://o.github.io/r/`: the head's hreflang links are
   * then fully qualified in the HTML itself. Default: none, and each page's head gets its
   * hreflang link from a one-line script that resolves it against the page's own URL.
   */
  siteUrl?: string;
  /**
   * The repository the notebooks come from: its docs/*.md are rendered into the site, its
   * package.json names the package (and the repository, when it names one), and the notebooks'
   * links to its other files are resolved in it. Default: this repository.
   */
  repoRoot?: string;
}

const ROOT = path.resolve(__dirname, '..', '..');
const DEFAULTS = {
  inDir: path.join(ROOT, 'build', 'notebooks'),
  outDir: path.join(ROOT, 'build', 'site'),
};
/** Marks a folder as one this exporter made, so that it may be emptied on the next export. */
const MARKER = '.tfjs-accumulate-site';

/** What the exporter wrote. */
export interface SiteReport {
  outDir: string;
  index: string;
  search: string;
  pages: { file: string; title: string; plotlyOutputs: number }[];
  /** The docs/ pages written, every edition's. */
  docs: string[];
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
  fs.mkdirSync(path.join(outDir, 'notebooks'));
  fs.writeFileSync(path.join(outDir, MARKER), 'Made by scripts/site/exportSite.ts; emptied on each export.\n');
}

function copyAssets(outDir: string): void {
  const assets = path.join(outDir, 'assets');
  fs.copyFileSync(require.resolve(PLOTLY_BUNDLE), path.join(assets, 'plotly.min.js'));
  const katexDist = path.dirname(require.resolve('katex'));
  fs.mkdirSync(path.join(assets, 'katex'));
  fs.copyFileSync(path.join(katexDist, 'katex.min.css'), path.join(assets, 'katex', 'katex.min.css'));
  fs.cpSync(path.join(katexDist, 'fonts'), path.join(assets, 'katex', 'fonts'), { recursive: true });
  for (const f of ['site.css', 'site.js', 'search.js', 'tokenizers.js']) fs.copyFileSync(path.join(__dirname, f), path.join(assets, f));
  fs.writeFileSync(path.join(outDir, 'robots.txt'), 'User-agent: *\nAllow: /\n');
}

/** One language of the site: where its notebooks are and where its pages go. */
interface Edition {
  lang: PageLang;
  /** Folder of its executed notebooks. */
  inDir: string;
  /** Its folder in the site, '' (the root) or e.g. 'zh/'. */
  dir: string;
  pages: ChapterPage[];
}

/** The editions: English from `inDir`, Chinese from `inDir/zh` when that folder holds notebooks. */
const EDITIONS: { lang: PageLang; sub: string }[] = [
  { lang: 'en', sub: '' },
  { lang: 'zh-CN', sub: 'zh/' },
];

function chapterFooter(e: Edition, i: number, sourceUrl: string | undefined): SafeHtml {
  const t = ui(e.lang);
  const p = e.pages[i];
  const src = `notebooks/${e.dir}${p.notebook}`;
  const source = sourceUrl ? html`<a href="${sourceUrl + e.dir + encodeURIComponent(p.notebook)}">${src}</a>` : html`<code>${src}</code>`;
  const download = (e.dir ? '../' : '') + fileHref(`notebooks/${e.dir}${p.notebook}`);
  return html`${pager(e.pages, i)}<p class="page-links"><a href="${download}" download>${t.download}</a> · ${t.source}: ${source}</p><p class="runner-note">${runnerNote(p)}</p>`;
}

/** A link from edition `from` to a page `file` of edition `to` (relative to `from`'s folder). */
function crossHref(from: Edition, to: Edition, file: string): string {
  return (from.dir ? '../' : '') + to.dir + fileHref(file);
}

/** The table of contents of an edition, as seen from a page in `from`. */
function toc(e: Edition, from: Edition, withSections: boolean): SafeHtml[] {
  const t = ui(e.lang);
  return e.pages.map((p) => {
    const href = crossHref(from, e, p.file);
    const badge = p.runner && p.runner.status !== 'ok' ? html` <span class="badge">${t.failedBadge}</span>` : '';
    const sections = withSections ? p.headings.filter((h) => h.level === 2) : [];
    return html`<li><a href="${href}">${p.title}</a>${badge}${withSections && p.subtitle.value ? html`<div class="subtitle">${p.subtitle}</div>` : ''}${
      sections.length ? html`<ul class="sections">${sections.map((s) => html`<li><a href="${`${href}#${encodeURIComponent(s.id)}`}">${s.text}</a></li>`)}</ul>` : ''
    }</li>\n`;
  });
}

/** An edition's notebook files, sorted; none when its folder does not exist. */
const notebookFiles = (inDir: string): string[] => (fs.existsSync(inDir) ? fs.readdirSync(inDir).filter((f) => f.endsWith('.ipynb')).sort() : []);

function readEdition(inDir: string, lang: PageLang, dir: string, md: ReturnType<typeof createMarkdown>, map: SiteMap, errors: string[]): Edition {
  const pages: ChapterPage[] = [];
  for (const f of notebookFiles(inDir)) {
    const file = path.join(inDir, f);
    try {
      const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as Notebook;
      if (nb.nbformat !== 4 || !Array.isArray(nb.cells)) throw new Error(`nbformat must be 4; got ${String(nb.nbformat)}`);
      // The executed notebook stands for its source in the repository, where its links were written.
      const links = { repoPath: `notebooks/${dir}${f}`, sitePath: `${dir}${f.replace(/\.ipynb$/, '.html')}`, editionDir: dir, map };
      pages.push(renderNotebook(file, nb, md, errors, lang, links));
    } catch (e) {
      errors.push(`${dir}${f}: ${(e as Error).message}`);
    }
  }
  return { lang, inDir, dir, pages };
}

/** What the site will hold and where the repository is, for rewriting links before any page is written. */
function siteMap(inDir: string, repoRoot: string, docs: readonly string[], repository: SiteMap['repository']): SiteMap {
  const notebooks = new Map<string, string>();
  for (const e of EDITIONS) for (const f of notebookFiles(path.join(inDir, e.sub))) notebooks.set(`notebooks/${e.sub}${f}`, `${e.sub}${f.replace(/\.ipynb$/, '.html')}`);
  const stat = (repoPath: string): 'file' | 'directory' | null => {
    const s = fs.statSync(path.join(repoRoot, repoPath), { throwIfNoEntry: false });
    return s?.isFile() ? 'file' : s?.isDirectory() ? 'directory' : null;
  };
  return { notebooks, docs: new Set(docs), stat, repository };
}

/** Exports the site. Throws with every problem found (unreadable notebooks, broken math, charts the bundle cannot draw). */
export function exportSite(args: ExportSiteArgs = {}): SiteReport {
  const inDir = path.resolve(args.inDir ?? DEFAULTS.inDir);
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  const repoRoot = path.resolve(args.repoRoot ?? ROOT);
  const pkg = readPackageInfo(path.join(repoRoot, 'package.json'));
  const docsDir = path.join(repoRoot, 'docs');
  const docNames = listDocs(docsDir);
  const map = siteMap(inDir, repoRoot, docNames, pkg.repository);
  // A notebook is a file: its page in the repository is under the host's file (blob) URL of notebooks/.
  const sourceUrl = args.sourceUrl ?? pkg.repository?.fileUrl('notebooks', false)?.concat('/') ?? undefined;
  const md = createMarkdown();
  const errors: string[] = [];
  const editions = EDITIONS.map((e) => readEdition(path.join(inDir, e.sub), e.lang, e.sub, md, map, errors)).filter((e) => e.pages.length > 0 || e.dir === '');
  const docs = new Map<Edition, DocPage[]>(editions.map((e) => [e, docNames.map((d) => renderDoc(docsDir, d, md, map, e.dir, e.lang, errors))]));
  if (editions[0].pages.length === 0) {
    throw new Error(`exportSite: no executed notebooks in ${path.relative(process.cwd(), inDir) || inDir}; run \`npm run notebooks\` first.`);
  }
  if (errors.length > 0) throw new Error(`exportSite: ${errors.length} problem(s):\n  ${errors.join('\n  ')}`);

  prepareOutDir(outDir);
  copyAssets(outDir);
  const report: SiteReport = { outDir, index: path.join(outDir, 'index.html'), search: path.join(outDir, 'search.html'), pages: [], docs: [] };
  for (const e of editions) {
    const t = ui(e.lang);
    const root = e.dir ? '../' : '';
    const other = editions.find((o) => o !== e);
    /** The same page in the other edition: the twin chapter, else the other edition's index. */
    const alternate = (file: string | undefined): LayoutArgs['alternate'] => {
      if (!other) return undefined;
      const twin = file && (file === 'search.html' || other.pages.some((p) => p.file === file)) ? file : 'index.html';
      return { lang: other.lang, href: crossHref(e, other, twin) };
    };
    const chapters = e.pages.map((p) => ({ file: p.file, title: p.title }));
    const common = { lang: e.lang, root, siteUrl: args.siteUrl };
    fs.mkdirSync(path.join(outDir, e.dir), { recursive: true });
    fs.mkdirSync(path.join(outDir, 'notebooks', e.dir), { recursive: true });
    // The "run it in your browser" blocks, in the edition's words; their scripts live once in the
    // site's assets/, which a zh/ page reaches through root.
    const live = liveBlocks(outDir, e.pages.map((p) => p.notebook), e.lang, root);
    e.pages.forEach((p, i) => {
      fs.copyFileSync(path.join(e.inDir, p.notebook), path.join(outDir, 'notebooks', e.dir, p.notebook));
      const page = layout({
        ...common,
        path: e.dir + p.file,
        alternate: alternate(p.file),
        title: `${p.title} · ${SITE_TITLE}`,
        description: p.description || fill(t.chapterDescription, { title: p.title, site: SITE_TITLE }),
        nav: { lang: e.lang, pages: chapters, current: p.file, headings: p.headings },
        main: html`${failureBanner(p)}\n${withSectionsAfterTitle(p)}${trusted(live[i])}`,
        footer: chapterFooter(e, i, sourceUrl),
        math: p.hasMath,
      });
      fs.writeFileSync(path.join(outDir, e.dir, p.file), page);
      report.pages.push({ file: path.join(outDir, e.dir, p.file), title: p.title, plotlyOutputs: p.plotlyOutputs });
    });
    const total = e.pages.reduce((s, p) => s + (p.runner?.totalMs ?? 0), 0);
    const description = t.siteDescription;
    const otherList = other
      ? html`<section lang="${other.lang}" aria-labelledby="other-edition">
<h2 id="other-edition">${ui(e.lang).otherEdition}</h2>
<ul class="toc">
${toc(other, e, false)}</ul>
</section>`
      : '';
    const index = layout({
      ...common,
      path: `${e.dir}index.html`,
      alternate: alternate('index.html'),
      title: `${SITE_TITLE}: ${t.indexTitle}`,
      description,
      nav: { lang: e.lang, pages: chapters },
      main: html`<h1>${SITE_TITLE}</h1>
<p>${description}${e.lang === 'en' ? ' ' : ''}${t.indexLead}</p>
${getCodeSection(pkg, e.lang)}<h2 id="contents">${t.contents}</h2>
<ul class="toc">
${toc(e, e, true)}</ul>
${referenceList(e, docs.get(e) ?? [])}${otherList}`,
      footer: html`<p class="runner-note">${fill(t.indexFooter, { n: e.pages.length, s: (total / 1000).toFixed(1) })}</p>`,
      math: false,
    });
    fs.writeFileSync(path.join(outDir, e.dir, 'index.html'), index);
    const indexScript = `assets/search-index${e.dir ? `.${e.lang}` : ''}.js`;
    fs.writeFileSync(path.join(outDir, indexScript), searchIndexScript(buildSearchIndex(e.pages)));
    const search = layout({
      ...common,
      path: `${e.dir}search.html`,
      alternate: alternate('search.html'),
      title: `${t.searchTitle} · ${SITE_TITLE}`,
      description: fill(t.searchDescription, { site: SITE_TITLE }),
      nav: { lang: e.lang, pages: chapters, current: 'search.html' },
      main: searchMain(e.lang),
      footer: html`<nav class="pager" aria-label="${t.pagerLabel}"><a href="index.html">${t.contents}</a></nav>`,
      math: false,
      headerSearch: false,
      scripts: [indexScript, 'assets/tokenizers.js', 'assets/search.js'],
    });
    fs.writeFileSync(path.join(outDir, e.dir, 'search.html'), search);
    const docsEdition = { lang: e.lang, dir: e.dir, chapters, other: other && { lang: other.lang, dir: other.dir }, siteUrl: args.siteUrl, repository: pkg.repository };
    for (const doc of docs.get(e) ?? []) {
      fs.mkdirSync(path.join(outDir, e.dir, 'docs'), { recursive: true });
      fs.writeFileSync(path.join(outDir, e.dir, 'docs', doc.file), docPageHtml(docsEdition, doc));
      report.docs.push(path.join(outDir, e.dir, 'docs', doc.file));
    }
  }
  // Last, over the written site: a link that does not resolve fails the export, naming its page and target.
  assertSiteLinks(outDir);
  return report;
}

function parseArgs(argv: string[]): ExportSiteArgs {
  const args: ExportSiteArgs = {};
  for (const arg of argv) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--in' && value) args.inDir = value;
    else if (flag === '--out' && value) args.outDir = value;
    else if (flag === '--source-url' && value) args.sourceUrl = value;
    else if (flag === '--site-url' && value) args.siteUrl = value.endsWith('/') ? value : `${value}/`;
    else if (flag === '--repo' && value) args.repoRoot = value;
    else throw new Error(`exportSite: unknown argument ${arg}; accepted: --in=DIR (executed notebooks), --out=DIR (the site), --source-url=URL (where notebooks/ is browsed), --site-url=URL (where the site is published), --repo=DIR (the repository whose docs/ and package.json the site uses).`);
  }
  return args;
}

function main(): void {
  try {
    const report = exportSite(parseArgs(process.argv.slice(2)));
    const figures = report.pages.reduce((s, p) => s + p.plotlyOutputs, 0);
    const zh = report.pages.filter((p) => path.basename(path.dirname(p.file)) === 'zh').length;
    console.log(`Site: ${report.pages.length - zh} English and ${zh} Chinese page(s), an index and a search page per edition, ${report.docs.length} docs page(s), ${figures} Plotly chart(s); every link resolves.`);
    console.log(`Open ${path.relative(process.cwd(), report.index) || report.index}  (file://${report.index})`);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}

if (require.main === module) main();
