/**
 * `tfjs-accumulate/parallel`: data-parallel gradient accumulation across Node worker threads,
 * one exact update per window. Node only (it starts `worker_threads` and loads its worker
 * script from disk), so it has an entry of its own and the browser-safe root never loads it.
 */
export * from '../parallel';
// The measurement of a parallel window against one thread (the bench and chapter 8 use it).
export { measureParallelWindow } from '../parallel/measure';
export type { ParallelMeasurement, MeasureParallelArgs, ParallelWindowTiming } from '../parallel/measure';
