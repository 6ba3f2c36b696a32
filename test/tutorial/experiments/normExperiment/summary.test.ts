import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NormRunRecord, compareTestErrors, summarizeNormRuns, summaryRowOf, testErrorBar, testErrorOf, testErrorSpread } from '../../../../src/tutorial/experiments/normExperiment';
import { assertThrowsMentioning } from '../../../helpers';

// Hand-made records: the numbers below are chosen so every expected value is easy to derive.
function record(normalization: NormRunRecord['normalization'], microBatchSize: number, seed: number, testError: number): NormRunRecord {
  return {
    model: 'mlp',
    normalization,
    microBatchSize,
    accumulationSteps: 32 / microBatchSize,
    logicalBatchSize: 32,
    seed,
    updates: 2,
    lossCurve: [2, 1],
    initialLoss: 2,
    finalLoss: 1 + seed,
    testError,
    testSize: 1000,
    testErrorRecomputed: null,
    statisticsDeviation: null,
    callMomentum: null,
    renormBounds: null,
    trainMs: 10,
    evalMs: 1,
    backend: 'cpu',
  };
}

const records = [
  record('batch', 1, 0, 0.9),
  record('batch', 1, 1, 0.7),
  record('batch', 32, 0, 0.1),
  record('batch', 32, 1, 0.1),
  record('group', 1, 0, 0.12),
  record('group', 32, 0, 0.11),
];

describe('summarizeNormRuns', () => {
  test('averages over seeds, in percent, with the sample standard deviation', () => {
    const summary = summarizeNormRuns(records);
    const row = summary.find((r) => r.normalization === 'batch' && r.microBatchSize === 1)!;
    assert.equal(row.seeds, 2);
    // (90 + 70) / 2 = 80; sample std of {90, 70} = sqrt(((10)² + (10)²) / 1) = 14.142…
    assert.ok(Math.abs(row.testErrorMean - 80) < 1e-9);
    assert.ok(Math.abs(row.testErrorStd - Math.SQRT2 * 10) < 1e-9);
    assert.equal(row.finalLossMean, 1.5);
    // The error bar is testErrorBar's over the seeds' fractions and the records' test size.
    assert.deepEqual(row.testErrorBar, testErrorBar([0.9, 0.7], 1000));
  });
});

describe('testErrorOf and testErrorSpread', () => {
  const result = { summary: summarizeNormRuns(records) };

  test('look up the seed-mean error and its range over micro-batch sizes', () => {
    assert.ok(Math.abs(testErrorOf(result, 'batch', 32) - 10) < 1e-9);
    assert.ok(Math.abs(testErrorSpread(result, 'batch') - 70) < 1e-9);
    assert.ok(Math.abs(testErrorSpread(result, 'group') - 1) < 1e-9);
  });

  test('name the pair or normalization the experiment did not run', () => {
    assertThrowsMentioning(() => testErrorOf(result, 'batch', 4), 'testErrorOf', 'batch@1', '"batch" at 4');
    assertThrowsMentioning(() => testErrorSpread(result, 'layer'), 'testErrorSpread', 'batch, group', '"layer"');
  });
});

describe('summaryRowOf and compareTestErrors', () => {
  const result = { summary: summarizeNormRuns(records) };

  test('compare two pairs by their error bars', () => {
    assert.equal(summaryRowOf(result, 'group', 32).testErrorMean, 11);
    // 80% ± (seed SE 10, binomial 1.3) against 10% ± 0.9 points: far apart.
    const far = compareTestErrors({ result, normalization: 'batch', microBatchSize: 32 }, { result, normalization: 'batch', microBatchSize: 1 });
    assert.ok(far.separated && Math.abs(far.difference - 70) < 1e-9);
    // 11% and 12% on 1,000 images: 1 point apart, within the ±2 SE bars of about ±2 points.
    const near = compareTestErrors({ result, normalization: 'group', microBatchSize: 32 }, { result, normalization: 'group', microBatchSize: 1 });
    assert.equal(near.separated, false);
  });

  test('name the pair that did not run', () => {
    assertThrowsMentioning(() => compareTestErrors({ result, normalization: 'layer', microBatchSize: 1 }, { result, normalization: 'batch', microBatchSize: 1 }), 'compareTestErrors', '"layer" at 1');
    assertThrowsMentioning(() => summaryRowOf(result, 'batch', 2), 'summaryRowOf', '"batch" at 2');
  });
});
