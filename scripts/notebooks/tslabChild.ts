/**
 * The tslab kernel child: a tslab kernel without ZeroMQ, started by tslabKernel.ts with
 * `fork(tslabChild.ts, [notebookDir])`. It drives tslab's own converter, executor and Jupyter
 * handler in-process, which keeps the kernel's semantics (type checking, top-level await,
 * `require('tslab')`, display data, execution counts), and talks to the runner over Node's IPC
 * channel. tslab is pinned to 1.0.22 in package.json because this file uses its internals
 * (`dist/converter`, `dist/executor`, `dist/jupyter`).
 */
import { performance } from 'node:perf_hooks';
import { format } from 'node:util';
import type { DisplayContent, KernelEvent } from './kernel';

/** What the runner sends: one cell to run (`cell` is its 1-based position), or stop. */
export type ToChild = { type: 'execute'; code: string; cell: number } | { type: 'shutdown' };
/** What the child sends: `ready` once, then kernel events. */
export type FromChild = { type: 'ready'; startupMs: number } | KernelEvent;

/**
 * Runs in the notebook's folder because tslab compiles relative to the current directory,
 * exactly as the kernel Jupyter starts there does.
 */
function childMain(notebookDir: string): void {
  const started = performance.now();
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

  // The cell being run, and the one run last: an error nobody handles is charged to the first,
  // or when the kernel is idle between cells, to the second.
  let running: number | null = null;
  let last: number | null = null;
  // Note: tslab's own kernel prints such errors to the current cell's stderr and carries on, so
  // the cell passes. Here they fail the notebook: a claim checked in a promise nobody awaits
  // must not pass unseen.
  const unhandled = (origin: 'unhandledRejection' | 'uncaughtException') => (reason: unknown) =>
    send({ type: 'unhandled', origin, text: format(reason), cell: running ?? last, running: running !== null });
  process.on('uncaughtException', unhandled('uncaughtException'));
  process.on('unhandledRejection', unhandled('unhandledRejection'));

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
    running = msg.cell;
    let done: KernelEvent & { type: 'done' };
    try {
      const reply = await handler.handleExecute({ code: msg.code }, writeStream, writeDisplayData);
      done = { type: 'done', status: reply.status, executionCount: reply.execution_count ?? null, durationMs: performance.now() - t0 };
    } catch (e) {
      // tslab itself failed (not the cell's code, whose errors handleExecute reports).
      send({ type: 'error', text: `tslab failed to execute the cell: ${format(e)}` });
      done = { type: 'done', status: 'error', executionCount: null, durationMs: performance.now() - t0 };
    }
    // Node reports a rejection without a handler once the microtasks have run; one turn of the
    // event loop lets a promise the cell dropped be charged to this cell, not the next.
    await new Promise((resolve) => setImmediate(resolve));
    last = running;
    running = null;
    send(done);
  });
  send({ type: 'ready', startupMs: performance.now() - started });
}

if (require.main === module) childMain(process.argv[2]);
