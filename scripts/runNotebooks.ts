/**
 * Executes the tutorial notebooks headless, the way the tslab Jupyter kernel would, and writes
 * executed copies (outputs, execution counts, per-cell timing) under build/notebooks/. The
 * sources are only read, so they stay clean.
 *
 *   npm run notebooks [-- [--timeout=SECONDS] [--out=DIR] [--check-clean] [PATH ...]]
 *
 * Each notebook runs in its own child process (this file, started with `--child`) that drives
 * tslab's own converter, executor and Jupyter handler in-process. That keeps the kernel's
 * semantics (type checking, top-level await, `require('tslab')`, display data, execution counts)
 * without ZeroMQ, and lets the parent kill a cell that runs past its timeout, including a
 * synchronous infinite loop. tslab is pinned to 1.0.22 in package.json because this file uses
 * its internals (`dist/converter`, `dist/executor`, `dist/jupyter`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { format } from 'node:util';

/** The runner's options; every field can be set from the command line. */
export interface RunNotebooksArgs {
  /** Notebook files or folders of notebooks to run. Default: every `.ipynb` in `notebooks/`. */
  inputs?: string[];
  /** Folder that receives the executed copies. Default `build/notebooks`. */
  outDir?: string;
  /** Seconds one cell may run before it is killed and reported. Default 300. */
  cellTimeoutSeconds?: number;
  /** Fail a notebook whose source has outputs or execution counts. Default false. */
  checkClean?: boolean;
  /** Where progress lines go. Default: standard output. */
  log?: (line: string) => void;
}

const ROOT = path.resolve(__dirname, '..');
const DEFAULTS = {
  inputs: [path.join(ROOT, 'notebooks')],
  outDir: path.join(ROOT, 'build', 'notebooks'),
  cellTimeoutSeconds: 300,
  checkClean: false,
};
/** The only kernel the runner executes: tslab in TypeScript mode. */
const KERNEL_NAME = 'tslab';
/** Key of the runner's record in an executed notebook's metadata. */
export const REPORT_KEY = 'tfjs-accumulate';

// ---------------------------------------------------------------------------------------------
// Notebook format (the subset of nbformat 4 this project reads and writes).

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
  error?: { cell?: number; firstLine?: string; kind: 'error' | 'timeout' | 'crash' | 'invalid'; text: string };
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
 * Reads and validates a notebook: nbformat 4, the tslab kernel, well-formed cells. Throws an
 * Error whose message says what is wrong and what is accepted.
 */
