/**
 * Showing a table: rows of records as a real HTML table (Jupyter and the site) and as aligned
 * plain text (terminals, logs), in one display bundle. Notebooks use it instead of
 * `console.table`, whose box-drawing text reads poorly outside a terminal.
 */

import { argumentError } from '../../core/errors';
import { requireKernelPublisher } from './kernel';

/** One row: column name → value. Columns follow the order in which keys first appear. */
export type TableRow = Record<string, unknown>;

/** Options of {@link tableBundle} and {@link showTable}. */
export interface TableArgs {
  /** A caption above the table, saying what it shows. Default: none. */
  caption?: string;
}

/** The display bundle of a table. */
export interface TableBundle {
  data: { 'text/html': string; 'text/plain': string };
  metadata: Record<string, unknown>;
}

const htmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A cell as text: strings as they are, numbers and booleans as JavaScript prints them, the rest as JSON. */
function cellText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
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
  checkRows('tableBundle', rows);
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => columns.map((c) => cellText(r[c])));
  const numeric = columns.map((c) => rows.every((r) => r[c] === undefined || typeof r[c] === 'number' || (typeof r[c] === 'string' && /^[-+]?\d[\d.,eE+-]*\s*[%×x]?$/.test(r[c] as string))));
  const align = (j: number): string => (numeric[j] ? ' style="text-align:right"' : '');
  const html =
    '<table class="tfjs-accumulate-table">' +
    (args.caption ? `<caption>${htmlEscape(args.caption)}</caption>` : '') +
    `<thead><tr>${columns.map((c, j) => `<th scope="col"${align(j)}>${htmlEscape(c)}</th>`).join('')}</tr></thead>` +
    `<tbody>${cells.map((row) => `<tr>${row.map((v, j) => `<td${align(j)}>${htmlEscape(v)}</td>`).join('')}</tr>`).join('')}</tbody>` +
    '</table>';
  const widths = columns.map((c, j) => Math.max(c.length, ...cells.map((row) => row[j].length)));
  const line = (values: string[]): string => values.map((v, j) => (numeric[j] ? v.padStart(widths[j]) : v.padEnd(widths[j]))).join('  ').trimEnd();
  const plain = [...(args.caption ? [args.caption] : []), line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
  return { data: { 'text/html': html, 'text/plain': plain }, metadata: {} };
}

/**
 * Shows rows as a table in the current notebook cell (see {@link tableBundle}). Works in a cell
 * run by the tslab or the Deno kernel; throws anywhere else. Like {@link showFigure}, it returns
 * a promise to await under Deno.
 */
export function showTable(rows: TableRow[], args: TableArgs = {}): Promise<void> {
  checkRows('showTable', rows);
  const publish = requireKernelPublisher('showTable', 'tableBundle(rows) to get the display bundle');
  return publish(tableBundle(rows, args));
}
