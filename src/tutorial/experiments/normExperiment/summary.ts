import { argumentError, verbatim } from '../../../core/errors';
import type { NormalizationKind } from '../../models';
import type { NormRunRecord } from './records';
import type { StatisticsDeviation } from './statistics';
import { ErrorComparison, TestErrorBar, compareErrorBars, testErrorBar } from './errorBars';

/** Seed-aggregated results of the BatchNorm experiment, and the lookups a reader needs on them. */

/** Seed-aggregated results of one (normalization, microBatchSize) pair. */
export interface NormSummaryRow {
  normalization: NormalizationKind;
  microBatchSize: number;
  seeds: number;
  /** Mean and sample standard deviation over seeds of the test error, in %. */
  testErrorMean: number;
  testErrorStd: number;
  /** The test error's error bar over seeds and test images (see {@link testErrorBar}). */
  testErrorBar: TestErrorBar;
  /** Mean over seeds of `testErrorRecomputed` in %, or null. */
  testErrorRecomputedMean: number | null;
  /** Per measured layer, `statisticsDeviation` averaged over seeds, or null. */
  statisticsDeviationMean: StatisticsDeviation[] | null;
  /** Mean training loss at the end, and its seed mean wall time. */
  finalLossMean: number;
  trainMsMean: number;
}

/** Groups records by (normalization, microBatchSize) and averages them over seeds. */
export function summarizeNormRuns(records: NormRunRecord[]): NormSummaryRow[] {
  const groups = new Map<string, NormRunRecord[]>();
  for (const r of records) {
    const key = `${r.normalization}|${r.microBatchSize}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((rs) => {
    const errors = rs.map((r) => 100 * r.testError);
    const recomputed = rs.map((r) => r.testErrorRecomputed).filter((v): v is number => v !== null);
    return {
      normalization: rs[0].normalization,
      microBatchSize: rs[0].microBatchSize,
      seeds: rs.length,
      testErrorMean: mean(errors),
      testErrorStd: std(errors),
      testErrorBar: testErrorBar(rs.map((r) => r.testError), Math.min(...rs.map((r) => r.testSize))),
      testErrorRecomputedMean: recomputed.length ? 100 * mean(recomputed) : null,
      statisticsDeviationMean: averageDeviation(rs.map((r) => r.statisticsDeviation)),
      finalLossMean: mean(rs.map((r) => r.finalLoss)),
      trainMsMean: mean(rs.map((r) => r.trainMs)),
    };
  });
}

function averageDeviation(runs: (StatisticsDeviation[] | null)[]): StatisticsDeviation[] | null {
  const present = runs.filter((r): r is StatisticsDeviation[] => r !== null);
  if (present.length === 0) return null;
  return present[0].map((first, k) => ({
    layer: first.layer,
    valuesPerStatistic: first.valuesPerStatistic,
    meanShift: mean(present.map((r) => r[k].meanShift)),
    scaleShift: mean(present.map((r) => r[k].scaleShift)),
  }));
}


/**
 * The summary row of one normalization at one micro-batch size.
 *
 * @throws If the experiment did not run that pair.
 */
export function summaryRowOf(result: { summary: NormSummaryRow[] }, normalization: NormalizationKind, microBatchSize: number): NormSummaryRow {
  return findRow('summaryRowOf', result, normalization, microBatchSize);
}

/** The row, or an error naming the API the reader called. */
function findRow(owner: string, result: { summary: NormSummaryRow[] }, normalization: NormalizationKind, microBatchSize: number): NormSummaryRow {
  const row = result.summary.find((r) => r.normalization === normalization && r.microBatchSize === microBatchSize);
  if (row === undefined) {
    const ran = result.summary.map((r) => `${r.normalization}@${r.microBatchSize}`).join(', ');
    throw argumentError(owner, '(normalization, microBatchSize)', `a pair the experiment ran (${ran})`, verbatim(`${JSON.stringify(normalization)} at ${microBatchSize}`));
  }
  return row;
}

/** The seed-mean test error (%) of one normalization at one micro-batch size; throws as {@link summaryRowOf}. */
export function testErrorOf(result: { summary: NormSummaryRow[] }, normalization: NormalizationKind, microBatchSize: number): number {
  return findRow('testErrorOf', result, normalization, microBatchSize).testErrorMean;
}

/**
 * Compares the test errors of two (normalization, microBatchSize) pairs of one or two
 * experiments: `difference` is the second minus the first, in points, and `separated` says
 * whether their error bars are apart.
 */
export function compareTestErrors(
  a: { result: { summary: NormSummaryRow[] }; normalization: NormalizationKind; microBatchSize: number },
  b: { result: { summary: NormSummaryRow[] }; normalization: NormalizationKind; microBatchSize: number },
): ErrorComparison {
  const bar = (x: typeof a) => findRow('compareTestErrors', x.result, x.normalization, x.microBatchSize).testErrorBar;
  return compareErrorBars(bar(a), bar(b));
}

/**
 * How much one normalization's test error (%) varies over the micro-batch sizes the experiment
 * ran: the largest minus the smallest seed-mean error. Near zero means the micro-batch size does
 * not matter to that normalization.
 */
export function testErrorSpread(result: { summary: NormSummaryRow[] }, normalization: NormalizationKind): number {
  const errors = result.summary.filter((r) => r.normalization === normalization).map((r) => r.testErrorMean);
  if (errors.length === 0) {
    throw argumentError('testErrorSpread', 'normalization', `one the experiment ran (${[...new Set(result.summary.map((r) => r.normalization))].join(', ')})`, normalization);
  }
  return Math.max(...errors) - Math.min(...errors);
}

/** The arithmetic mean. */
export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** The sample standard deviation (0 for fewer than two values). */
export function std(values: number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  return Math.sqrt(values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1));
}
