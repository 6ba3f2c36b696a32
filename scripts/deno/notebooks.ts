/**
 * The notebooks the Deno steps cover and the parts of them they read. Every `.ipynb` under
 * `notebooks/`, at any depth (the English chapters and `notebooks/zh/`), is found on disk, never
 * listed by hand; Jupyter's `.ipynb_checkpoints` copies are skipped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The subset of an nbformat 4 notebook these steps read. */
export interface NotebookJson {
  cells: { cell_type: string; source: string | string[]; outputs?: OutputJson[] }[];
  metadata?: { kernelspec?: { name?: string; display_name?: string; language?: string } };
}

/** One output of an executed code cell, as nbformat stores it. */
export interface OutputJson {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
}

/** One code cell: its 1-based position among all cells (as Jupyter and the runner count) and its code. */
export interface CodeCell {
  cell: number;
  code: string;
}

export const NOTEBOOKS_DIR = path.resolve(__dirname, '..', '..', 'notebooks');

/** Every notebook under `dir`, at any depth, sorted by path (chapters are numbered). */
export function findNotebooks(dir: string = NOTEBOOKS_DIR): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ipynb') && !f.split(path.sep).includes('.ipynb_checkpoints'))
    .map((f) => path.join(dir, f))
    .sort();
}

/** nbformat stores multi-line strings either whole or as a list of lines. */
export function joinText(text: string | string[] | undefined): string {
  return Array.isArray(text) ? text.join('') : (text ?? '');
}

export function readNotebook(file: string): NotebookJson {
  const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as NotebookJson;
  if (!Array.isArray(nb?.cells)) throw new Error(`${file}: not a notebook (no "cells" array).`);
  return nb;
}

/** The code cells of a notebook, in order. */
export function codeCells(nb: NotebookJson): CodeCell[] {
  return nb.cells.flatMap((c, i) => (c.cell_type === 'code' ? [{ cell: i + 1, code: joinText(c.source) }] : []));
}
