import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NormRunRecord, summarizeNormRuns, testErrorOf, testErrorSpread } from '../../../../src/tutorial/experiments/normExperiment';
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
    testErrorRecomputed: null,
    statisticsDeviation: null,
    callMomentum: null,
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
