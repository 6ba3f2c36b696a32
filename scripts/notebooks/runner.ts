/**
 * The runner: executes notebooks headless, one kernel process per notebook, cells sent one by
 * one, and writes executed copies (outputs, execution counts, per-cell timing) under
 * build/notebooks/. The sources are only read, so they stay clean. A cell that throws, fails to
 * type-check, leaves an error unhandled, runs past its timeout or kills its kernel fails the
 * notebook there, and the report names the cell.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { checkJobs, checkOutputBytes, checkTimeoutSeconds, DEFAULTS, NOTEBOOKS_ROOT, type RunNotebooksArgs } from './args';
import { measuresTime } from './measuresTime';
import { Slots } from './slots';
import type { Kernel, KernelDriver, KernelEvent } from './kernel';
import { formatBytes, OutputBudget, truncateUtf8, type CellBudget } from './outputCap';
import {
  cellSource,
  firstLine,
  loadNotebook,
  normalizeBundle,
  pushStream,
  REPORT_KEY,
  uncleanReason,
  type CellTiming,
  type FailureKind,
  type Notebook,
  type NotebookReport,
  type Output,
} from './nbformat';
import { TSLAB } from './tslabKernel';

/** The kernels the runner can drive, by name; notebooks run under `tslab`. */
export const KERNELS: Record<string, KernelDriver> = { tslab: TSLAB };

/** Longest delay Node's timers accept; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Keeps the notebook's stack frames and drops the harness's (vm, tslab, this runner). */
export function cleanErrorText(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s+at .*(node:vm|[\\/]tslab[\\/]dist[\\/]|scripts[\\/]notebooks[\\/]|node:internal)/.test(l))
    .join('\n')
    .trimEnd();
}

/** Splits error text into nbformat's ename/evalue: "TypeError: boom" → TypeError, boom. */
function errorOutput(kind: Exclude<FailureKind, 'invalid'>, text: string): Output & { output_type: 'error' } {
  const lines = text.split('\n');
  let ename = kind === 'timeout' ? 'CellTimeoutError' : kind === 'crash' ? 'KernelDiedError' : 'Error';
  let evalue = lines.find((l) => l.trim() !== '') ?? '';
  const named = lines.map((l) => /^(?:Uncaught )?([A-Z][A-Za-z]*(?:Error|Exception)): (.*)$/.exec(l)).find(Boolean);
  if ((kind === 'error' || kind === 'unhandled') && named) [, ename, evalue] = named;
  else if (kind === 'error' && /^\d+:\d+ - /.test(evalue)) ename = 'TypeScriptError';
  return { output_type: 'error', ename, evalue, traceback: lines };
}

interface CellRun {
  status: 'ok' | 'error' | 'timeout' | 'crash';
  executionCount: number | null;
  durationMs: number;
  why?: string;
  /** What the kernel reported for a failed cell. */
  errorText?: string;
}

/** An error no cell caught, as the kernel reported it. */
interface Unhandled {
  origin: 'unhandledRejection' | 'uncaughtException';
  text: string;
  cell: number | null;
  running: boolean;
}

/** A display's size as the cap counts it: its bundle as JSON. */
const bundleBytes = (data: unknown): number => Buffer.byteLength(JSON.stringify(data) ?? '');

/**
 * Sends one cell and collects its outputs until the kernel answers, dies or times out. Errors
 * nobody handled are collected into `unhandled`, whichever cell the kernel charges them to.
 * Outputs past the cell's `budget` are dropped, with a note in their place (outputCap.ts).
 */
