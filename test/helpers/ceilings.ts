// How long the end-to-end tests wait before they call something hung. Every wait in them is for
// an event (a server says it listens, a page reports a kernel connected, a chart drawn, a cell
// finished); these ceilings only end a wait that would otherwise never end. They are far above
// anything a loaded machine takes: on CI's two cores at load 9, a classic Notebook page took
// more than 60 s to connect its kernel (the wait that failed `.ci/run`), and chapter 6's longest
// cell took 34 s in the runner at load 3. A ceiling that a busy machine can reach makes a red CI
// out of a slow one, so none is below ten minutes.

/** One wait for one event: a page load, a kernel connecting, a save, a chart drawn, a server start. */
export const HANG_MS = 600_000;

/** One notebook run to its end in a front end (Run All), or one cell under nbconvert. */
export const NOTEBOOK_HANG_MS = 1_800_000;

/** The same, in seconds, for nbconvert's `--ExecutePreprocessor.timeout`. */
export const CELL_HANG_SECONDS = NOTEBOOK_HANG_MS / 1000;
