/**
 * The notebook format: the subset of nbformat 4 this project reads and writes, the runner's
 * record that an executed copy carries in its metadata, and the helpers that read both. The site
 * exporter imports its notebook types from here; nothing in this file starts a kernel.
 */
import * as fs from 'node:fs';

/** The kernelspec name every tutorial notebook declares (the TypeScript kernel, tslab). */
export const KERNELSPEC_NAME = 'tslab';
/** Key of the runner's record in an executed notebook's metadata. */
export const REPORT_KEY = 'tfjs-accumulate';

export type MimeBundle = Record<string, unknown>;

export type Output =
  | { output_type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { output_type: 'display_data'; data: MimeBundle; metadata: Record<string, unknown> }
  | { output_type: 'execute_result'; data: MimeBundle; metadata: Record<string, unknown>; execution_count: number | null }
  | { output_type: 'error'; ename: string; evalue: string; traceback: string[] };

export interface Cell {
  cell_type: 'code' | 'markdown' | 'raw';
  source: string | string[];
  metadata: Record<string, unknown>;
  outputs?: Output[];
  execution_count?: number | null;
  [key: string]: unknown;
}

export interface Notebook {
  nbformat: number;
  nbformat_minor: number;
  metadata: Record<string, unknown> & {
    kernelspec?: { name?: string; display_name?: string; language?: string };
    language_info?: { name?: string };
  };
  cells: Cell[];
}

/** The runner's record of one cell, kept in the executed copy's metadata. */
export interface CellTiming {
  /** 1-based position of the cell in the notebook (markdown cells count). */
  cell: number;
  executionCount: number | null;
  durationMs: number;
  firstLine: string;
}

/**
 * How a notebook failed:
 * - `error`: the cell threw or did not type-check;
 * - `unhandled`: a promise rejection nobody handled, or an exception thrown outside any cell's
 *   own call stack (a timer, an event), while `cell` was running (or had just finished);
 * - `timeout`: the cell ran past the per-cell limit and was killed;
 * - `crash`: the kernel process died;
 * - `invalid`: the file could not be run at all.
 */
export type FailureKind = 'error' | 'unhandled' | 'timeout' | 'crash' | 'invalid';

/** How a notebook went; also stored in the executed copy under `metadata["tfjs-accumulate"]`. */
export interface NotebookReport {
  /** The source notebook. */
  file: string;
  /** The executed copy, when one was written. */
  outFile?: string;
  /** `invalid`: the file could not be run at all (missing, bad JSON, wrong kernel or format). */
  status: 'ok' | 'failed' | 'invalid';
  /** Code cells that ran (including the failing one) and code cells in total. */
  executedCells: number;
  codeCells: number;
  /** Kernel start-up (TypeScript compiler warm-up) plus every cell. */
  totalMs: number;
  startupMs: number;
  cells: CellTiming[];
  /** What went wrong, for `failed` and `invalid`. */
  error?: { cell?: number; firstLine?: string; kind: FailureKind; text: string };
}

/** Joins a cell's source, which nbformat allows as a string or a list of lines. */
export function cellSource(cell: Pick<Cell, 'source'>): string {
  return Array.isArray(cell.source) ? cell.source.join('') : cell.source;
}

/** The first non-blank line of a cell, to name it in messages. */
export function firstLine(source: string): string {
  const line = source.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/**
 * Reads and validates a notebook: nbformat 4, the expected kernelspec, well-formed cells. Throws
 * an Error whose message says what is wrong and what is accepted.
 *
 * @param kernelspecName The kernelspec the notebook must declare. Default `tslab`.
 */
export function loadNotebook(file: string, kernelspecName: string = KERNELSPEC_NAME): Notebook {
  if (!fs.existsSync(file)) throw new Error(`file not found: ${file}`);
  let nb: unknown;
  try {
    nb = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`invalid JSON: ${(e as Error).message}`);
  }
  if (typeof nb !== 'object' || nb === null || Array.isArray(nb)) throw new Error('not a notebook: the JSON is not an object');
  const n = nb as Partial<Notebook>;
  if (n.nbformat !== 4) {
    throw new Error(`unsupported nbformat ${String(n.nbformat)}.${String(n.nbformat_minor)}; nbformat must be 4 (4.x)`);
  }
  if (!Array.isArray(n.cells)) throw new Error('not a notebook: "cells" must be an array');
  const spec = n.metadata?.kernelspec;
  if (spec?.name !== kernelspecName) {
    const got = spec ? `"${String(spec.name)}"${spec.language ? ` (language ${spec.language})` : ''}` : 'missing';
    throw new Error(
      `wrong kernel: metadata.kernelspec.name must be "${kernelspecName}" (the TypeScript kernel); got ${got}. ` +
        'Open the notebook in Jupyter and choose the TypeScript (tslab) kernel.',
    );
  }
  n.cells.forEach((cell, i) => {
    const ok =
      typeof cell === 'object' &&
      cell !== null &&
      ['code', 'markdown', 'raw'].includes(cell.cell_type) &&
      (typeof cell.source === 'string' || (Array.isArray(cell.source) && cell.source.every((s) => typeof s === 'string')));
    if (!ok) throw new Error(`cell ${i + 1} is malformed: cell_type must be code, markdown or raw and source a string or a list of strings`);
  });
  return n as Notebook;
}

/** Why a source notebook is not clean (outputs or execution counts committed), or undefined. */
export function uncleanReason(nb: Notebook): string | undefined {
  const dirty = nb.cells.findIndex(
    (c) => c.cell_type === 'code' && ((c.outputs?.length ?? 0) > 0 || (c.execution_count ?? null) !== null),
  );
  return dirty < 0 ? undefined : `cell ${dirty + 1} has outputs or an execution count; commit notebooks cleared of outputs`;
}

/** nbformat stores JSON MIME types as objects; tslab's `display.raw` sends them as strings. */
export function normalizeBundle(data: MimeBundle): MimeBundle {
  const out: MimeBundle = {};
  for (const [mime, value] of Object.entries(data)) {
    if (/^application\/(.*\+)?json$/.test(mime) && typeof value === 'string') {
      try {
        out[mime] = JSON.parse(value);
        continue;
      } catch {
        // Not JSON after all: keep the string, a front end will show it as text.
      }
    }
    out[mime] = value;
  }
  return out;
}

/** Appends a stream chunk, merging it into the previous output of the same stream. */
export function pushStream(outputs: Output[], name: 'stdout' | 'stderr', text: string): void {
  const last = outputs[outputs.length - 1];
  if (last?.output_type === 'stream' && last.name === name) last.text += text;
  else outputs.push({ output_type: 'stream', name, text });
}
