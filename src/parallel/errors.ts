/**
 * The two ways a worker can fail a window. Both leave the weights, the optimizer and the
 * counters as they were before the round of micro-batches that failed.
 */

/**
 * A worker threw while training on a micro-batch (the loss threw, a shape did not fit the
 * model, …). The round's micro-batches (those sent since the last reduce) are discarded on every
 * worker and the counters are rolled back; the accumulator stays usable.
 */
export class WorkerFailedError extends Error {
  override name = 'WorkerFailedError';
  constructor(
    message: string,
    /** The index of the worker that threw. */
    readonly worker: number,
    /** The stack trace inside the worker, when there was one. */
    readonly workerStack: string | null,
  ) {
    super(message);
  }
}

/**
 * A worker thread exited, crashed or could not start. Every other worker is terminated: the
 * accumulator is shut down, but `getState` still returns its state as of the start of the failed
 * round, to resume in a new `ParallelAccumulator` with `setState`.
 */
export class WorkerExitedError extends Error {
  override name = 'WorkerExitedError';
  constructor(
    message: string,
    /** The index of the worker that exited. */
    readonly worker: number,
  ) {
    super(message);
  }
}

/**
 * `dispose()` was called while this call was waiting for the workers: its micro-batches were
 * dropped with the workers, nothing was applied, and the accumulator is gone. Create a new one
 * (from `getState()` saved earlier) to go on.
 */
export class AccumulatorDisposedError extends Error {
  override name = 'AccumulatorDisposedError';
}

/**
 * The model uses a class (a custom layer, initializer, …) that the workers do not know, so they
 * cannot rebuild it from its JSON: list the module that registers it in `modules`. Thrown by
 * `create`, whose workers are then shut down; nothing else has changed.
 */
export class UnregisteredClassError extends Error {
  override name = 'UnregisteredClassError';
  constructor(
    message: string,
    /** The class the workers do not know, as the model's JSON names it. */
    readonly className: string,
  ) {
    super(message);
  }
}
