/**
 * `tfjs-accumulate/tutorial`: what the notebooks, scripts and the site use around the library:
 * the article's setup and models, the data (synthetic and MNIST), measurement, the charts and
 * their notebook display, and the normalization experiment. It is scaffolding for the tutorial,
 * not the library's API, so it may change with the chapters.
 */
export { simpleNet, mlp, cnn, NORMALIZATIONS, ARTICLE_SETUP } from './models';
export type { SimpleNetArgs, DigitModelArgs, NormalizationKind } from './models';
export { normalizationName } from './normalizationName';
export { syntheticMicroBatches, syntheticBatch, splitIntoMicroBatches } from './data/synthetic';
export type { MicroBatch, SyntheticDataArgs } from './data/synthetic';
export { loadMnist, mnistMicroBatches } from './data/mnist';
export type { MnistData, MnistSplit, MnistArgs, MicroBatchIteratorArgs } from './data/mnist';
export { seededRandom, seededNormal, shuffledIndices } from './data/random';
export { measureAccumulation, median, peakBytesAbove, stepFlops, timeCall, timeCalls } from './measure';
export { timeTrainingStep } from './stepTimer';
export type { TimeTrainingStepArgs } from './stepTimer';
export { weightsOf, maxRelativeDifference, updateNorm, updateRelativeError } from './weights';
export type { WeightSnapshot } from './weights';
export type { RecordedParallelRun, RecordedTrainer } from './recordedRuns';
export { RECORDED_PARALLEL_WINDOW } from './recorded/parallelWindow';
export type { AccumulationMeasurement, MeasureAccumulationArgs, TimeCallArgs, Timing } from './measure';
export { lineChart, barChart, baseLayout, PALETTE, PLOTLY_MIME, figureBundle, showFigure, figureText, figureTextLabel, figureAriaLabel, figureSvg, showTable, tableBundle } from './plot';
export { formatNumber, joinSentences, spacesAfterChinesePunctuation, setLocale, activeLocale, translateText, looksEnglish, localizeFigure, figureLocale, MissingTranslationError } from './plot';
export type { PlotlyFigure, PlotlyTrace, Series, LineChartArgs, BarChartArgs, DisplayBundle, FigureArgs, TableRow, TableArgs, TableBundle, DisplayLocale, FormatNumberArgs } from './plot';
export {
  runNormExperiment,
  batchStatisticsDeviation,
  testErrorOf,
  testErrorSpread,
  summaryRowOf,
  compareTestErrors,
  testErrorBar,
  compareErrorBars,
  seedStandardError,
  binomialStandardError,
  renormSchedule,
  microBatchSizesOf,
  resolveNormExperimentConfig,
  ERROR_BAR_WIDTH,
  NORM_EXPERIMENT_PRESETS,
  WU_HE_2018,
} from './experiments/normExperiment';
export type { NormExperimentArgs, NormExperimentConfig, NormExperimentProgress, NormExperimentResult, NormRunRecord, NormSummaryRow, StatisticsDeviation, TestErrorBar, ErrorComparison, RenormSchedule } from './experiments/normExperiment';
export { check, showMarkdown, markdownBundle, CheckFailedError, CHECK_MARK } from './check';
export { loadMobyDick, MOBY_DICK_PACKAGE, CharTokenizer, ALPHABET, PAD, START, bookSentences, tokenBatch, tokenBatches, causalMask, causalSelfAttention, TinyGpt, generateText, recomputedGradients, measureUpdatePeak } from './lm';
export type { BookChapter, BookSentencesArgs, TokenBatch, TinyGptArgs, GenerateTextArgs, RecomputedGradients, MeasureUpdatePeakArgs, UpdatePeak } from './lm';
