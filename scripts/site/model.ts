/**
 * The site's page model: what the exporter knows about each page before it is laid out. Pages
 * carry a `lang` so that translated pages (hreflang links, a language switch) can join later
 * without changing the model's shape.
 */
import type { SafeHtml } from './html';

/** A language tag as in `<html lang>`; only English pages exist today. */
export type PageLang = 'en' | (string & {});

/** A heading on a page, for "On this page" and the index. */
export interface Heading {
  level: number;
  id: string;
  text: string;
}

/** What the runner recorded about a notebook (metadata, so it is validated before use). */
export interface RunnerSummary {
  status: 'ok' | 'failed' | 'other';
  executedCells: number | null;
  codeCells: number | null;
  totalMs: number | null;
  executedAt: string | null;
  error: { cell: number | null; kind: string } | null;
}

/** One piece of searchable text, scoped to the section it appears in. */
export interface SearchEntry {
  /** What the text is: prose (markdown), code (a cell's source) or an output. */
  kind: 'prose' | 'code' | 'output';
  /** The section's id on its page (a heading id or `cell-N`). */
  section: string;
  /** The section's heading, shown in results. */
  sectionTitle: string;
  text: string;
}

/** A chapter page, rendered but not yet laid out. */
export interface ChapterPage {
  lang: PageLang;
  /** The executed notebook's file name, e.g. `03-accumulation.ipynb`. */
  notebook: string;
  /** The page's file name in the site, e.g. `03-accumulation.html`. */
  file: string;
  title: string;
  /** The first prose line under the title, rendered inline. */
  subtitle: SafeHtml;
  /** The subtitle as plain text, for `<meta name="description">`. */
  description: string;
  headings: Heading[];
  body: SafeHtml;
  plotlyOutputs: number;
  /** Whether the page holds KaTeX math, so that its stylesheet is loaded only where needed. */
  hasMath: boolean;
  runner: RunnerSummary | null;
  search: SearchEntry[];
}