export function loadNotebook(file: string): Notebook {
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
  if (spec?.name !== KERNEL_NAME) {
    const got = spec ? `"${String(spec.name)}"${spec.language ? ` (language ${spec.language})` : ''}` : 'missing';
    throw new Error(
      `wrong kernel: metadata.kernelspec.name must be "${KERNEL_NAME}" (the TypeScript kernel); got ${got}. ` +
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

// ---------------------------------------------------------------------------------------------
// Messages between the runner (parent) and the per-notebook kernel process (child).

type ToChild = { type: 'execute'; code: string } | { type: 'shutdown' };
/** What tslab's `writeDisplayData` receives: a display_data message's content. */
interface DisplayContent {
  data: MimeBundle;
  metadata?: Record<string, unknown>;
  transient?: { display_id?: string };
}
type FromChild =
  | { type: 'ready'; startupMs: number }
  | { type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { type: 'error'; text: string }
  | { type: 'display'; content: DisplayContent; update: boolean }
  | { type: 'done'; status: 'ok' | 'error' | 'abort'; executionCount: number | null; durationMs: number };

/**
 * The child: a tslab kernel without ZeroMQ. Runs in the notebook's folder because tslab
 * compiles relative to the current directory, exactly as the kernel Jupyter starts there does.
 */
function childMain(): void {
  const started = performance.now();
  const notebookDir = process.argv[process.argv.indexOf('--child') + 1];
  process.chdir(notebookDir);
  const send = (msg: FromChild): void => void process.send!(msg);
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createConverter } = require('tslab/dist/converter');
  const { createExecutor } = require('tslab/dist/executor');
  const { JupyterHandlerImpl } = require('tslab/dist/jupyter');
  /* eslint-enable @typescript-eslint/no-require-imports */
  let node: { close(): void } | undefined;
  const convs = {
    get node() {
      return (node ??= createConverter({ isJS: false, isBrowser: false }));
    },
    get browser() {
      throw new Error('browser-mode cells (//%browser) are not supported by the runner');
    },
    close() {
      node?.close();
    },
  };
  void convs.node; // warm the TypeScript compiler before the first cell, as the kernel does
  // The executor reports a cell's failure (type errors, a thrown exception) through the console
  // it is given, and only that; the kernel prints it to stderr and sends Jupyter no error text.
  // Catching it here turns it into a proper error output instead.
  const executorConsole = { log: console.log, error: (...args: unknown[]) => send({ type: 'error', text: format(...args) }) };
  const executor = createExecutor(process.cwd(), convs, executorConsole);
  const handler = new JupyterHandlerImpl(executor, false);
  // The kernel keeps running after a stray async error and reports it in the current cell.
  process.on('uncaughtException', (err) => console.error('UncaughtException:', err));
  process.on('unhandledRejection', (reason) => console.error('UnhandledPromiseRejection:', reason));
  const writeStream = (name: 'stdout' | 'stderr', text: string): void => send({ type: 'stream', name, text });
  const writeDisplayData = (content: DisplayContent, update: boolean): void => send({ type: 'display', content, update: Boolean(update) });
  // Without the runner (killed, or its output pipe closed) nobody reads this kernel's results.
  process.on('disconnect', () => process.exit(1));
  process.on('message', async (msg: ToChild) => {
    if (msg.type === 'shutdown') {
      handler.close();
      process.disconnect();
      process.exit(0);
    }
    const t0 = performance.now();
    try {
      const reply = await handler.handleExecute({ code: msg.code }, writeStream, writeDisplayData);
      send({ type: 'done', status: reply.status, executionCount: reply.execution_count ?? null, durationMs: performance.now() - t0 });
    } catch (e) {
      // tslab itself failed (not the cell's code, whose errors handleExecute reports).
      send({ type: 'error', text: `tslab failed to execute the cell: ${format(e)}` });
      send({ type: 'done', status: 'error', executionCount: null, durationMs: performance.now() - t0 });
    }
  });
  send({ type: 'ready', startupMs: performance.now() - started });
}

// ---------------------------------------------------------------------------------------------
// The parent: one child per notebook, cells sent one by one, outputs collected.

/** Keeps the notebook's stack frames and drops the harness's (vm, tslab, this runner). */
export function cleanErrorText(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s+at .*(node:vm|[\\/]tslab[\\/]dist[\\/]|runNotebooks\.ts|node:internal)/.test(l))
    .join('\n')
    .trimEnd();
}

/** Splits error text into nbformat's ename/evalue: "TypeError: boom" → TypeError, boom. */
function errorOutput(kind: 'error' | 'timeout' | 'crash', text: string): Output & { output_type: 'error' } {
  const lines = text.split('\n');
  let ename = kind === 'timeout' ? 'CellTimeoutError' : kind === 'crash' ? 'KernelDiedError' : 'Error';
  let evalue = lines.find((l) => l.trim() !== '') ?? '';
  const named = lines.map((l) => /^(?:Uncaught )?([A-Z][A-Za-z]*(?:Error|Exception)): (.*)$/.exec(l)).find(Boolean);
  if (kind === 'error' && named) [, ename, evalue] = named;
  else if (kind === 'error' && /^\d+:\d+ - /.test(evalue)) ename = 'TypeScriptError';
  return { output_type: 'error', ename, evalue, traceback: lines };
}

/** Appends a stream chunk, merging it into the previous output of the same stream. */
function pushStream(outputs: Output[], name: 'stdout' | 'stderr', text: string): void {
  const last = outputs[outputs.length - 1];
  if (last?.output_type === 'stream' && last.name === name) last.text += text;
  else outputs.push({ output_type: 'stream', name, text });
}

/** nbformat stores JSON MIME types as objects; tslab's `display.raw` sends them as strings. */
function normalizeBundle(data: MimeBundle): MimeBundle {
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

/** Kernels still running, killed if the runner exits early so that none is left behind. */
const liveKernels = new Set<KernelProcess>();
process.on('exit', () => {
  for (const kernel of liveKernels) kernel.kill();
});

class KernelProcess {
  private readonly child: ChildProcess;
  private readonly rawLog: string[] = [];
  private listener: ((msg: FromChild) => void) | undefined;
  private exitListener: ((why: string) => void) | undefined;
  exited = false;

  constructor(notebookDir: string) {
    const isTs = __filename.endsWith('.ts');
    this.child = fork(__filename, ['--child', notebookDir], {
      cwd: ROOT, // so that `--import tsx` resolves; the child changes to the notebook's folder
      execArgv: isTs ? ['--import', 'tsx'] : [],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    // Output the child writes before tslab takes over stdout/stderr (or after a crash).
    this.child.stdout!.on('data', (b) => this.rawLog.push(String(b)));
    this.child.stderr!.on('data', (b) => this.rawLog.push(String(b)));
    this.child.on('message', (msg: FromChild) => this.listener?.(msg));
    liveKernels.add(this);
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      liveKernels.delete(this);
      this.exitListener?.(`the kernel process exited (${signal ?? `code ${code}`})`);
    });
  }

  /** Everything the child printed outside cells. */
  log(): string {
    return this.rawLog.join('');
  }

  onMessage(fn: (msg: FromChild) => void): void {
    this.listener = fn;
  }

  onExit(fn: (why: string) => void): void {
    this.exitListener = fn;
  }

  send(msg: ToChild): void {
    this.child.send(msg);
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/** Waits for the child's `ready`, or reports why it never came. */
function waitReady(kernel: KernelProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the kernel did not start within ${timeoutMs / 1000} s`)), timeoutMs);
    kernel.onMessage((msg) => {
      if (msg.type === 'ready') {
        clearTimeout(timer);
        resolve(msg.startupMs);
      }
    });
    kernel.onExit((why) => {
      clearTimeout(timer);
      reject(new Error(`${why} while starting:\n${kernel.log()}`));
    });
  });
}

interface CellRun {
  status: 'ok' | 'error' | 'timeout' | 'crash';
  executionCount: number | null;
  durationMs: number;
  why?: string;
  /** What the executor reported for a failed cell. */
  errorText?: string;
}

/** Sends one cell and collects its outputs until the child answers, dies or times out. */
function executeCell(kernel: KernelProcess, code: string, outputs: Output[], displays: Map<string, Output>, timeoutMs: number): Promise<CellRun> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const errors: string[] = [];
    const timer = setTimeout(() => {
      kernel.kill();
      resolve({ status: 'timeout', executionCount: null, durationMs: performance.now() - t0 });
    }, timeoutMs);
    kernel.onExit((why) => {
      clearTimeout(timer);
      resolve({ status: 'crash', executionCount: null, durationMs: performance.now() - t0, why });
    });
    kernel.onMessage((msg) => {
      if (msg.type === 'stream') pushStream(outputs, msg.name, msg.text);
      else if (msg.type === 'error') errors.push(msg.text);
      else if (msg.type === 'display') {
        const id = msg.content.transient?.display_id;
        const data = normalizeBundle(msg.content.data);
        const existing = id ? displays.get(id) : undefined;
        if (msg.update && existing && existing.output_type === 'display_data') existing.data = data;
        else if (!msg.update) {
          const out: Output = { output_type: 'display_data', data, metadata: msg.content.metadata ?? {} };
          outputs.push(out);
          if (id) displays.set(id, out);
        }
      } else if (msg.type === 'done') {
        // Output that arrives later (a timer firing after the cell returned) still lands in this
        // cell, as in Jupyter, until the next cell is sent and replaces this listener.
        clearTimeout(timer);
        resolve({
          status: msg.status === 'ok' ? 'ok' : 'error',
          executionCount: msg.executionCount,
          durationMs: msg.durationMs,
          errorText: errors.join('\n'),
        });
      }
    });
    kernel.send({ type: 'execute', code });
  });
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A path as the user would type it: relative to the current folder when inside it. */
function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(file) : rel;
}

/** Runs one notebook and writes its executed copy. Never throws: problems go in the report. */
export async function runNotebook(file: string, args: RunNotebooksArgs = {}): Promise<NotebookReport> {
  const log = args.log ?? ((line: string) => console.log(line));
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  const timeoutMs = (args.cellTimeoutSeconds ?? DEFAULTS.cellTimeoutSeconds) * 1000;
  const report: NotebookReport = { file, status: 'ok', executedCells: 0, codeCells: 0, totalMs: 0, startupMs: 0, cells: [] };
  const t0 = performance.now();
  let nb: Notebook;
  try {
    nb = loadNotebook(file);
    const dirty = args.checkClean ? uncleanReason(nb) : undefined;
    if (dirty) throw new Error(`not clean: ${dirty}`);
  } catch (e) {
    report.status = 'invalid';
    report.error = { kind: 'invalid', text: (e as Error).message };
    log(`  ✗ ${(e as Error).message}`);
    return report;
  }
  const executed: Notebook = JSON.parse(JSON.stringify(nb));
  const codeCells = executed.cells.filter((c) => c.cell_type === 'code' && cellSource(c).trim() !== '');
  report.codeCells = codeCells.length;
  for (const c of executed.cells) {
    if (c.cell_type === 'code') {
      c.outputs = [];
      c.execution_count = null;
    }
  }

  const kernel = new KernelProcess(path.dirname(path.resolve(file)));
  try {
    report.startupMs = Math.round(await waitReady(kernel, Math.max(timeoutMs, 120_000)));
    log(`  kernel ready in ${seconds(report.startupMs)}`);
    const displays = new Map<string, Output>();
    for (const [index, cell] of executed.cells.entries()) {
      const code = cellSource(cell);
      if (cell.cell_type !== 'code' || code.trim() === '') continue;
      const outputs = cell.outputs!;
      const startedAt = new Date();
      const run = await executeCell(kernel, code, outputs, displays, timeoutMs);
      const timing: CellTiming = { cell: index + 1, executionCount: run.executionCount, durationMs: Math.round(run.durationMs), firstLine: firstLine(code) };
      report.cells.push(timing);
      report.executedCells += 1;
      cell.execution_count = run.executionCount;
      cell.metadata = {
        ...cell.metadata,
        // The keys nbclient writes with record_timing, so Jupyter tools understand them.
        execution: {
          'iopub.execute_input': startedAt.toISOString(),
          'shell.execute_reply': new Date(startedAt.getTime() + run.durationMs).toISOString(),
        },
      };
      log(`  [${report.executedCells}/${report.codeCells}] cell ${String(index + 1).padEnd(3)} ${seconds(run.durationMs).padStart(7)}  ${run.status === 'ok' ? '' : run.status.toUpperCase() + '  '}${timing.firstLine}`);
      if (run.status === 'ok') continue;

      let text: string;
      if (run.status === 'error') {
        text = cleanErrorText(run.errorText ?? '') || 'the cell failed without reporting an error';
      } else if (run.status === 'timeout') {
        text = `the cell did not finish within ${timeoutMs / 1000} s (per-cell timeout; raise it with --timeout=SECONDS) and was killed`;
      } else {
        text = `${run.why}${kernel.log() ? `\n${kernel.log()}` : ''}`;
      }
      outputs.push(errorOutput(run.status, text));
      report.status = 'failed';
      report.error = { cell: index + 1, firstLine: timing.firstLine, kind: run.status, text };
      break;
    }
  } catch (e) {
    report.status = 'failed';
    report.error = { kind: 'crash', text: (e as Error).message };
  } finally {
    if (!kernel.exited) kernel.send({ type: 'shutdown' });
    // A well-behaved child exits at once; one stuck in user code is killed.
    setTimeout(() => kernel.kill(), 2000).unref();
  }
  report.totalMs = Math.round(performance.now() - t0);

  const { file: _source, outFile: _out, ...record } = report;
  executed.metadata[REPORT_KEY] = { runner: { ...record, executedAt: new Date().toISOString() } };
  fs.mkdirSync(outDir, { recursive: true });
  report.outFile = path.join(outDir, path.basename(file));
  fs.writeFileSync(report.outFile, JSON.stringify(executed, null, 1) + '\n');
  return report;
}

/** Expands folders to the `.ipynb` files in them, sorted by name (notebooks are numbered). */
export function collectNotebooks(inputs: string[]): string[] {
  const files: string[] = [];
  for (const input of inputs) {
    if (fs.existsSync(input) && fs.statSync(input).isDirectory()) {
      files.push(
        ...fs
          .readdirSync(input)
          .filter((f) => f.endsWith('.ipynb'))
          .sort()
          .map((f) => path.join(input, f)),
      );
    } else {
      files.push(input); // a missing file is reported by runNotebook, next to the others
    }
  }
  return files;
}

/** The failure message: notebook, cell number, the cell's first line, the full error text. */
export function describeFailure(r: NotebookReport): string {
  if (!r.error) return '';
  const where = r.error.cell ? `, cell ${r.error.cell} (${JSON.stringify(r.error.firstLine)})` : '';
  const what = { error: 'failed', timeout: 'timed out', crash: 'crashed the kernel', invalid: 'cannot be run' }[r.error.kind];
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

/** Runs every notebook (one process each, in order) and returns their reports. */
export async function runNotebooks(args: RunNotebooksArgs = {}): Promise<NotebookReport[]> {
  const log = args.log ?? ((line: string) => console.log(line));
  const files = collectNotebooks(args.inputs ?? DEFAULTS.inputs);
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  if (args.inputs === undefined && fs.existsSync(outDir)) {
    // A run of every notebook owns the folder: executed copies of notebooks that were renamed or
    // removed would otherwise end up in the site.
    const current = new Set(files.map((f) => path.basename(f)));
    for (const f of fs.readdirSync(outDir)) if (f.endsWith('.ipynb') && !current.has(f)) fs.rmSync(path.join(outDir, f));
  }
  const reports: NotebookReport[] = [];
  for (const [i, file] of files.entries()) {
    log(`[${i + 1}/${files.length}] ${shown(file)}`);
    reports.push(await runNotebook(file, args));
  }
  return reports;
}

function parseArgs(argv: string[]): RunNotebooksArgs {
  const args: RunNotebooksArgs = { inputs: [] };
  for (const arg of argv) {
    const [flag, value] = arg.split(/=(.*)/s, 2);
    if (flag === '--timeout') {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`runNotebooks: --timeout must be a positive number of seconds; got ${JSON.stringify(value)}.`);
      args.cellTimeoutSeconds = n;
    } else if (flag === '--out') {
      if (!value) throw new Error('runNotebooks: --out must be a folder, as --out=DIR.');
      args.outDir = value;
    } else if (flag === '--check-clean') {
      args.checkClean = true;
    } else if (arg.startsWith('--')) {
      throw new Error(`runNotebooks: unknown option ${arg}; accepted: --timeout=SECONDS, --out=DIR, --check-clean, then notebook files or folders.`);
    } else {
      args.inputs!.push(arg);
    }
  }
  if (args.inputs!.length === 0) delete args.inputs;
  return args;
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
  let args: RunNotebooksArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
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
  console.log(`Running ${files.length} notebook(s), ${timeout} s per cell at most, into ${shown(args.outDir ?? DEFAULTS.outDir)}/`);
  const reports = await runNotebooks(args);
  console.log(`\n${summaryTable(reports)}`);
  const failed = reports.filter((r) => r.status !== 'ok');
  if (failed.length > 0) {
    console.error(`\n${failed.length} of ${reports.length} notebook(s) failed:\n`);
    for (const r of failed) console.error(`${describeFailure(r)}\n`);
    process.exit(1);
  }
}

if (process.argv.includes('--child')) childMain();
else if (require.main === module) void main();
