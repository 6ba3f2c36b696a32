/**
 * `npm run notebooks`: the runner's command line. Reads the options, runs the notebooks
 * (runner.ts), prints a summary table and every failure, and exits non-zero if any notebook
 * failed. `--help` says how.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULTS, MAX_TIMEOUT_SECONDS, parseJobs, parseOutputBytes, parseTimeout, RunnerArgumentError, runnerArgumentError, type RunNotebooksArgs } from './args';
import type { NotebookReport } from './nbformat';
import { formatBytes } from './outputCap';
import { collectNotebooks, runNotebooks, seconds, shown } from './runner';

const ROOT = path.resolve(__dirname, '..', '..');

export const HELP = `Runs the tutorial notebooks headless in the tslab kernel and writes executed copies.

Usage: npm run notebooks -- [OPTIONS] [NOTEBOOK.ipynb | FOLDER ...]

With no notebook or folder, runs every .ipynb in notebooks/, in name order.

Options:
  --timeout=SECONDS  How long one cell may run before it is killed and its notebook fails.
                     Default ${DEFAULTS.cellTimeoutSeconds}. A positive number up to ${MAX_TIMEOUT_SECONDS}
                     (2^31 - 1 ms, the longest delay Node's timers hold); a larger value is
                     refused, not read as no limit. --timeout=none sets no limit.
  --out=DIR          Folder for the executed copies. Default build/notebooks.
  --check-clean      Fail a notebook whose source has outputs or execution counts.
  --max-cell-output=SIZE
                     Output one cell may keep: bytes, or with k or M (300k, 2M); none for
                     no cap. Default ${formatBytes(DEFAULTS.maxCellOutputBytes)}. Past it the output is dropped, with a
                     note in the cell.
  --max-notebook-output=SIZE
                     The same for all of a notebook's cells. Default ${formatBytes(DEFAULTS.maxNotebookOutputBytes)}.
  --jobs=N           Notebooks run at once, each in its own kernel. Default ${DEFAULTS.jobs}. A
                     notebook that measures time (chapters 7 and 8) still runs alone; each
                     notebook's lines are printed together when it ends.
  --help             Print this help.

A notebook fails at the first cell that throws, does not type-check, runs past the timeout,
kills its kernel, or leaves an error nobody handles (a promise rejected without a handler, an
exception thrown from a timer). Stopping the runner (Ctrl-C, SIGTERM) stops its kernels and
every process they started, also those that left the kernel's process group or session.

Exit status: 0 if every notebook ran, 1 if one failed, 2 for bad options.`;

/** Reads the command line; `help` when `--help` was given. Throws RunnerArgumentError. */
export function parseArgs(argv: string[]): RunNotebooksArgs | 'help' {
  const args: RunNotebooksArgs = { inputs: [] };
  for (const arg of argv) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--help' || flag === '-h') {
      return 'help';
    } else if (flag === '--timeout') {
      args.cellTimeoutSeconds = parseTimeout(value);
    } else if (flag === '--out') {
      if (!value) throw runnerArgumentError('--out', 'a folder, as --out=DIR', JSON.stringify(value ?? ''));
      args.outDir = value;
    } else if (flag === '--check-clean') {
      args.checkClean = true;
    } else if (flag === '--max-cell-output') {
      args.maxCellOutputBytes = parseOutputBytes(flag, value);
    } else if (flag === '--max-notebook-output') {
      args.maxNotebookOutputBytes = parseOutputBytes(flag, value);
    } else if (flag === '--jobs') {
      args.jobs = parseJobs(value);
    } else if (arg.startsWith('-')) {
      throw new RunnerArgumentError(
        `runNotebooks: unknown option ${arg}; accepted: --timeout=SECONDS|none, --out=DIR, --check-clean, --max-cell-output=SIZE|none, --max-notebook-output=SIZE|none, --jobs=N, --help, then notebook files or folders.`,
      );
    } else {
      args.inputs!.push(arg);
    }
  }
  if (args.inputs!.length === 0) delete args.inputs;
  return args;
}

