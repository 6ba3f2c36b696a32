/**
 * Compares what each cell of a notebook printed under two kernels: the Deno run against the tslab
 * run of the same notebook. Deno's kernel may publish a cell's last lines after the cell is
 * reported done (docs/deno.md), and a client then drops them or files them under the next cell,
 * so a loss shows as a cell with fewer lines than under tslab. Lines are counted, not compared:
 * the two runtimes format some values differently (`'a'` against `"a"` in an inspected object,
 * console.table's `(index)` against `(idx)`), with the same number of lines.
 */
import { codeCells, joinText, type NotebookJson, type OutputJson } from './notebooks';

/** What one code cell showed. */
export interface CellOutputs {
  /** 1-based position among all cells. */
  cell: number;
  /** The cell's first non-empty source line, to name it in a report. */
  firstLine: string;
  stdout: string[];
  stderr: string[];
  /** display_data outputs (charts, tables). */
  displays: number;
  /** execute_result outputs (the value of the cell's last expression). */
  results: number;
}

/** The printed lines of a run of stream output, without the empty piece after a final newline. */
function lines(outputs: OutputJson[], name: string): string[] {
  const text = outputs.filter((o) => o.output_type === 'stream' && o.name === name).map((o) => joinText(o.text)).join('');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/** What every code cell of an executed notebook showed, in order. */
export function cellOutputs(nb: NotebookJson): CellOutputs[] {
  const cells = codeCells(nb);
  const code = nb.cells.filter((c) => c.cell_type === 'code');
  return cells.map(({ cell, code: source }, i) => {
    const outputs = code[i].outputs ?? [];
    return {
      cell,
      firstLine: source.split('\n').find((l) => l.trim() !== '')?.trim() ?? '',
      stdout: lines(outputs, 'stdout'),
      stderr: lines(outputs, 'stderr'),
      displays: outputs.filter((o) => o.output_type === 'display_data').length,
      results: outputs.filter((o) => o.output_type === 'execute_result').length,
    };
  });
}

/**
 * Every cell where `candidate` (the Deno run) showed less than `reference` (the tslab run): fewer
 * stdout or stderr lines, fewer displays, or no result where there was one. Each entry names the
 * cell and what is missing; an empty list means nothing was lost.
 */
export function findLosses(reference: NotebookJson, candidate: NotebookJson): string[] {
  const ref = cellOutputs(reference);
  const got = cellOutputs(candidate);
  if (ref.length !== got.length || ref.some((r, i) => r.cell !== got[i].cell)) {
    return [`the runs have different code cells (${ref.length} against ${got.length}): not the same notebook`];
  }
  const losses: string[] = [];
  ref.forEach((r, i) => {
    const g = got[i];
    const where = `cell ${r.cell} (${JSON.stringify(r.firstLine)})`;
    for (const stream of ['stdout', 'stderr'] as const) {
      if (g[stream].length < r[stream].length) {
        // The lines are usually lost from the end; show the reference's last line as a hint.
        losses.push(`${where}: ${g[stream].length} ${stream} lines under Deno, ${r[stream].length} under tslab (tslab's last: ${JSON.stringify(r[stream][r[stream].length - 1])})`);
      }
    }
    if (g.displays < r.displays) losses.push(`${where}: ${g.displays} displays under Deno, ${r.displays} under tslab`);
    if (g.results < r.results) losses.push(`${where}: no result under Deno, one under tslab`);
  });
  return losses;
}

/**
 * The printed lines that differ between the two runs, cell by cell, where both printed the same
 * number of lines: the formatting differences docs/deno.md lists, for the test to report.
 */
export function formattingDifferences(reference: NotebookJson, candidate: NotebookJson): string[] {
  const ref = cellOutputs(reference);
  const got = cellOutputs(candidate);
  if (ref.length !== got.length) return [];
  return ref.flatMap((r, i) =>
    (['stdout', 'stderr'] as const).flatMap((stream) =>
      r[stream].length !== got[i][stream].length
        ? []
        : r[stream].flatMap((line, j) => (line === got[i][stream][j] ? [] : [`cell ${r.cell} ${stream}: tslab ${JSON.stringify(line)} | Deno ${JSON.stringify(got[i][stream][j])}`])),
    ),
  );
}
