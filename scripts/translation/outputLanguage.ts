/**
 * English left in the outputs of an executed Chinese notebook: the texts a reader must be able
 * to read (chart titles, axis titles, legend names, category labels, table headers and
 * captions) that look English (`looksEnglish`: a Latin word and no Chinese character) and
 * that the zh display table does not keep on purpose (an entry mapping a name such as `CNN`
 * to itself).
 *
 * The display layer already refuses such texts in a zh run (src/tutorial/plot/locale.ts); this
 * check reads the executed copies themselves (build/notebooks/zh/, written by
 * `npm run notebooks`), so it also catches an output that did not go through the display layer.
 *
 *   node --import tsx scripts/translation/outputLanguage.ts [build/notebooks/zh]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { looksEnglish, translateText } from '../../src/tutorial/index';

/** One English text in an output. */
export interface EnglishOutput {
  /** 1-based position of the code cell among all cells. */
  cell: number;
  /** What the text is: `title`, `xaxis title`, `legend`, `category`, `table header`, `caption`. */
  where: string;
  text: string;
}

/** An executed notebook, as far as the output checks read it. */
export interface NotebookJson {
  cells: { cell_type: string; outputs?: { output_type: string; text?: string | string[]; data?: Record<string, unknown> }[] }[];
}

const PLOTLY_MIME = 'application/vnd.plotly.v1+json';

const titleOf = (t: unknown): string | undefined =>
  typeof t === 'string' ? t : t && typeof t === 'object' && typeof (t as { text?: unknown }).text === 'string' ? (t as { text: string }).text : undefined;

const decode = (s: string): string =>
  s
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** The reader-facing texts of one Plotly figure, each with what it is. */
function figureTexts(fig: { data?: { name?: unknown; x?: unknown[] }[]; layout?: Record<string, unknown> }): [string, string][] {
  const out: [string, string][] = [];
  const layout = fig.layout ?? {};
  const add = (where: string, t: unknown) => {
    const text = titleOf(t);
    if (text) out.push([where, text]);
  };
  add('title', layout.title);
  for (const key of Object.keys(layout).filter((k) => /^[xy]axis\d*$/.test(k))) add(`${key} title`, (layout[key] as { title?: unknown } | undefined)?.title);
  add('legend title', (layout.legend as { title?: unknown } | undefined)?.title);
  for (const t of fig.data ?? []) {
    add('legend', t.name);
    for (const v of t.x ?? []) if (typeof v === 'string') out.push(['category', v]);
  }
  return out;
}

/** Every reader-facing text of the notebook's outputs that looks English. */
export function englishInOutputs(notebook: NotebookJson): EnglishOutput[] {
  const found: EnglishOutput[] = [];
  notebook.cells.forEach((cell, i) => {
    for (const output of cell.outputs ?? []) {
      const data = output.data ?? {};
      const texts: [string, string][] = [];
      if (data[PLOTLY_MIME] && typeof data[PLOTLY_MIME] === 'object') texts.push(...figureTexts(data[PLOTLY_MIME] as never));
      const html = Array.isArray(data['text/html']) ? (data['text/html'] as string[]).join('') : data['text/html'];
      if (typeof html === 'string' && html.includes('<table')) {
        for (const m of html.matchAll(/<th\b[^>]*>([\s\S]*?)<\/th>/g)) texts.push(['table header', decode(m[1])]);
        for (const m of html.matchAll(/<caption\b[^>]*>([\s\S]*?)<\/caption>/g)) texts.push(['caption', decode(m[1])]);
      }
      const seen = new Set<string>();
      for (const [where, text] of texts) {
        if (!looksEnglish(text) || translateText(text, 'zh') === text || seen.has(`${where}\n${text}`)) continue;
        seen.add(`${where}\n${text}`);
        found.push({ cell: i + 1, where, text });
      }
    }
  });
  return found;
}

/** The executed notebooks of a folder, by file name. */
export function executedNotebooks(folder: string): string[] {
  return fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => f.endsWith('.ipynb')).sort().map((f) => path.join(folder, f)) : [];
}

/**
 * The command line of a check over the executed Chinese notebooks (this file's and
 * outputSpacing.ts): reads the folder given (default build/notebooks/zh), prints each finding,
 * and exits 1 if there is one, 2 if there is no executed notebook.
 */
export function checkExecutedNotebooks(find: (nb: NotebookJson) => { cell: number; where: string; text: string }[], noun: [one: string, many: string], argv: string[] = process.argv): never {
  const folder = path.resolve(argv[2] ?? path.join(__dirname, '..', '..', 'build', 'notebooks', 'zh'));
  const files = executedNotebooks(folder);
  if (files.length === 0) {
    console.error(`${folder}: no executed notebooks; run npm run notebooks -- notebooks/zh first.`);
    process.exit(2);
  }
  let count = 0;
  for (const file of files) {
    for (const f of find(JSON.parse(fs.readFileSync(file, 'utf8')) as NotebookJson)) {
      count++;
      console.log(`${path.basename(file)} cell ${f.cell}, ${f.where}: ${JSON.stringify(f.text)}`);
    }
  }
  console.log(`${count} ${count === 1 ? noun[0] : noun[1]} in ${files.length} executed notebooks of ${folder}`);
  process.exit(count ? 1 : 0);
}

if (require.main === module) checkExecutedNotebooks(englishInOutputs, ['English text', 'English texts']);