/** The failure message: notebook, cell number, the cell's first line, the full error text. */
export function describeFailure(r: NotebookReport): string {
  if (!r.error) return '';
  const where = r.error.cell ? `, cell ${r.error.cell} (${JSON.stringify(r.error.firstLine)})` : '';
  const what = {
    error: 'failed',
    unhandled: 'failed with an error nothing handled',
    timeout: 'timed out',
    crash: 'crashed the kernel',
    invalid: 'cannot be run',
  }[r.error.kind];
  const indented = r.error.text.split('\n').map((l) => `    ${l}`).join('\n');
  return `${shown(r.file)}${where} ${what}:\n${indented}`;
}

/** The table printed at the end: one row per notebook, then the slowest cells. */
export function summaryTable(reports: NotebookReport[]): string {
  const rows = reports.map((r) => [
    path.basename(r.file),
    r.status === 'invalid' ? '-' : `${r.executedCells}/${r.codeCells}`,
    r.status === 'invalid' ? '-' : seconds(r.startupMs),
    r.status === 'invalid' ? '-' : seconds(r.totalMs),
    r.status === 'ok' ? 'ok' : r.status === 'invalid' ? 'INVALID' : `FAILED at cell ${r.error?.cell ?? '?'}`,
  ]);
  const total = reports.reduce((s, r) => s + r.totalMs, 0);
  const header = ['notebook', 'cells', 'startup', 'time', 'status'];
  const all = [header, ...rows, ['total', '', '', seconds(total), `${reports.filter((r) => r.status === 'ok').length}/${reports.length} ok`]];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const fmt = (row: string[]): string => row.map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  const lines = [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt), fmt(all[all.length - 1])];
  const slow = reports
    .flatMap((r) => r.cells.map((c) => ({ ...c, nb: path.basename(r.file) })))
    .sort((a, b) => b.durationMs - a.durationMs)
    .slice(0, 5);
  if (slow.length > 0) {
    lines.push('', 'slowest cells:');
    for (const c of slow) lines.push(`  ${seconds(c.durationMs).padStart(8)}  ${c.nb} cell ${c.cell}  ${c.firstLine}`);
  }
  return lines.join('\n');
}

/** Why dist/ may not be what the notebooks should import (missing, or older than src/), if so. */
function staleBuild(): string | undefined {
  const built = path.join(ROOT, 'dist', 'index.js');
  if (!fs.existsSync(built)) return 'dist/ is missing';
  const builtAt = fs.statSync(built).mtimeMs;
  const newer = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[]).find(
    (f) => f.endsWith('.ts') && fs.statSync(path.join(ROOT, 'src', f)).mtimeMs > builtAt,
  );
  return newer ? `src/${newer} is newer than dist/` : undefined;
}

async function main(): Promise<void> {
  let parsed: RunNotebooksArgs | 'help';
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof RunnerArgumentError)) throw e;
    console.error(e.message);
    process.exit(2);
  }
  if (parsed === 'help') {
    console.log(HELP);
    return;
  }
  const args = parsed;
  const inputs = args.inputs ?? DEFAULTS.inputs;
  const files = collectNotebooks(inputs);
  if (files.length === 0) {
    const where = inputs.map((i) => `${shown(i)}${fs.existsSync(i) && fs.statSync(i).isDirectory() ? '/' : ''}`);
    console.error(`No notebooks to run: ${where.join(', ')} holds no .ipynb files.`);
    process.exit(1);
  }
  const stale = staleBuild();
  if (stale) console.warn(`Warning: ${stale}; notebooks import the library from dist/ (run \`npm run build\`).`);
  const timeout = args.cellTimeoutSeconds ?? DEFAULTS.cellTimeoutSeconds;
  const limit = Number.isFinite(timeout) ? `${timeout} s per cell at most` : 'no time limit per cell';
  console.log(`Running ${files.length} notebook(s), ${limit}, into ${shown(args.outDir ?? DEFAULTS.outDir)}/`);
  const reports = await runNotebooks(args);
  console.log(`\n${summaryTable(reports)}`);
  const failed = reports.filter((r) => r.status !== 'ok');
  if (failed.length > 0) {
    console.error(`\n${failed.length} of ${reports.length} notebook(s) failed:\n`);
    for (const r of failed) console.error(`${describeFailure(r)}\n`);
    process.exit(1);
  }
}

if (require.main === module) void main();
