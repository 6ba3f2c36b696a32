import * as fs from 'node:fs';

// A chapter that measures time (speed ratios, cores used) must not share the machine with another
// notebook of the same run, so that what it measures is its own: the runner with --jobs and the
// front-end tests that run two notebooks at a time run it alone.

/** The notebook calls a timing function in its code: measureAccumulation, timeCalls, performance.now … */
const TIMING_CALL = /\b(?:measure[A-Z]\w*|timeCalls?|performance\.now)\s*\(/;

/** Whether a notebook's code measures time; false for a file that is no readable notebook (the runner reports those). */
export function measuresTime(notebookFile: string): boolean {
  let nb: { cells?: { cell_type?: string; source?: string | string[] }[] };
  try {
    nb = JSON.parse(fs.readFileSync(notebookFile, 'utf8')) as typeof nb;
  } catch {
    return false;
  }
  return (nb.cells ?? []).some((c) => c.cell_type === 'code' && TIMING_CALL.test(Array.isArray(c.source) ? c.source.join('') : (c.source ?? '')));
}