function executeCell(
  kernel: Kernel,
  cell: { code: string; index: number },
  outputs: Output[],
  displays: Map<string, Output>,
  unhandled: Unhandled[],
  timeoutMs: number,
  budget: CellBudget,
): Promise<CellRun> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const errors: string[] = [];
    const timer = Number.isFinite(timeoutMs)
      ? setTimeout(() => {
          kernel.kill();
          resolve({ status: 'timeout', executionCount: null, durationMs: performance.now() - t0 });
        }, timeoutMs)
      : undefined;
    kernel.onExit((why) => {
      clearTimeout(timer);
      resolve({ status: 'crash', executionCount: null, durationMs: performance.now() - t0, why });
    });
    /** Set when the budget first refuses output: the note goes after what the event kept. */
    let noteDue = false;
    /** Keeps `bytes` of new output if the budget allows. */
    const allow = (bytes: number, whole: boolean): number => {
      const wasTruncated = budget.truncated;
      const n = budget.allow(bytes, whole);
      noteDue ||= budget.truncated !== undefined && wasTruncated === undefined;
      return n;
    };
    kernel.onEvent((msg) => {
      collect(msg);
      if (noteDue) outputs.push(budget.note());
      noteDue = false;
    });
    const collect = (msg: KernelEvent): void => {
      if (msg.type === 'stream') {
        const bytes = Buffer.byteLength(msg.text);
        const kept = allow(bytes, false);
        if (kept > 0) pushStream(outputs, msg.name, kept === bytes ? msg.text : truncateUtf8(msg.text, kept));
      } else if (msg.type === 'error') errors.push(msg.text);
      else if (msg.type === 'unhandled') unhandled.push(msg);
      else if (msg.type === 'display') {
        const id = msg.content.transient?.display_id;
        const data = normalizeBundle(msg.content.data);
        const existing = id ? displays.get(id) : undefined;
        if (msg.update && existing && existing.output_type === 'display_data') {
          // An update in place counts what it adds; one that would pass the cap is dropped.
          const growth = bundleBytes(data) - bundleBytes(existing.data);
          if (growth <= 0 || allow(growth, true) === growth) existing.data = data;
        } else if (!msg.update && allow(bundleBytes(data), true) > 0) {
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
    };
    kernel.execute(cell.code, cell.index);
  });
}

/** The text of an error nobody handled: what it was, where, and its own message and stack. */
function unhandledText(u: Unhandled): string {
  const what =
    u.origin === 'unhandledRejection'
      ? 'a promise rejected and nothing handled it; await the promise, or catch its error, in the cell that starts it'
      : 'an exception was thrown outside any cell (a timer, an event) and nothing caught it; catch it in that callback';
  const when = u.running ? 'while this cell was running' : 'after this cell had finished';
  return `${cleanErrorText(u.text) || '(no message)'}\n(${when}: ${what})`;
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A path as the user would type it: relative to the current folder when inside it. */
export function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(file) : rel;
}

/**
 * Where a notebook's executed copy goes: its path below `root` (the tutorial's notebook folder)
 * kept under `outDir`, or for a notebook outside `root`, its file name directly in `outDir`.
 */
export function outPath(file: string, outDir: string, root: string = NOTEBOOKS_ROOT): string {
  const rel = path.relative(path.resolve(root), path.resolve(file));
  const inside = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  return path.join(path.resolve(outDir), inside ? rel : path.basename(file));
}

/**
 * Runs one notebook and writes its executed copy. Problems with the notebook go in the report;
 * only bad arguments throw (a {@link RunnerArgumentError}).
 */
