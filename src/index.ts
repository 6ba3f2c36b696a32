/**
 * tfjs-accumulate: gradient accumulation, small-batch normalization layers and the experiments
 * behind them, for TensorFlow.js. This file is the package's one public entry.
 */
export { addWeighted, averageGradients, globalNorm, clipByGlobalNorm, allFinite } from './accumulation';
export {
  GradientAccumulator,
  NonFiniteGradientError,
  checkVarList,
} from './gradientAccumulator';
export type {
  GradientAccumulatorArgs,
  Normalization,
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
export { epochSchedule } from './schedule';
export type { AccumulationSchedule, TrainingProgress } from './schedule';
export { ACCUMULATOR_STATE_FORMAT } from './state';
export type { AccumulatorState, SerializedTensor, SetStateArgs } from './state';
export { lineChart, baseLayout, PALETTE } from './plot';
export type { PlotlyFigure, PlotlyTrace, Series, LineChartArgs } from './plot';
