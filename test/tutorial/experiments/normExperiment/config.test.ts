import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  NORM_EXPERIMENT_PRESETS,
  microBatchSizesOf,
  resolveNormExperimentConfig,
} from '../../../../src/tutorial/experiments/normExperiment/config';
import { assertThrowsMentioning } from '../../../helpers';

describe('resolveNormExperimentConfig', () => {
  test('defaults: three seeds, the whole test split of 2,004 images', () => {
    const config = resolveNormExperimentConfig({});
    assert.deepEqual(config.seeds, [0, 1, 2]);
    assert.equal(config.testSize, 2004);
    assert.deepEqual(config.microBatchSizesBy, {});
  });

  test('every preset but tiny has error bars over at least three seeds on the whole test split', () => {
    for (const size of ['quick', 'default', 'large'] as const) {
      const config = resolveNormExperimentConfig(NORM_EXPERIMENT_PRESETS[size]);
      assert.ok(config.seeds.length >= 3, size);
      assert.equal(config.testSize, 2004, size);
    }
  });

  test('microBatchSizesBy replaces the sizes of the normalizations it names, sorted', () => {
    const config = resolveNormExperimentConfig({ microBatchSizes: [32, 2], microBatchSizesBy: { group: [32] } });
    assert.deepEqual(microBatchSizesOf(config, 'group'), [32]);
    assert.deepEqual(microBatchSizesOf(config, 'batch'), [2, 32]);
  });

  test('names a bad microBatchSizesBy', () => {
    assertThrowsMentioning(() => resolveNormExperimentConfig({ microBatchSizesBy: { group: [3] } }), 'microBatchSizesBy["group"]', 'divisors of logicalBatchSize (32)');
    assertThrowsMentioning(() => resolveNormExperimentConfig({ microBatchSizesBy: { weight: [2] } as never }), 'normalization', 'got "weight"');
    assertThrowsMentioning(() => resolveNormExperimentConfig({ microBatchSizesBy: [] as never }), 'microBatchSizesBy', 'an object');
    assertThrowsMentioning(() => resolveNormExperimentConfig({ microBatchSizesBy: { group: [] } }), 'non-empty');
  });
});
