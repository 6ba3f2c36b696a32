import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { AccumulatorDisposedError, UnregisteredClassError, WorkerExitedError, WorkerFailedError } from './errors';
import type { FromWorker, ReplicaInit, ToWorker } from './protocol';

type Reply = Exclude<FromWorker, { type: 'ready' } | { type: 'failed' }>;
type Ready = Extract<FromWorker, { type: 'ready' }>;

interface Pending {
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

/**
 * Starts a worker running `worker.ts`/`worker.js` from this folder.
 *
 * From `dist/` (users, notebooks) the compiled `worker.js` sits next to this module. Under `tsx`
 * (tests, scripts run from `src/`) the worker is TypeScript: `--import tsx` in a worker's
 * `execArgv` does not reach the worker's own entry on Node 20, so a one-line CommonJS bootstrap
 * registers tsx's require hook and then loads `worker.ts`.
 *
 * Note: `execArgv` is always given (empty for `dist/`), so a worker never inherits flags such as
 * `--test` from the process that started it.
 */
export function startWorker(workerData: ReplicaInit): Worker {
  if (__filename.endsWith('.ts')) {
    const script = join(__dirname, 'worker.ts');
    return new Worker(`require('tsx/cjs'); require(${JSON.stringify(script)});`, { eval: true, workerData, execArgv: [] });
  }
  return new Worker(join(__dirname, 'worker.js'), { workerData, execArgv: [] });
}

/**
 * The worker threads of one `ParallelAccumulator`: start-up, requests matched to replies by id,
 * and failure. A worker that exits, crashes or reports a start-up error marks the whole pool
 * failed; every request then rejects with {@link WorkerExitedError}.
 *
 * Workers are unreferenced while nothing is awaited from them, so a program that forgets
 * `dispose()` still exits; a pending request keeps the process alive until its reply arrives.
 */
export class WorkerPool {
  private readonly pending = new Map<number, Pending & { worker: number }>();
  private nextId = 1;
  private failure: WorkerExitedError | null = null;
  private closing: Promise<void> | null = null;

  private constructor(private readonly workers: Worker[]) {
    workers.forEach((w, i) => {
      w.on('message', (m: FromWorker) => this.receive(i, m));
      w.on('error', (e) => this.fail(i, `worker ${i} crashed: ${e instanceof Error ? e.message : String(e)}`));
      w.on('exit', (code) => this.fail(i, `worker ${i} exited (code ${code})`));
    });
  }

  /** Starts `count` workers and waits until each has built its replica. */
  static async start(count: number, init: (index: number) => ReplicaInit): Promise<{ pool: WorkerPool; ready: Ready[] }> {
    const workers: Worker[] = [];
    const ready = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => {
        const worker = startWorker(init(i));
        workers.push(worker);
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const listeners: [string, (...args: any[]) => void][] = [];
        return new Promise<Ready>((resolve, reject) => {
          listeners.push(
            ['message', (m: FromWorker) => {
              if (m.type === 'ready') resolve(m);
              // A class the model needs is missing: the arguments' fault, not the thread's.
              else if (m.type === 'failed' && m.unregisteredClass !== undefined) reject(new UnregisteredClassError(m.message, m.unregisteredClass));
              else if (m.type === 'failed') reject(new WorkerExitedError(`worker ${i} could not start: ${m.message}`, i));
            }],
            ['error', (e: Error) => reject(new WorkerExitedError(`worker ${i} could not start: ${e.message}`, i))],
            ['exit', (code: number) => reject(new WorkerExitedError(`worker ${i} exited during start-up (code ${code})`, i))],
          );
          for (const [event, fn] of listeners) worker.on(event, fn);
          // Only our own listeners come off: Worker keeps internal ones that receiving depends on.
        }).finally(() => listeners.forEach(([event, fn]) => worker.off(event, fn)));
      }),
    );
    const failed = ready.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw failed.reason;
    }
    const pool = new WorkerPool(workers);
    workers.forEach((w) => w.unref());
    return { pool, ready: ready.map((r) => (r as PromiseFulfilledResult<Ready>).value) };
  }

  /** Number of workers. */
  get size(): number {
    return this.workers.length;
  }

  /** The error that shut the pool down, if any. */
  get failed(): WorkerExitedError | null {
    return this.failure;
  }

  /** Sends a message that expects no reply. */
  post(worker: number, message: ToWorker, transfer: ArrayBuffer[] = []): void {
    if (this.failure) throw this.failure;
    this.workers[worker].postMessage(message, transfer);
  }

  /** Sends a request (the id is filled in) and resolves with the worker's reply. */
  request(worker: number, message: Extract<ToWorker, { id: number }>): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new AccumulatorDisposedError('ParallelAccumulator: its workers were terminated (dispose); create a new one.'));
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, worker });
      this.workers[worker].ref();
      this.workers[worker].postMessage({ ...message, id });
    });
  }

  /**
   * Terminates every worker and waits until their threads are gone. A request still waiting for
   * its reply rejects with {@link AccumulatorDisposedError} (its worker will never answer).
   */
  terminate(): Promise<void> {
    if (this.closing === null) {
      const error = new AccumulatorDisposedError('ParallelAccumulator: disposed while this call waited for its workers; its micro-batches were dropped and nothing was applied.');
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
      this.closing = Promise.all(this.workers.map((w) => w.terminate())).then(() => undefined);
    }
    return this.closing;
  }

  private receive(worker: number, message: FromWorker): void {
    if (message.type === 'ready') return;
    const id = message.id;
    const entry = id === null ? undefined : this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id as number);
    if (![...this.pending.values()].some((p) => p.worker === worker)) this.workers[worker].unref();
    if (message.type === 'failed') entry.reject(new WorkerFailedError(`worker ${worker} failed: ${message.message}`, worker, message.stack));
    else entry.resolve(message);
  }

  private fail(worker: number, message: string): void {
    if (this.closing || this.failure) return;
    this.failure = new WorkerExitedError(`${message}; every worker of this ParallelAccumulator was shut down`, worker);
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    // The other threads hold replicas of a model whose window can no longer complete.
    void this.terminate();
  }
}
