/**
 * Keeps each translated notebook running its English twin's program.
 *
 *   npm run notebooks:sync [-- [--check] [--create] [--prose-reviewed] [--lang=zh]]
 *
 * A translated notebook (`notebooks/zh/NN-name.ipynb`) owns its markdown cells; its code cells
 * are generated: the English twin's code with every comment and message replaced from the
 * edition's table, `notebooks/zh/translations.json` (English text → translated text). So when
 * an English chapter changes, this program rewrites the code cells and the translator only
 * writes prose for what is new:
 *
 * - code cells are paired by their program tokens (scripts/translation/programTokens.ts): an
 *   unchanged cell keeps its place between the translated prose; in a run of changed cells the
 *   pairs are taken in order; a new English cell goes after its predecessor's twin, a removed
 *   one disappears;
 * - comments and messages with no entry in the table stay in English and are listed, so the
 *   program is always the same, and a missing translation is visible, never wrong.
 *
 * Prose cannot be synced, only flagged: each translated notebook records a short hash of every
 * English markdown cell it was translated from (metadata `translation.english_prose`), and the
 * sync lists the English cells added or edited since. `--prose-reviewed` records the current
 * English prose once the Chinese prose says the same again.
 *
 * `--check` writes nothing and exits with 1 when a notebook's code is out of date (the unit
 * tests run the same check; changed English prose is reported, not failed). `--create` starts a twin for an English chapter that has none, from a copy
 * of the English prose that the translator then replaces.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { programTokens, tokenize, isProgramValue, type Token } from './programTokens';

/** The program's options; each can be set from the command line. */
export interface SyncNotebooksArgs {
  /** The edition: the folder under `notebooks/` and the table in it. Default `zh`. */
  lang?: string;
  /** Report what would change and write nothing. Default false. */
  check?: boolean;
  /** Start a translated twin for an English chapter that has none. Default false. */
  create?: boolean;
  /**
   * Record the English prose as translated: the translator has brought the Chinese prose up to
   * date with the English markdown cells reported as changed. Default false.
   */
  proseReviewed?: boolean;
}

const ROOT = path.resolve(__dirname, '..', '..');
const CONFIG = {
  english: path.join(ROOT, 'notebooks'),
  lang: 'zh',
  /** The table's file name, inside the edition's folder. */
  table: 'translations.json',
};

/** English comment or message text → its translation. A `\n` in a comment splits its lines. */
export type Translations = Record<string, string>;

/** The parts of nbformat 4 this program reads and writes. */
export interface NotebookCell {
  cell_type: 'code' | 'markdown' | 'raw';
  id?: string;
  metadata: Record<string, unknown>;
  source: string | string[];
  outputs?: unknown[];
  execution_count?: number | null;
}
export interface Notebook {
  cells: NotebookCell[];
  metadata: Record<string, unknown>;
  nbformat: number;
  nbformat_minor: number;
}

export const cellText = (cell: NotebookCell): string => (Array.isArray(cell.source) ? cell.source.join('') : cell.source);
const toSource = (text: string): string[] => text.split(/(?<=\n)/);

/**
 * The English code with each comment and message replaced by its entry in `table`. Returns the
 * new code and the English texts that have no entry (they are left as they are).
 */
