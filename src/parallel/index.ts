/**
 * tfjs-accumulate/parallel: data-parallel gradient accumulation across Node worker threads.
 * Node only (it uses `worker_threads`); the core entry stays free of it.
 */
export { ParallelAccumulator } from './parallelAccumulator';
export type { ParallelAccumulatorArgs } from './args';
export type { ParallelStepResult, ParallelUpdateResult, RoundReport } from './results';
export { WorkerExitedError, WorkerFailedError } from './errors';
export { TFJS_LOSS_NAMES } from './loss';
export type { LossFunction, LossOutput } from './loss';
export type { ParallelMicroBatch } from './microBatch';
export type { LossSpec, TransferableTensor } from './protocol';
export { PARALLEL_STATE_FORMAT } from './state';
export type { Averaging, ParallelAccumulatorState, ParallelCounters, ParallelWindow } from './state';
export { measureParallelWindow } from './measure';
export type { MeasureParallelArgs, ParallelMeasurement, ParallelWindowTiming } from './measure';
