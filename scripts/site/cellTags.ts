/**
 * Jupyter's cell tags for what a reader sees, read as Jupyter Book and nbconvert's
 * TagRemovePreprocessor define them, so that a notebook tagged for those tools shows the same on
 * this site:
 *
 * - `remove-cell`: the cell is not on the page at all (neither code nor outputs);
 * - `remove-input`: the code is not on the page; the outputs are;
 * - `remove-output`: the outputs are not on the page; the code is;
 * - `hide-input`: the code is on the page, collapsed behind a "Show code" disclosure;
 * - `hide-output`: the outputs are on the page, collapsed behind a "Show output" disclosure;
 * - `hide-cell`: both, each collapsed.
 *
 * Removed content is also left out of the search index (it is not on the page, so a result could
 * not show it); hidden content is on the page and stays searchable. Tags live in
 * `cell.metadata.tags` (nbformat 4); anything there that is not a list of strings is ignored, as
 * Jupyter ignores it. Unknown tags are ignored too: a notebook may carry tags for other tools.
 */
import type { Cell } from '../notebooks/nbformat';

/** How one part of a cell (its code or its outputs) appears on the page. */
export type PartView = 'shown' | 'hidden' | 'removed';

/** How a cell appears on the page, from its tags. */
export interface CellView {
  /** False for `remove-cell`: the cell is left out entirely. */
  present: boolean;
  input: PartView;
  outputs: PartView;
}

/** The tags this exporter acts on; the rest are other tools' business. */
export const VIEW_TAGS = ['remove-cell', 'remove-input', 'remove-output', 'hide-cell', 'hide-input', 'hide-output'] as const;

/** The cell's tags: `metadata.tags` when it is a list, its string entries only. */
export function cellTags(cell: Pick<Cell, 'metadata'>): Set<string> {
  const tags = (cell.metadata as { tags?: unknown } | undefined)?.tags;
  return new Set(Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : []);
}

/** How a cell appears; removal wins over hiding when a cell carries both. */
export function cellView(cell: Pick<Cell, 'metadata'>): CellView {
  const tags = cellTags(cell);
  const part = (removeTag: string, hideTag: string): PartView => (tags.has(removeTag) ? 'removed' : tags.has(hideTag) || tags.has('hide-cell') ? 'hidden' : 'shown');
  return {
    present: !tags.has('remove-cell'),
    input: part('remove-input', 'hide-input'),
    outputs: part('remove-output', 'hide-output'),
  };
}