export function translateCode(code: string, table: Translations): { code: string; untranslated: string[]; used: string[] } {
  const tokens = tokenize(code);
  const edits: { start: number; end: number; text: string }[] = [];
  const untranslated: string[] = [];
  const used: string[] = [];
  const lookup = (key: string): string | undefined => {
    if (!Object.prototype.hasOwnProperty.call(table, key)) return undefined;
    used.push(key);
    return table[key];
  };

  for (const run of commentRuns(code, tokens)) {
    const key = run.map((c) => c.content).join(' ');
    const value = lookup(key);
    if (value === undefined) {
      if (/[A-Za-z]/.test(key)) untranslated.push(key);
      continue;
    }
    const first = run[0];
    const indent = /[ \t]*$/.exec(code.slice(0, first.start))![0];
    const block = first.text.startsWith('/*');
    if (block && value.includes('*/')) throw new Error(`translation of the comment "${key}" may not contain "*/"`);
    const text = block ? `/* ${value} */` : value.split('\n').map((line) => `// ${line}`.trimEnd()).join(`\n${run[0].trailing ? '' : indent}`);
    edits.push({ start: first.start, end: run[run.length - 1].end, text });
  }

  for (const t of tokens.filter((t) => t.kind === 'string')) {
    const value = isProgramValue(t.content!) ? undefined : lookup(t.content!);
    if (value === undefined) {
      if (!isProgramValue(t.content!) && /[A-Za-z]/.test(t.content!)) untranslated.push(t.content!);
      continue;
    }
    const quote = t.text[0];
    if (value.includes(quote) || value.includes('\n')) throw new Error(`translation of ${t.text} may not contain ${quote} or a line break`);
    edits.push({ start: t.start, end: t.end, text: `${quote}${value}${quote}` });
  }

  const literals = new Map<number, Token[]>();
  for (const t of tokens.filter((t) => t.kind === 'template')) literals.set(t.literal!, [...(literals.get(t.literal!) ?? []), t]);
  for (const parts of literals.values()) {
    const key = parts.map((p) => p.content).join('${}');
    const value = lookup(key);
    if (value === undefined) {
      if (/[A-Za-z]{2}/.test(parts.map((p) => p.content).join(' '))) untranslated.push(key);
      continue;
    }
    const pieces = value.split('${}');
    if (pieces.length !== parts.length || pieces.some((p) => p.includes('`') || p.includes('${'))) {
      throw new Error(`translation of the template "${key}" must keep its ${parts.length - 1} \${} placeholders in order, and contain no \` or other \${`);
    }
    parts.forEach((p, i) => {
      const open = p.text[0];
      const close = p.text.endsWith('${') ? '${' : p.text[p.text.length - 1];
      edits.push({ start: p.start, end: p.end, text: `${open}${pieces[i]}${close}` });
    });
  }

  edits.sort((a, b) => b.start - a.start);
  let out = code;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return { code: out, untranslated, used };
}

/**
 * Comments grouped as a reader sees them: consecutive `//` lines at one indentation form one
 * comment (translated as a whole, since a sentence's line breaks do not survive translation);
 * a trailing comment or a block comment stands alone.
 */
function commentRuns(code: string, tokens: Token[]): Token[][] {
  const runs: Token[][] = [];
  let previous: Token | undefined;
  for (const t of tokens) {
    const run = runs[runs.length - 1];
    const continues =
      t.kind === 'comment' &&
      previous?.kind === 'comment' &&
      !t.trailing &&
      !previous.trailing &&
      t.text.startsWith('//') &&
      previous.text.startsWith('//') &&
      /^[ \t]*\n[ \t]*$/.test(code.slice(previous.end, t.start)) &&
      column(code, t.start) === column(code, run[0].start);
    if (continues) run.push(t);
    else if (t.kind === 'comment') runs.push([t]);
    previous = t;
  }
  return runs;
}

const column = (code: string, at: number): number => at - (code.lastIndexOf('\n', at - 1) + 1);

/**
 * Pairs translated code cells with English ones, in order: equal programs first (longest common
 * subsequence), then the cells between two such anchors pairwise. Returns, per translated code
 * cell, the index of its English twin or -1 when it has none.
 */
export function pairCells(english: string[], translated: string[]): number[] {
  const key = (code: string) => programTokens(code).join(' ');
  const a = english.map(key);
  const b = translated.map(key);
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const anchors: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i] === b[j]) anchors.push([i++, j++]);
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) i++;
    else j++;
  }
  const pairs = new Array<number>(b.length).fill(-1);
  let [i0, j0] = [0, 0];
  for (const [i, j] of [...anchors, [a.length, b.length] as [number, number]]) {
    for (let k = 0; k < Math.min(i - i0, j - j0); k++) pairs[j0 + k] = i0 + k; // changed cells, in order
    if (j < b.length) pairs[j] = i;
    [i0, j0] = [i + 1, j + 1];
  }
  return pairs;
}

/** What syncing one notebook did. */
export interface SyncReport {
  notebook: Notebook;
  /** English code cells (0-based among code cells) that had no twin and were inserted. */
  inserted: number[];
  /** Translated code cells that had no English twin and were removed. */
  removed: number;
  untranslated: string[];
  /** English markdown cells (0-based among all cells) added or edited since the prose was last reviewed. */
  proseChanged: number[];
}

/** Short hashes of a notebook's markdown cells, in order: what its translation was made from. */
export function proseHashes(notebook: Notebook): string[] {
  return notebook.cells.filter((c) => c.cell_type === 'markdown').map((c) => createHash('sha256').update(cellText(c)).digest('hex').slice(0, 12));
}

