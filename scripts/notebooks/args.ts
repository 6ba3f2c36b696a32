/**
 * The runner's options: their types, defaults and checks, shared by the command line (cli.ts)
 * and callers of `runNotebooks`/`runNotebook` (tests, other scripts).
 */
import * as path from 'node:path';

/** The runner's options; every field can be set from the command line. */
export interface RunNotebooksArgs {
  /** Notebook files or folders of notebooks to run. Default: every `.ipynb` in `notebooks/`. */
  inputs?: string[];
  /** Folder that receives the executed copies. Default `build/notebooks`. */
  outDir?: string;
  /**
   * Seconds one cell may run before it is killed and reported: a positive number up to
   * {@link MAX_TIMEOUT_SECONDS}, or `Infinity` for no limit. Default 300.
   */
  cellTimeoutSeconds?: number;
  /** Fail a notebook whose source has outputs or execution counts. Default false. */
  checkClean?: boolean;
  /**
   * Bytes of output one cell may keep (UTF-8 of streams, JSON of displays); the rest is dropped
   * with a note in the cell (outputCap.ts). A positive number, or `Infinity` for no cap.
   * Default 1 000 000 (1 MB; the tutorial's largest cell output is about 41 kB).
   */
  maxCellOutputBytes?: number;
  /** Bytes of output a whole notebook may keep, as {@link maxCellOutputBytes}. Default 10 000 000 (10 MB). */
  maxNotebookOutputBytes?: number;
  /**
   * Notebooks run at once, each in its own kernel: a whole number from 1 to {@link MAX_JOBS}.
   * A notebook that measures time (measuresTime.ts) still runs alone. With more than one, a
   * notebook's progress lines are printed together when it ends. Default 1.
   */
  jobs?: number;
  /** Where progress lines go. Default: standard output. */
  log?: (line: string) => void;
}

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The tutorial's notebook folder. An executed copy keeps its path below it, so that a translation
 * in a subfolder (`notebooks/zh/01-environment.ipynb` → `build/notebooks/zh/…`) never overwrites
 * the original; running it by default is one more entry in `DEFAULTS.inputs`.
 */
export const NOTEBOOKS_ROOT = path.join(ROOT, 'notebooks');

/** The translations run by default beside the English chapters (`notebooks/zh/`, the Chinese edition). */
export const TRANSLATION_FOLDERS = ['zh'];

export const DEFAULTS = {
  inputs: [NOTEBOOKS_ROOT, ...TRANSLATION_FOLDERS.map((lang) => path.join(NOTEBOOKS_ROOT, lang))],
  outDir: path.join(ROOT, 'build', 'notebooks'),
  cellTimeoutSeconds: 300,
  checkClean: false,
  maxCellOutputBytes: 1_000_000,
  maxNotebookOutputBytes: 10_000_000,
  jobs: 1,
};

/** The most notebooks run at once: each kernel holds a Node process and tfjs (about 300 MB). */
export const MAX_JOBS = 16;

export const JOBS_ACCEPTED = `a whole number from 1 to ${MAX_JOBS}`;

/** Checks `jobs` from code. */
export function checkJobs(value: unknown): number {
  if (!(typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_JOBS)) throw runnerArgumentError('jobs', JOBS_ACCEPTED, typeof value === 'string' ? JSON.stringify(value) : String(value));
  return value;
}

/** Reads `--jobs=N`. */
export function parseJobs(value: string | undefined): number {
  const n = /^\d+$/.test(value ?? '') ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_JOBS)) throw runnerArgumentError('--jobs', JOBS_ACCEPTED, JSON.stringify(value ?? ''));
  return n;
}

/**
 * The longest finite per-cell timeout: Node's timers hold a signed 32-bit count of milliseconds,
 * and a longer delay fires at once (with only a warning), so 2^31 − 1 ms, about 24.8 days.
 * Note: larger values are refused rather than read as "no limit", so that a typo (an extra zero)
 * is caught; ask for no limit with `--timeout=none` (`Infinity` from code).
 */
export const MAX_TIMEOUT_SECONDS = (2 ** 31 - 1) / 1000;

/** A bad option for the runner; the message names the option, what is accepted, and the value. */
export class RunnerArgumentError extends Error {
  override name = 'RunnerArgumentError';
}

/** Builds the error in the project's usual form: "who: what must be X; got Y." */
export function runnerArgumentError(option: string, accepted: string, got: string): RunnerArgumentError {
  return new RunnerArgumentError(`runNotebooks: ${option} must be ${accepted}; got ${got}.`);
}

export const TIMEOUT_ACCEPTED = `a positive number of seconds up to ${MAX_TIMEOUT_SECONDS} (2^31 - 1 ms), or none for no limit`;

/** Checks a per-cell timeout from code; `Infinity` is no limit. */
export function checkTimeoutSeconds(value: unknown): number {
  const ok = typeof value === 'number' && value > 0 && (value <= MAX_TIMEOUT_SECONDS || value === Infinity);
  if (!ok) throw runnerArgumentError('cellTimeoutSeconds', TIMEOUT_ACCEPTED.replace('or none', 'or Infinity'), typeof value === 'string' ? JSON.stringify(value) : String(value));
  return value;
}

/** Reads `--timeout=VALUE`: seconds, or `none`. */
export function parseTimeout(value: string | undefined): number {
  if (value === 'none') return Infinity;
  const n = value === undefined || value.trim() === '' ? NaN : Number(value);
  if (!(n > 0 && n <= MAX_TIMEOUT_SECONDS)) throw runnerArgumentError('--timeout', TIMEOUT_ACCEPTED, JSON.stringify(value ?? ''));
  return n;
}

export const OUTPUT_BYTES_ACCEPTED = 'a positive number of bytes, with k (1000) or M (1 000 000) after it if you like, or none for no cap';

/** Checks an output cap from code; `Infinity` is no cap. */
export function checkOutputBytes(name: string, value: unknown): number {
  if (!(typeof value === 'number' && value > 0 && (Number.isFinite(value) || value === Infinity))) {
    throw runnerArgumentError(name, OUTPUT_BYTES_ACCEPTED.replace('or none', 'or Infinity'), typeof value === 'string' ? JSON.stringify(value) : String(value));
  }
  return value;
}

/** Reads `--max-cell-output=SIZE` and `--max-notebook-output=SIZE`: `250000`, `300k`, `2M`, or `none`. */
export function parseOutputBytes(option: string, value: string | undefined): number {
  if (value === 'none') return Infinity;
  const m = /^(\d+(?:\.\d+)?)(k|M)?$/.exec(value ?? '');
  const bytes = m ? Math.round(Number(m[1]) * (m[2] === 'M' ? 1e6 : m[2] === 'k' ? 1e3 : 1)) : NaN;
  if (!(bytes > 0)) throw runnerArgumentError(option, OUTPUT_BYTES_ACCEPTED, JSON.stringify(value ?? ''));
  return bytes;
}
