import { argumentError, isPositiveInteger } from '../../../core/errors';

/**
 * The error bars of the BatchNorm experiment, and the one rule its prose follows: a difference
 * is stated as a difference only where the two error bars do not overlap.
 */

/** How many standard errors an error bar reaches either side of its mean (about 95%). */
export const ERROR_BAR_WIDTH = 2;

/** A test error (%) over seeds, with its standard errors (percentage points). */
export interface TestErrorBar {
  /** Mean over seeds, %. */
  mean: number;
  /** Sample standard deviation over seeds / sqrt(seeds); 0 for one seed. */
  seedStandardError: number;
  /** sqrt(p (1 - p) / n) at the mean error p on n test images: the test set's own sampling noise. */
  binomialStandardError: number;
  /** sqrt(seed² + binomial²): the two add, since every seed is scored on the same test images. */
  standardError: number;
  /** mean ∓ ERROR_BAR_WIDTH × standardError. */
  low: number;
  high: number;
}

/** Sample standard deviation / sqrt(n) of the values; 0 for a single value. */
export function seedStandardError(values: readonly number[]): number {
  if (!Array.isArray(values) || values.length === 0 || !values.every(Number.isFinite)) {
    throw argumentError('seedStandardError', 'values', 'a non-empty array of finite numbers', values);
  }
  if (values.length < 2) return 0;
  const m = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, v) => a + (v - m) ** 2, 0) / (values.length - 1);
  return Math.sqrt(variance / values.length);
}

/**
 * The binomial standard error of an error rate measured on `testSize` images, in the unit of
 * `rate` (a fraction in [0, 1]).
 */
export function binomialStandardError(rate: number, testSize: number): number {
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) throw argumentError('binomialStandardError', 'rate', 'a fraction in [0, 1]', rate);
  if (!isPositiveInteger(testSize)) throw argumentError('binomialStandardError', 'testSize', 'a positive integer', testSize);
  return Math.sqrt((rate * (1 - rate)) / testSize);
}

/** The error bar of test errors (fractions, one per seed) measured on `testSize` images, in %. */
export function testErrorBar(errors: readonly number[], testSize: number): TestErrorBar {
  if (!Array.isArray(errors) || errors.length === 0 || !errors.every((e) => typeof e === 'number' && e >= 0 && e <= 1)) {
    throw argumentError('testErrorBar', 'errors', 'a non-empty array of fractions in [0, 1]', errors);
  }
  const percent = errors.map((e) => 100 * e);
  const mean = percent.reduce((a, b) => a + b, 0) / percent.length;
  const seed = seedStandardError(percent);
  const binomial = 100 * binomialStandardError(mean / 100, testSize);
  const standardError = Math.hypot(seed, binomial);
  return {
    mean,
    seedStandardError: seed,
    binomialStandardError: binomial,
    standardError,
    low: mean - ERROR_BAR_WIDTH * standardError,
    high: mean + ERROR_BAR_WIDTH * standardError,
  };
}

/** Two test errors compared: b - a in points, and whether their error bars are apart. */
export interface ErrorComparison {
  /** b.mean - a.mean, percentage points. */
  difference: number;
  /** True when the bars do not overlap: only then does the chapter call it a difference. */
  separated: boolean;
}

/** Compares two error bars; touching bars count as overlapping. */
export function compareErrorBars(a: TestErrorBar, b: TestErrorBar): ErrorComparison {
  for (const [name, bar] of [['a', a], ['b', b]] as const) {
    if (bar === null || typeof bar !== 'object' || !Number.isFinite(bar.low) || !Number.isFinite(bar.high)) {
      throw argumentError('compareErrorBars', name, 'a TestErrorBar', bar);
    }
  }
  return { difference: b.mean - a.mean, separated: a.high < b.low || b.high < a.low };
}