/** The translated notebook with its code cells regenerated from the English twin. */
export function syncNotebook(english: Notebook, translated: Notebook, table: Translations, idPrefix: string, proseReviewed = false): SyncReport {
  const englishCode = english.cells.filter((c) => c.cell_type === 'code');
  const translatedCode = translated.cells.filter((c) => c.cell_type === 'code');
  const pairs = pairCells(englishCode.map(cellText), translatedCode.map(cellText));
  const untranslated: string[] = [];
  const codeCell = (i: number, base?: NotebookCell): NotebookCell => {
    const { code, untranslated: missing } = translateCode(cellText(englishCode[i]), table);
    untranslated.push(...missing);
    // The cell's tags (`remove-input`, `hide-input`) are part of the program's presentation, so
    // they follow the English cell; any other metadata of the translated cell is kept.
    const tags = (englishCode[i].metadata as { tags?: unknown } | undefined)?.tags;
    const { tags: _old, ...kept } = (base?.metadata ?? {}) as Record<string, unknown>;
    const metadata = Array.isArray(tags) && tags.length > 0 ? { ...kept, tags: [...tags] } : kept;
    return { cell_type: 'code', execution_count: null, id: '', metadata, outputs: [], source: toSource(code) };
  };

  const cells: NotebookCell[] = [];
  const inserted: number[] = [];
  let removed = 0;
  let next = 0; // the next English code cell to place
  let lastCode = -1; // where in `cells` the last code cell went
  const insertUpTo = (end: number) => {
    for (; next < end; next++) {
      cells.splice(lastCode + 1, 0, codeCell(next));
      inserted.push(next);
      lastCode++;
    }
  };
  let k = 0;
  for (const cell of translated.cells) {
    if (cell.cell_type !== 'code') {
      cells.push({ ...cell });
      continue;
    }
    const twin = pairs[k++];
    if (twin < 0) {
      removed++;
      continue;
    }
    insertUpTo(twin);
    cells.push(codeCell(twin, cell));
    lastCode = cells.length - 1;
    next = twin + 1;
  }
  insertUpTo(englishCode.length);
  cells.forEach((c, i) => (c.id = `${idPrefix}-${String(i).padStart(2, '0')}`));

  const hashes = proseHashes(english);
  const record = (translated.metadata.translation ?? {}) as { english_prose?: string[] };
  const known = new Set(proseReviewed ? hashes : (record.english_prose ?? []));
  const markdown = english.cells.flatMap((c, i) => (c.cell_type === 'markdown' ? [i] : []));
  const proseChanged = markdown.filter((_, k) => !known.has(hashes[k]));
  const metadata = proseReviewed ? { ...translated.metadata, translation: { ...record, english_prose: hashes } } : translated.metadata;
  return { notebook: { ...translated, metadata, cells }, inserted, removed, untranslated: [...new Set(untranslated)], proseChanged };
}

/** Notebook JSON as Jupyter writes it: sorted keys, one-space indent, text unescaped. */
export function formatNotebook(notebook: Notebook): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sorted) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])])) : v;
  return `${JSON.stringify(sorted(notebook), null, 1)}\n`;
}

/** A first translated twin: the English chapter, prose and all, for the translator to rewrite. */
function startTwin(english: Notebook): Notebook {
  return { ...english, cells: english.cells.map((c) => ({ ...c })) };
}

/**
 * The translated notebook, among those without an English chapter of their name, that an
 * English chapter was renamed from: the one sharing the most code cells with it, at least half.
 */
export function formerName(english: Notebook, candidates: [string, Notebook][]): string | undefined {
  const programs = (nb: Notebook) => nb.cells.filter((c) => c.cell_type === 'code').map((c) => programTokens(cellText(c)).join(' '));
  const wanted = programs(english);
  let best: { name: string; shared: number } | undefined;
  for (const [name, nb] of candidates) {
    const have = new Set(programs(nb));
    const shared = wanted.filter((p) => have.has(p)).length;
    if (shared * 2 >= wanted.length && shared > (best?.shared ?? 0)) best = { name, shared };
  }
  return best?.name;
}

