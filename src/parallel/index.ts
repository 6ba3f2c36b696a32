/**
 * tfjs-accumulate/parallel: data-parallel gradient accumulation across Node worker threads.
 * Node only (it uses `worker_threads`); the core entry stays free of it.
 */
export { ParallelAccumulator } from './parallelAccumulator';
export type { ParallelAccumulatorArgs } from './args';
export { WORKERS_PER_CORE, maxWorkers } from './args';
export type { ParallelStepResult, ParallelUpdateResult, RoundReport } from './results';
export { AccumulatorDisposedError, UnregisteredClassError, WorkerExitedError, WorkerFailedError } from './errors';
export { TFJS_LOSS_NAMES } from './loss';
export type { LossFunction, LossOutput, MultiOutputLossFunction } from './loss';
export type { MicroBatchTensor, ParallelMicroBatch } from './microBatch';
export type { LossSpec, TransferableTensor } from './protocol';
export { PARALLEL_STATE_FORMAT } from './state';
export type { Averaging, LegacyParallelState, ParallelAccumulatorState } from './state';
export type { WorkerTiming } from './protocol';
export { measureParallelWindow } from './measure';
export { taskCpuNs } from './threadClock';
export type { MeasureParallelArgs, ParallelMeasurement, ParallelWindowTiming } from './measure';
export { measureProcessLimit } from './processLimit';
export type { ProcessLimit, ProcessLimitArgs } from './processLimit';
