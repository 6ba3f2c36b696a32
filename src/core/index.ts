/**
 * The core: gradient accumulation and small-batch normalization layers for TensorFlow.js, the
 * library itself, exported as the package root `tfjs-accumulate` (through src/index.ts). It is
 * kept deliberately small: the backend choice and the fast kernels live in
 * `tfjs-accumulate/backend` (src/backend/), and the tutorial's models, data, measurement, plots
 * and experiments in `tfjs-accumulate/tutorial` (src/tutorial/). Nothing in src/core/ imports
 * another part; test/project/importDirection.test.ts holds that. One export line (values, then types) per module, so
 * that a new module adds its own lines.
 */
export { addChecked } from './addChecked';
export type { CheckedSum } from './addChecked';
export { addIntoSums, averageGradients, globalNorm, clipByGlobalNorm, scaledGlobalNorm } from './accumulation';
export { GradientAccumulator, NonFiniteGradientError, checkVarList } from './gradientAccumulator';
export type { GradientAccumulatorArgs, Averaging, NonFinitePolicy, StepOptions, StepResult, UpdateResult, TrainableVariable } from './gradientAccumulator';
export { isBiasOrNormalization } from './accumulatorArgs';
export type { SkipLargeUpdatesArgs, WeightDecayArgs } from './accumulatorArgs';
export type { CountedLoss } from './lossGradient';
export { nextTokenLoss } from './nextTokenLoss';
export { gatherRows } from './gatherRows';
export { AccumulatingOptimizer, MissingCallbackError } from './accumulatingOptimizer';
export type { AccumulatingOptimizerArgs } from './accumulatingOptimizer';
export { checkEquivalence } from './equivalence';
export type { CheckEquivalenceArgs, EquivalenceReport, EquivalenceSuspect, VariableDifference } from './equivalence';
export { epochSchedule, epochScheduleTable } from './schedule';
export type { AccumulationSchedule, TrainingProgress } from './schedule';
export { stepDecay, warmupCosine } from './learningRate';
export type { LearningRateSchedule, StepDecayArgs, WarmupCosineArgs } from './learningRate';
export { MissingPeerDependencyError, TfjsCopiesError, UnsupportedTfjsVersionError } from './peers';
export { ACCUMULATOR_STATE_FORMAT } from './state';
export type { AccumulatorState, AccumulatorCore, Counters, OpenWindow, SerializedTensor, SetStateArgs } from './state';
export { groupNorm, GroupNormalization, groupNormalization } from './norm/groupNormalization';
export type { GroupNormalizationArgs } from './norm/groupNormalization';
export { FrozenBatchNormalization, frozenBatchNormalization, recomputeBatchNormStatistics } from './norm/frozenBatchNormalization';
export type { FrozenBatchNormalizationArgs } from './norm/frozenBatchNormalization';
export { BatchRenormalization, batchRenormalization } from './norm/batchRenormalization';
export type { BatchRenormalizationArgs } from './norm/batchRenormalization';
