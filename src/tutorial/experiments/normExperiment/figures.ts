import { PlotlyFigure, Series, lineChart } from '../../plot';
import type { NormalizationKind } from '../../models';
import { MOVING_STATISTICS, NormExperimentConfig, microBatchSizesOf } from './config';
import { ERROR_BAR_WIDTH } from './errorBars';
import { NormSummaryRow, mean } from './summary';
import type { NormRunRecord } from './records';

/** The BatchNorm experiment's figures, and the published numbers they are compared with. */

/**
 * Wu & He 2018 ("Group Normalization", Figure 1 / Table 2): ResNet-50 top-1 validation error
 * (%) on ImageNet by images per GPU, for BatchNorm and GroupNorm. The reference shape this
 * experiment looks for at small scale.
 */
export const WU_HE_2018 = {
  imagesPerGpu: [32, 16, 8, 4, 2],
  batchNorm: [23.6, 23.7, 24.8, 27.3, 34.7],
  groupNorm: [24.1, 24.2, 24.0, 24.2, 24.1],
} as const;

/** The figures of one experiment. */
export interface NormExperimentFigures {
  /** Test error (%) against microBatchSize, one line per normalization, error bars ±2 standard errors (seeds and test images). */
  testError: PlotlyFigure;
  /** Wu & He 2018's numbers, for comparison of shapes. */
  reference: PlotlyFigure;
  /** `"batch"` and `"batch-renorm"`: test error with moving vs recomputed statistics; null if neither ran. */
  recomputed: PlotlyFigure | null;
  /** `"batch"` (else `"batch-renorm"`): distance of micro-batch statistics from the population's, per layer; null if neither ran. */
  statistics: PlotlyFigure | null;
  /** Per normalization: training loss against updateStep, one line per microBatchSize (mean over seeds). */
  lossCurves: Partial<Record<NormalizationKind, PlotlyFigure>>;
}

/** Draws every figure of an experiment from its records and summary. */
export function normExperimentFigures(config: NormExperimentConfig, records: NormRunRecord[], summary: NormSummaryRow[]): NormExperimentFigures {
  // A normalization run at fewer sizes (microBatchSizesBy) draws only the points it has.
  const sizesOf = (n: NormalizationKind) => microBatchSizesOf(config, n);
  const rowsOf = (n: NormalizationKind) => sizesOf(n).map((m) => summary.find((s) => s.normalization === n && s.microBatchSize === m)!);
  const testError = lineChart({
    title: `Test error by micro-batch size (logical batch ${config.logicalBatchSize}, ${config.model.toUpperCase()} on MNIST, ${config.seeds.length} seed${config.seeds.length > 1 ? 's' : ''}; bars ±${ERROR_BAR_WIDTH} standard errors)`,
    xTitle: 'microBatchSize',
    yTitle: 'test error (%)',
    logX: true,
    series: config.normalizations.map((n) => ({
      name: n,
      x: sizesOf(n),
      y: rowsOf(n).map((r) => r.testErrorMean),
      errorY: rowsOf(n).map((r) => ERROR_BAR_WIDTH * r.testErrorBar.standardError),
    })),
  });
  const reference = lineChart({
    title: 'Reference: Wu & He 2018, ResNet-50 on ImageNet',
    xTitle: 'images per GPU (microBatchSize)',
    yTitle: 'top-1 error (%)',
    logX: true,
    series: [
      { name: 'BatchNorm', x: [...WU_HE_2018.imagesPerGpu], y: [...WU_HE_2018.batchNorm], dashed: true },
      { name: 'GroupNorm', x: [...WU_HE_2018.imagesPerGpu], y: [...WU_HE_2018.groupNorm], dashed: true },
    ],
  });
  const family = config.normalizations.filter((n) => MOVING_STATISTICS.includes(n));
  const recomputed =
    family.length === 0
      ? null
      : lineChart({
          title: 'Moving vs recomputed statistics at test time',
          xTitle: 'microBatchSize',
          yTitle: 'test error (%)',
          logX: true,
          series: family.flatMap((n): Series[] => [
            { name: `${n} (moving statistics)`, x: sizesOf(n), y: rowsOf(n).map((r) => r.testErrorMean) },
            { name: `${n} (recomputed statistics)`, x: sizesOf(n), y: rowsOf(n).map((r) => r.testErrorRecomputedMean ?? Number.NaN), dashed: true },
          ]),
        });
  const measured = (['batch', 'batch-renorm'] as const).find((n) => config.normalizations.includes(n));
  const deviations = measured ? rowsOf(measured).map((r) => r.statisticsDeviationMean) : [];
  const measuredSizes = measured ? sizesOf(measured) : [];
  const statistics =
    measured && deviations.every((d) => d !== null)
      ? lineChart({
          title: `Distance of micro-batch statistics from the population's (${measured}, after training)`,
          xTitle: 'microBatchSize',
          yTitle: 'distance (population std devs)',
          logX: true,
          logY: true,
          series: deviations[0]!.flatMap((d, k): Series[] => {
            const perSample = d.valuesPerStatistic / measuredSizes[0];
            const label = `layer ${d.layer} (${perSample} value${perSample > 1 ? 's' : ''} per sample)`;
            return [
              { name: `${label}: |mu_B - mu| / sigma`, x: measuredSizes, y: deviations.map((r) => r![k].meanShift) },
              { name: `${label}: |sigma_B / sigma - 1|`, x: measuredSizes, y: deviations.map((r) => r![k].scaleShift), dashed: true },
            ];
          }),
        })
      : null;
  const lossCurves: Partial<Record<NormalizationKind, PlotlyFigure>> = {};
  for (const n of config.normalizations) {
    lossCurves[n] = lineChart({
      title: `Training loss, ${n} normalization (mean over seeds, smoothed over 5 updates)`,
      xTitle: 'updateStep',
      yTitle: 'training loss (cross-entropy)',
      markers: false,
      series: sizesOf(n).map((m) => {
        const curves = records.filter((r) => r.normalization === n && r.microBatchSize === m).map((r) => r.lossCurve);
        const length = Math.min(...curves.map((c) => c.length));
        const averaged = Array.from({ length }, (_, k) => mean(curves.map((c) => c[k])));
        return { name: `microBatchSize ${m}`, x: averaged.map((_, k) => k + 1), y: smooth(averaged, 5) };
      }),
    });
  }
  // Their log axes are ticked at the sizes (1, 2, 4, …, 32) by lineChart itself (dataTicks).
  return { testError, reference, recomputed, statistics, lossCurves };
}

/** Trailing moving average over `window` points (shorter at the start). */
function smooth(values: number[], window: number): number[] {
  return values.map((_, i) => mean(values.slice(Math.max(0, i - window + 1), i + 1)));
}