export async function runNotebook(file: string, args: RunNotebooksArgs = {}): Promise<NotebookReport> {
  const log = args.log ?? ((line: string) => console.log(line));
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  const timeoutMs = checkTimeoutSeconds(args.cellTimeoutSeconds ?? DEFAULTS.cellTimeoutSeconds) * 1000;
  const limits = { cellBytes: checkOutputBytes('maxCellOutputBytes', args.maxCellOutputBytes ?? DEFAULTS.maxCellOutputBytes), notebookBytes: checkOutputBytes('maxNotebookOutputBytes', args.maxNotebookOutputBytes ?? DEFAULTS.maxNotebookOutputBytes) };
  const budget = new OutputBudget(limits);
  const driver = KERNELS.tslab;
  const report: NotebookReport = { file, status: 'ok', executedCells: 0, codeCells: 0, totalMs: 0, startupMs: 0, cells: [] };
  const t0 = performance.now();
  let nb: Notebook;
  try {
    nb = loadNotebook(file, driver.kernelspecName);
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

  /** Fails the notebook at `cell` (1-based), with an error output in that cell. */
  const fail = (cell: number, kind: Exclude<FailureKind, 'invalid'>, text: string): void => {
    executed.cells[cell - 1].outputs!.push(errorOutput(kind, text));
    report.status = 'failed';
    report.error = { cell, firstLine: firstLine(cellSource(executed.cells[cell - 1])), kind, text };
  };
  const unhandled: Unhandled[] = [];
  /** Fails the notebook on the first error nobody handled, if there was one; true if so. */
  const failOnUnhandled = (): boolean => {
    const [first] = unhandled;
    if (!first || report.status !== 'ok') return false;
    if (first.cell === null) {
      // Before any cell: the kernel's own start-up left it.
      report.status = 'failed';
      report.error = { kind: 'unhandled', text: `${cleanErrorText(first.text)}\n(while the kernel was starting)` };
    } else {
      fail(first.cell, 'unhandled', unhandledText(first));
    }
    log(`  UNHANDLED in cell ${first.cell ?? '(none)'}: ${first.text.split('\n')[0]}`);
    return true;
  };

  const kernel = driver.start(path.dirname(path.resolve(file)));
  try {
    report.startupMs = Math.round(await kernel.ready(Math.min(Math.max(timeoutMs, 120_000), MAX_TIMER_MS)));
    log(`  kernel ready in ${seconds(report.startupMs)}`);
    const displays = new Map<string, Output>();
    for (const [index, cell] of executed.cells.entries()) {
      const code = cellSource(cell);
      if (cell.cell_type !== 'code' || code.trim() === '') continue;
      const outputs = cell.outputs!;
      const startedAt = new Date();
      const cellBudget = budget.cell();
      const run = await executeCell(kernel, { code, index: index + 1 }, outputs, displays, unhandled, timeoutMs, cellBudget);
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
      if (cellBudget.truncated) log(`  output of cell ${index + 1} truncated at the ${cellBudget.truncated}'s cap (${formatBytes(cellBudget.truncated === 'cell' ? limits.cellBytes : limits.notebookBytes)})`);
      if (run.status === 'ok') {
        if (failOnUnhandled()) break;
        continue;
      }
      let text: string;
      if (run.status === 'error') {
        text = cleanErrorText(run.errorText ?? '') || 'the cell failed without reporting an error';
      } else if (run.status === 'timeout') {
        text = `the cell did not finish within ${timeoutMs / 1000} s (per-cell timeout; raise it with --timeout=SECONDS) and was killed`;
      } else {
        text = `${run.why}${kernel.log() ? `\n${kernel.log()}` : ''}`;
      }
      fail(index + 1, run.status, text);
      break;
    }
  } catch (e) {
    report.status = 'failed';
    report.error = { kind: 'crash', text: (e as Error).message };
  } finally {
    await kernel.shutdown(2000);
  }
  // An error raised after the last cell finished, before the kernel stopped.
  failOnUnhandled();
  report.totalMs = Math.round(performance.now() - t0);

  const { file: _source, outFile: _out, ...record } = report;
  executed.metadata[REPORT_KEY] = { runner: { ...record, executedAt: new Date().toISOString() } };
  report.outFile = outPath(file, outDir);
  fs.mkdirSync(path.dirname(report.outFile), { recursive: true });
  // Written beside and renamed over, so that a reader of the output folder (the unit tests that
  // check the executed Chinese notebooks run beside the runner in npm test) sees the previous file
  // or the whole new one, never half of it; the name ends in .tmp, which no reader lists.
  const partial = `${report.outFile}.${process.pid}.tmp`;
  fs.writeFileSync(partial, JSON.stringify(executed, null, 1) + '\n');
  fs.renameSync(partial, report.outFile);
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

/** Runs every notebook (one process each, in order) and returns their reports. */
export async function runNotebooks(args: RunNotebooksArgs = {}): Promise<NotebookReport[]> {
  const log = args.log ?? ((line: string) => console.log(line));
  checkTimeoutSeconds(args.cellTimeoutSeconds ?? DEFAULTS.cellTimeoutSeconds);
  const files = collectNotebooks(args.inputs ?? DEFAULTS.inputs);
  const outDir = path.resolve(args.outDir ?? DEFAULTS.outDir);
  if (args.inputs === undefined && fs.existsSync(outDir)) {
    // A run of every notebook owns the folder: executed copies of notebooks that were renamed or
    // removed would otherwise end up in the site.
    const current = new Set(files.map((f) => outPath(f, outDir)));
    for (const f of fs.readdirSync(outDir, { recursive: true }) as string[]) {
      if (f.endsWith('.ipynb') && !current.has(path.join(outDir, f))) fs.rmSync(path.join(outDir, f));
    }
  }
  const jobs = checkJobs(args.jobs ?? DEFAULTS.jobs);
  const header = (i: number): string => `[${i + 1}/${files.length}] ${shown(files[i])}`;
  const reports: NotebookReport[] = [];
  if (jobs === 1) {
    for (const i of files.keys()) {
      log(header(i));
      reports.push(await runNotebook(files[i], args));
    }
    return reports;
  }
  // Side by side, each notebook's lines are kept and printed together when it ends, so that a
  // log reads one notebook at a time; the reports keep the order of the files.
  const slots = new Slots(jobs);
  await Promise.all(
    files.map((file, i) => {
      const alone = measuresTime(file);
      return slots.run(alone ? jobs : 1, async () => {
        const lines: string[] = alone ? ['  ran alone: it measures time'] : [];
        reports[i] = await runNotebook(file, { ...args, log: (line) => lines.push(line) });
        for (const line of [header(i), ...lines]) log(line);
      });
    }),
  );
  return reports;
}
