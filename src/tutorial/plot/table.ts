/**
 * Showing a table: rows of records as a real HTML table (Jupyter and the site) and as aligned
 * plain text (terminals, logs), in one display bundle. Notebooks use it instead of
 * `console.table`, whose box-drawing text reads poorly outside a terminal.
 */

import { argumentError, checkOptions, isPositiveInteger } from '../../core/errors';
import { formatNumber } from './format';
import { requireKernelPublisher } from './kernel';
import { resolveLocale, translator, type DisplayLocale } from './locale';

/** One row: column name → value. Columns follow the order in which keys first appear. */
export type TableRow = Record<string, unknown>;

/** Options of {@link tableBundle} and {@link showTable}. */
export interface TableArgs {
  /** A caption above the table, saying what it shows. Default: none. */
  caption?: string;
  /**
   * Significant digits of a number cell that is not an integer (see `formatNumber`):
   * `0.0056086006713084585` shows as `0.00561`. `null` prints numbers as JavaScript does.
   * Default 3. Strings are shown as they are, so a cell formatted by the caller stays so.
   */
  digits?: number | null;
  /**
   * The unit of a column's numbers, by column name (`{ window: 'ms' }`), written after the
   * header: `window (ms)`. Default: none.
   */
  units?: Record<string, string>;
  /**
   * The language of the headers and the caption, and of cells the locale's table knows
   * (`'yes'`, a normalization's name); see `activeLocale`. Outside `en`, a header or caption
   * that looks English and has no translation throws `MissingTranslationError`. Default: the
   * active locale.
   */
  locale?: DisplayLocale;
}

const TABLE_KEYS = ['caption', 'digits', 'units', 'locale'] as const;

/** The display bundle of a table. */
export interface TableBundle {
  data: { 'text/html': string; 'text/plain': string };
  metadata: Record<string, unknown>;
}

const htmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** How many terminal columns a text takes: two for each CJK or full-width character, one for the rest. */
function columnsOf(text: string): number {
  let n = 0;
  for (const c of text) n += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(c) ? 2 : 1;
  return n;
}

/** A cell as text: strings as they are, numbers to `digits` significant digits, booleans as JavaScript prints them, the rest as JSON. */
function cellText(v: unknown, digits: number | null): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return digits === null ? String(v) : formatNumber(v, { digits });
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? String(v);
}

function checkRows(owner: string, rows: unknown): asserts rows is TableRow[] {
  const isRecord = (r: unknown): boolean => typeof r === 'object' && r !== null && !Array.isArray(r);
  if (!Array.isArray(rows) || rows.length === 0 || !rows.every(isRecord)) {
    throw argumentError(owner, 'rows', 'a non-empty array of objects (one per row, column name → value)', rows);
  }
}

/** Turns rows into a display bundle: `text/html` (a table with a header row) and `text/plain`. */
export function tableBundle(rows: TableRow[], args: TableArgs = {}): TableBundle {
  return tableBundleOf('tableBundle', rows, args);
}

function tableBundleOf(owner: string, rows: TableRow[], tableArgs: TableArgs): TableBundle {
  checkRows(owner, rows);
  const args = checkOptions<TableArgs>(owner, 'args', tableArgs, TABLE_KEYS);
  const digits = args.digits === undefined ? 3 : args.digits;
  if (digits !== null && !(isPositiveInteger(digits) && digits <= 17)) throw argumentError(owner, 'digits', 'an integer from 1 to 17, or null for numbers as JavaScript prints them', digits);
  const units = args.units ?? {};
  if (typeof units !== 'object' || Object.values(units).some((u) => typeof u !== 'string')) throw argumentError(owner, 'units', 'an object of column name → unit string', units);
  const tr = translator(owner, resolveLocale(owner, args.locale));
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const unknownUnit = Object.keys(units).find((c) => !keys.includes(c));
  if (unknownUnit !== undefined) throw argumentError(owner, 'units', `keyed by the table's columns (${keys.map((k) => JSON.stringify(k)).join(', ')})`, unknownUnit);
  const columns = keys.map((c) => (units[c] ? `${tr.text(c)} (${units[c]})` : tr.text(c)));
  const caption = args.caption === undefined ? undefined : tr.text(args.caption);
  tr.check();
  // Strings and booleans a reader reads (`'yes'`, `true`) are translated when the table knows them.
  const cells = rows.map((r) => keys.map((c) => (typeof r[c] === 'string' || typeof r[c] === 'boolean' ? tr.value(String(r[c])) : cellText(r[c], digits))));
  const numeric = keys.map((c) => rows.every((r) => r[c] === undefined || typeof r[c] === 'number' || (typeof r[c] === 'string' && /^[-+]?\d[\d.,eE+-]*\s*[%×x]?$/.test(r[c] as string))));
  const align = (j: number): string => (numeric[j] ? ' style="text-align:right"' : '');
  const html =
    '<table class="tfjs-accumulate-table">' +
    (caption ? `<caption>${htmlEscape(caption)}</caption>` : '') +
    `<thead><tr>${columns.map((c, j) => `<th scope="col"${align(j)}>${htmlEscape(c)}</th>`).join('')}</tr></thead>` +
    `<tbody>${cells.map((row) => `<tr>${row.map((v, j) => `<td${align(j)}>${htmlEscape(v)}</td>`).join('')}</tr>`).join('')}</tbody>` +
    '</table>';
  const widths = columns.map((c, j) => Math.max(columnsOf(c), ...cells.map((row) => columnsOf(row[j]))));
  const pad = (v: string, j: number): string => (numeric[j] ? ' '.repeat(widths[j] - columnsOf(v)) + v : v + ' '.repeat(widths[j] - columnsOf(v)));
  const line = (values: string[]): string => values.map(pad).join('  ').trimEnd();
  const plain = [...(caption ? [caption] : []), line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
  return { data: { 'text/html': html, 'text/plain': plain }, metadata: {} };
}

/**
 * Shows rows as a table in the current notebook cell (see {@link tableBundle}). Works in a cell
 * run by the tslab or the Deno kernel; throws anywhere else. Like {@link showFigure}, it returns
 * a promise to await under Deno.
 */
export function showTable(rows: TableRow[], args: TableArgs = {}): Promise<void> {
  checkRows('showTable', rows);
  const bundle = tableBundleOf('showTable', rows, args);
  const publish = requireKernelPublisher('showTable', 'tableBundle(rows) to get the display bundle');
  return publish(bundle);
}
