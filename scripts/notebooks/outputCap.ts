/**
 * How much output the runner keeps, per cell and per notebook. A cell that prints without end
 * (100 × 1 MB once made a 105 MB executed notebook and a 105 MB page) would otherwise fill the
 * runner's memory, the executed copy and the site. As Jupyter front ends cap what they keep of a
 * stream, the runner keeps the first `cellBytes` of each cell's output and the first
 * `notebookBytes` of the notebook's, drops the rest, and says so in the cell with a visible note.
 * A display updated in place counts only what it grew by.
 */
import type { Output } from './nbformat';

/** The caps, in bytes of UTF-8 (streams) or of JSON (displays); `Infinity` for none. */
export interface OutputLimits {
  /** Bytes one cell's outputs may hold. */
  cellBytes: number;
  /** Bytes all of a notebook's outputs may hold. */
  notebookBytes: number;
}

/** A size as the runner prints it: `1 MB`, `2.5 MB`, `300 kB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'no limit';
  if (bytes >= 1e6) return `${+(bytes / 1e6).toFixed(2)} MB`;
  if (bytes >= 1e3) return `${+(bytes / 1e3).toFixed(2)} kB`;
  return `${bytes} B`;
}

/** The longest prefix of `text` of at most `bytes` bytes in UTF-8, never cutting a character. */
export function truncateUtf8(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  let end = Math.min(text.length, bytes);
  while (end > 0 && Buffer.byteLength(text.slice(0, end)) > bytes) end--;
  // A lone high surrogate at the end would be half a character.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
  return text.slice(0, end);
}

/** The note that replaces what a cell printed past a cap. */
export function truncationNote(kept: number, which: 'cell' | 'notebook', limits: OutputLimits): string {
  const cap = which === 'cell' ? `${formatBytes(limits.cellBytes)} per cell (--max-cell-output)` : `${formatBytes(limits.notebookBytes)} per notebook (--max-notebook-output)`;
  return `\n[output truncated: the runner keeps at most ${cap}; this cell's output past its first ${formatBytes(kept)} was dropped]\n`;
}

/** The byte budget of one notebook run; {@link OutputBudget.cell} opens each cell's share. */
export class OutputBudget {
  private notebookUsed = 0;

  constructor(readonly limits: OutputLimits) {}

  /** The budget of the next cell, which draws from the notebook's. */
  cell(): CellBudget {
    return new CellBudget(this.limits, {
      remaining: () => this.limits.notebookBytes - this.notebookUsed,
      take: (bytes) => void (this.notebookUsed += bytes),
    });
  }
}

/** One cell's budget: how much of each new output may be kept, and the note once it is spent. */
export class CellBudget {
  private used = 0;
  /** Which cap ended the cell's output, once one has. */
  truncated: 'cell' | 'notebook' | undefined;

  constructor(
    private readonly limits: OutputLimits,
    private readonly notebook: { remaining(): number; take(bytes: number): void },
  ) {}

  /**
   * How many of `bytes` new bytes the cell may keep: all, the part that fits, or with `whole`
   * (a display, which cannot be cut) all or none; none once the cell was truncated. The first
   * refusal marks the cell truncated, and the caller shows {@link CellBudget.note} then.
   */
  allow(bytes: number, whole = false): number {
    if (this.truncated) return 0;
    const forCell = this.limits.cellBytes - this.used;
    const forNotebook = this.notebook.remaining();
    const available = Math.max(0, Math.min(forCell, forNotebook));
    const taken = bytes <= available ? bytes : whole ? 0 : available;
    this.used += taken;
    this.notebook.take(taken);
    if (taken < bytes) this.truncated = forNotebook < forCell ? 'notebook' : 'cell';
    return taken;
  }

  /** The note to append to the cell's outputs once it was truncated. */
  note(): Output & { output_type: 'stream' } {
    return { output_type: 'stream', name: 'stderr', text: truncationNote(this.used, this.truncated ?? 'cell', this.limits) };
  }
}
