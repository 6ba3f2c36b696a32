/**
 * tfjs-accumulate: gradient accumulation, small-batch normalization layers and the experiments
 * behind them, for TensorFlow.js. This file is the package's one public entry.
 */
export { addWeighted, averageGradients, globalNorm, clipByGlobalNorm, scaledGlobalNorm, nonFiniteProbe } from './accumulation';
export {
  GradientAccumulator,
  NonFiniteGradientError,
  checkVarList,
} from './gradientAccumulator';
export { isBiasOrNormalization } from './accumulatorArgs';
export type { SkipLargeUpdatesArgs, WeightDecayArgs } from './accumulatorArgs';
export type { CountedLoss } from './lossGradient';
export { warmupCosine, stepDecay } from './learningRate';
export type { LearningRateSchedule, WarmupCosineArgs, StepDecayArgs } from './learningRate';
export type {
  GradientAccumulatorArgs,
  Averaging,
  NonFinitePolicy,
  StepOptions,
  StepResult,
  UpdateResult,
  TrainableVariable,
} from './gradientAccumulator';
export { AccumulatingOptimizer } from './accumulatingOptimizer';
export type { AccumulatingOptimizerArgs } from './accumulatingOptimizer';
export { checkEquivalence } from './equivalence';
export type { CheckEquivalenceArgs, EquivalenceReport, EquivalenceSuspect, VariableDifference } from './equivalence';
export { epochSchedule, epochScheduleTable } from './schedule';
export type { AccumulationSchedule, TrainingProgress } from './schedule';
export { ACCUMULATOR_STATE_FORMAT } from './state';
export type { AccumulatorState, AccumulatorCore, Counters, OpenWindow, SerializedTensor, SetStateArgs } from './state';
export { lineChart, barChart, baseLayout, PALETTE, PLOTLY_MIME, figureBundle, showFigure, figureText, figureSvg } from './plot';
export type { PlotlyFigure, PlotlyTrace, Series, LineChartArgs, BarChartArgs, DisplayBundle } from './plot';
export { groupNorm, GroupNormalization, groupNormalization } from './norm/groupNormalization';
export type { GroupNormalizationArgs } from './norm/groupNormalization';
export { FrozenBatchNormalization, frozenBatchNormalization, recomputeBatchNormStatistics } from './norm/frozenBatchNormalization';
export type { FrozenBatchNormalizationArgs } from './norm/frozenBatchNormalization';
export { BatchRenormalization, batchRenormalization } from './norm/batchRenormalization';
export type { BatchRenormalizationArgs } from './norm/batchRenormalization';
export { simpleNet, mlp, cnn, NORMALIZATIONS, ARTICLE_SETUP } from './models';
export type { SimpleNetArgs, DigitModelArgs, NormalizationKind } from './models';
export { syntheticMicroBatches, syntheticBatch, splitIntoMicroBatches } from './data/synthetic';
export type { MicroBatch, SyntheticDataArgs } from './data/synthetic';
export { loadMnist, mnistMicroBatches } from './data/mnist';
export type { MnistData, MnistSplit, MnistArgs, MicroBatchIteratorArgs } from './data/mnist';
export { seededRandom, seededNormal, shuffledIndices } from './data/random';
export { runNormExperiment, batchStatisticsDeviation, NORM_EXPERIMENT_PRESETS, WU_HE_2018 } from './experiments/normExperiment';
export type {
  NormExperimentArgs,
  NormExperimentProgress,
  NormExperimentResult,
  NormRunRecord,
  NormSummaryRow,
  StatisticsDeviation,
} from './experiments/normExperiment';
export { selectBackend, describeEnvironment, BACKEND_PREFERENCES, BACKEND_ENV_VAR } from './backend';
export type { BackendPreference, SelectBackendArgs, EnvironmentReport } from './backend';
export { installFastKernels, uninstallFastKernels, installedFastKernels, FAST_KERNEL_BACKENDS } from './kernels';
export type { KernelReplacement, FastKernelBackend } from './kernels';
export { measureAccumulation, peakBytesAbove, timeCall } from './measure';
export type { AccumulationMeasurement, MeasureAccumulationArgs, TimeCallArgs, Timing } from './measure';
