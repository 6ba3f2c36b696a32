import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ERROR_BAR_WIDTH,
  binomialStandardError,
  compareErrorBars,
  seedStandardError,
  testErrorBar,
} from '../../../../src/tutorial/experiments/normExperiment/errorBars';
import { assertThrowsMentioning, fcParameters } from '../../../helpers';

// Plain-loop references, written apart from the module's reduce-based code.
function referenceStandardError(values: number[]): number {
  if (values.length < 2) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  const m = sum / values.length;
  let squares = 0;
  for (const v of values) squares += (v - m) * (v - m);
  return Math.sqrt(squares / (values.length - 1)) / Math.sqrt(values.length);
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
const fractions = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 8 });

describe('seedStandardError and binomialStandardError', () => {
  test('match plain loops', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 10 }), (values) =>
        close(seedStandardError(values), referenceStandardError(values)),
      ),
      fcParameters(200),
    );
    // 10% error on 2,004 images: sqrt(0.1 * 0.9 / 2004) = 0.0067, the ±0.7 points of one run.
    assert.ok(close(binomialStandardError(0.1, 2004), Math.sqrt(0.09 / 2004)));
    assert.equal(binomialStandardError(0, 10), 0);
  });

  test('refuse what has no standard error', () => {
    assertThrowsMentioning(() => seedStandardError([]), 'seedStandardError', 'values', 'non-empty');
    assertThrowsMentioning(() => seedStandardError([1, Number.NaN]), 'finite');
    assertThrowsMentioning(() => binomialStandardError(1.5, 10), 'rate', '[0, 1]');
    assertThrowsMentioning(() => binomialStandardError(0.5, 0), 'testSize', 'positive integer');
  });
});

describe('testErrorBar', () => {
  test('combines the seed and test-set standard errors, in points', () => {
    fc.assert(
      fc.property(fractions, fc.integer({ min: 1, max: 5000 }), (errors, n) => {
        const bar = testErrorBar(errors, n);
        const percent = errors.map((e) => 100 * e);
        let sum = 0;
        for (const p of percent) sum += p;
        const mean = sum / percent.length;
        const seed = referenceStandardError(percent);
        const binomial = 100 * Math.sqrt(((mean / 100) * (1 - mean / 100)) / n);
        const se = Math.sqrt(seed * seed + binomial * binomial);
        return (
          close(bar.mean, mean) &&
          close(bar.seedStandardError, seed) &&
          close(bar.binomialStandardError, binomial) &&
          close(bar.standardError, se) &&
          close(bar.low, mean - ERROR_BAR_WIDTH * se) &&
          close(bar.high, mean + ERROR_BAR_WIDTH * se)
        );
      }),
      fcParameters(200),
    );
  });

  test('names bad errors', () => {
    assertThrowsMentioning(() => testErrorBar([], 10), 'testErrorBar', 'errors', 'fractions');
    assertThrowsMentioning(() => testErrorBar([12], 10), 'fractions in [0, 1]');
    assertThrowsMentioning(() => testErrorBar([0.1], 2.5), 'testSize');
  });
});

describe('compareErrorBars', () => {
  test('separates exactly when the intervals do not overlap, symmetrically', () => {
    fc.assert(
      fc.property(fractions, fractions, fc.integer({ min: 1, max: 5000 }), (a, b, n) => {
        const x = testErrorBar(a, n);
        const y = testErrorBar(b, n);
        const overlap = Math.max(x.low, y.low) <= Math.min(x.high, y.high);
        const c = compareErrorBars(x, y);
        return c.separated === !overlap && c.separated === compareErrorBars(y, x).separated && close(c.difference, y.mean - x.mean);
      }),
      fcParameters(200),
    );
  });

  test('calls 10.0% against 10.5% on 2,004 images noise, and 10% against 20% a difference', () => {
    const at = (e: number) => testErrorBar([e, e, e], 2004);
    assert.equal(compareErrorBars(at(0.1), at(0.105)).separated, false);
    assert.equal(compareErrorBars(at(0.1), at(0.2)).separated, true);
  });

  test('refuses what is not an error bar', () => {
    assertThrowsMentioning(() => compareErrorBars({} as never, testErrorBar([0.1], 10)), 'compareErrorBars', 'a must be a TestErrorBar');
  });
});