/** Syncs every translated notebook of an edition; returns the files that are (or were) out of date. */
export function syncEdition(args: SyncNotebooksArgs = {}, log: (line: string) => void = console.log): string[] {
  const lang = args.lang ?? CONFIG.lang;
  const folder = path.join(CONFIG.english, lang);
  const table = JSON.parse(fs.readFileSync(path.join(folder, CONFIG.table), 'utf8')) as Translations;
  const stale: string[] = [];
  const used = new Set<string>();
  const names = fs.readdirSync(CONFIG.english).filter((f) => f.endsWith('.ipynb')).sort();
  const orphans = fs.readdirSync(folder).filter((f) => f.endsWith('.ipynb') && !names.includes(f));
  for (const name of names) {
    const file = path.join(folder, name);
    const english = JSON.parse(fs.readFileSync(path.join(CONFIG.english, name), 'utf8')) as Notebook;
    const renamed = fs.existsSync(file) ? undefined : formerName(english, orphans.map((o) => [o, JSON.parse(fs.readFileSync(path.join(folder, o), 'utf8')) as Notebook]));
    if (renamed) {
      log(`${lang}/${name}: the English chapter was ${lang}/${renamed}'s twin; ${args.check ? 'rename it' : 'renamed'} (fix the title's number and chapter references by hand)`);
      stale.push(file);
      if (args.check) continue;
      fs.renameSync(path.join(folder, renamed), file);
      orphans.splice(orphans.indexOf(renamed), 1);
    }
    if (!fs.existsSync(file) && !args.create) {
      log(`${lang}/${name}: missing (run with --create to start it from the English chapter)`);
      stale.push(file);
      continue;
    }
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : formatNotebook(startTwin(english));
    const report = syncNotebook(english, JSON.parse(current) as Notebook, table, `${name.slice(0, 2)}-${lang}`, args.proseReviewed || !fs.existsSync(file));
    for (const c of english.cells) if (c.cell_type === 'code') for (const key of translateCode(cellText(c), table).used) used.add(key);
    const text = formatNotebook(report.notebook);
    const notes = [
      report.inserted.length ? `inserted English code cell(s) ${report.inserted.map((i) => i + 1).join(', ')}: write their prose` : '',
      report.removed ? `removed ${report.removed} code cell(s) the English chapter no longer has` : '',
      report.proseChanged.length
        ? `English prose added or edited since the translation (then run with --prose-reviewed):\n${report.proseChanged.map((i) => `    cell ${i + 1}: ${JSON.stringify(cellText(english.cells[i]).split('\n')[0].slice(0, 80))}`).join('\n')}`
        : '',
      report.untranslated.length ? `${report.untranslated.length} text(s) left in English:\n${report.untranslated.map((u) => `    ${JSON.stringify(u)}`).join('\n')}` : '',
    ].filter(Boolean);
    if (text !== current) {
      stale.push(file);
      if (!args.check) fs.writeFileSync(file, text);
    }
    log(`${lang}/${name}: ${text === current ? 'in sync' : args.check ? 'OUT OF DATE' : 'updated'}${notes.length ? `; ${notes.join('; ')}` : ''}`);
  }
  for (const o of orphans) {
    log(`${lang}/${o}: no English chapter of that name; delete it if the chapter is gone`);
    stale.push(path.join(folder, o));
  }
  const unused = Object.keys(table).filter((k) => !used.has(k));
  if (unused.length) log(`${lang}/${CONFIG.table}: ${unused.length} entr(ies) no English cell uses any more:\n${unused.map((u) => `    ${JSON.stringify(u)}`).join('\n')}`);
  return stale;
}

function parseArgs(argv: string[]): SyncNotebooksArgs {
  const args: SyncNotebooksArgs = {};
  for (const arg of argv) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--check') args.check = true;
    else if (flag === '--create') args.create = true;
    else if (flag === '--prose-reviewed') args.proseReviewed = true;
    else if (flag === '--lang' && value && /^[a-z]{2}(-[A-Za-z]+)?$/.test(value)) args.lang = value;
    else throw new Error(`syncNotebooks: unknown option ${arg}; accepted: --check, --create, --prose-reviewed, --lang=CODE (a folder under notebooks/, e.g. --lang=zh).`);
  }
  return args;
}

if (require.main === module) {
  let args: SyncNotebooksArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  const stale = syncEdition(args);
  if (args.check && stale.length > 0) {
    console.error(`\n${stale.length} translated notebook(s) out of date: run \`npm run notebooks:sync\`.`);
    process.exit(1);
  }
}
