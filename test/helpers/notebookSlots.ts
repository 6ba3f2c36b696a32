import * as fs from 'node:fs';
import type { Slots } from './slots';

// Running the tutorial's notebooks two at a time, as test:jupyter and test:deno do: one
// nbconvert run keeps about one of CI's two cores busy (a kernel, then Python between cells),
// so two runs side by side take little more than one. The chapters that measure time (speed
// ratios, cores used) run alone, so that what they measure is theirs.

/** The notebook calls a timing function in its code: measureAccumulation, timeCalls, performance.now … */
const TIMING_CALL = /\b(?:measure[A-Z]\w*|timeCalls?|performance\.now)\s*\(/;

/** Whether a notebook's code measures time, so that it must not share the machine. */
export function measuresTime(notebookFile: string): boolean {
  const nb = JSON.parse(fs.readFileSync(notebookFile, 'utf8')) as { cells: { cell_type: string; source: string | string[] }[] };
  return nb.cells.some((c) => c.cell_type === 'code' && TIMING_CALL.test(Array.isArray(c.source) ? c.source.join('') : c.source));
}

/** The runs of one e2e part: two at a time, a notebook that measures time alone. */
export const NOTEBOOK_SLOTS = 2;

/** Runs `task` for `notebookFile` in `slots`: alone if the notebook measures time, else beside one other. */
export function inSlots<T>(slots: Slots, notebookFile: string, task: () => Promise<T>): Promise<T> {
  return slots.run(measuresTime(notebookFile) ? slots.capacity : 1, task);
}
