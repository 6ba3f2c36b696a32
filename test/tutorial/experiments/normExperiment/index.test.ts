import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { selectBackend } from '../../../../src/backend/selectBackend';
import { loadMnist } from '../../../../src/tutorial/data/mnist';
import {
  NORM_EXPERIMENT_PRESETS,
  NormExperimentProgress,
  NormExperimentResult,
  WU_HE_2018,
  batchStatisticsDeviation,
  runNormExperiment,
} from '../../../../src/tutorial/experiments/normExperiment';
import { NORMALIZATIONS, cnn, mlp } from '../../../../src/tutorial/models';
import { localizeFigure, looksEnglish } from '../../../../src/tutorial/plot';
import { assertThrowsMentioning } from '../../../helpers';

// The pure-JS cpu backend, with the project's replacement kernels: stock cpu needs ~90 s for
// the tiny experiment (its convolution gradients read through TensorBuffer.get), these ~10 s.
before(async () => {
  await selectBackend('cpu', { onNotice: () => {} });
});

describe('runNormExperiment at the tiny size', () => {
  let result: NormExperimentResult;
  const events: NormExperimentProgress[] = [];
  let tensorsBefore = 0;

  before(async () => {
    tensorsBefore = tf.memory().numTensors;
    result = await runNormExperiment({ ...NORM_EXPERIMENT_PRESETS.tiny, onProgress: (e) => events.push(e) });
  });

  test('returns one record per normalization, micro-batch size and seed, as plain JSON', () => {
    const { config, records } = result;
    assert.equal(records.length, NORMALIZATIONS.length * config.microBatchSizes.length * config.seeds.length);
    for (const normalization of NORMALIZATIONS) {
      for (const microBatchSize of config.microBatchSizes) {
        const r = records.find((x) => x.normalization === normalization && x.microBatchSize === microBatchSize);
        assert.ok(r, `no record for ${normalization} at ${microBatchSize}`);
        assert.equal(r.accumulationSteps, config.logicalBatchSize / microBatchSize);
        // 16 images in windows of 4 for 2 epochs: 8 updates, whatever the micro-batch size.
        assert.equal(r.updates, 8);
        assert.equal(r.lossCurve.length, 8);
        assert.ok(r.testError >= 0 && r.testError <= 1);
        assert.equal(r.testSize, 32);
        // 8 updates: renormSchedule caps warm-up and ramp at 2 updates each, so the bounds opened.
        assert.deepEqual(r.renormBounds, normalization === 'batch-renorm' ? { rMax: 3, dMax: 5 } : null);
        assert.ok(r.trainMs > 0 && r.evalMs > 0);
        const moving = ['batch', 'batch-renorm'].includes(normalization);
        assert.equal(r.testErrorRecomputed === null, !moving, `${normalization}: testErrorRecomputed`);
        assert.equal(r.statisticsDeviation === null, !moving, `${normalization}: statisticsDeviation`);
        assert.equal(r.callMomentum === null, !moving);
        // The per-call momentum keeps the averaging horizon fixed in samples: 0.9 per logical batch.
        if (moving) assert.ok(Math.abs(r.callMomentum! ** r.accumulationSteps - 0.9) < 1e-12);
      }
    }
    assert.deepEqual(JSON.parse(JSON.stringify(result.records)), result.records, 'records must survive JSON');
  });

  test('every configuration trained: its training loss fell', () => {
    for (const r of result.records) {
      assert.ok(r.lossCurve.every(Number.isFinite), `${r.normalization} ${r.microBatchSize}: non-finite loss`);
      assert.ok(r.finalLoss < r.initialLoss, `${r.normalization} at microBatchSize ${r.microBatchSize}: loss ${r.initialLoss} -> ${r.finalLoss}`);
    }
  });

  test('normalizations that ignore the batch give the same run at every micro-batch size', () => {
    // Accumulation gives the large-batch gradient exactly (up to float rounding) when no layer
    // looks across samples, so the whole training run repeats.
    for (const normalization of ['group', 'layer', 'frozen-batch', 'none'] as const) {
      const [a, b] = result.records.filter((r) => r.normalization === normalization);
      a.lossCurve.forEach((v, i) => assert.ok(Math.abs(v - b.lossCurve[i]) < 1e-3 * Math.max(1, Math.abs(v)), `${normalization} update ${i}: ${v} vs ${b.lossCurve[i]}`));
    }
    // BatchNorm does look across samples: micro-batches of 1 and 4 train differently.
    const [a, b] = result.records.filter((r) => r.normalization === 'batch');
    assert.ok(a.lossCurve.some((v, i) => Math.abs(v - b.lossCurve[i]) > 1e-3), 'batch normalization ignored the micro-batch size');
  });

  test('summary and figures cover every configuration', () => {
    const { summary, figures, config } = result;
    assert.equal(summary.length, NORMALIZATIONS.length * config.microBatchSizes.length);
    assert.equal(figures.testError.data.length, NORMALIZATIONS.length);
    assert.deepEqual(figures.testError.data[0].x, [1, 4]);
    assert.deepEqual(figures.reference.data.map((t) => t.y), [[...WU_HE_2018.batchNorm], [...WU_HE_2018.groupNorm]]);
    assert.ok(figures.recomputed && figures.recomputed.data.length === 4, 'batch and batch-renorm, moving and recomputed');
    assert.ok(figures.statistics && figures.statistics.data.length === 4, 'two normalization layers, two measures each');
    assert.deepEqual(Object.keys(figures.lossCurves).sort(), [...NORMALIZATIONS].sort());
    assert.equal(figures.lossCurves.batch!.data.length, 2);
    JSON.stringify(figures); // plain JSON
    // Log axes are ticked at the micro-batch sizes, not at Plotly's decades.
    assert.deepEqual((figures.testError.layout.xaxis as { tickvals?: number[] }).tickvals, [1, 4]);
    assert.deepEqual((figures.reference.layout.xaxis as { tickvals?: number[] }).tickvals, [2, 4, 8, 16, 32]);
  });

  test('every figure reads in Chinese: the zh display table knows each of its texts', () => {
    const { figures } = result;
    const all = [figures.testError, figures.reference, figures.recomputed!, figures.statistics!, ...Object.values(figures.lossCurves)];
    for (const fig of all) {
      const zh = localizeFigure(fig, 'zh'); // throws MissingTranslationError naming any text it lacks
      assert.ok(!looksEnglish((zh.layout.title as { text: string }).text), (zh.layout.title as { text: string }).text);
    }
  });

  test('reports progress: a start and an end per run, updates in between', () => {
    const runs = result.records.length;
    assert.equal(events.filter((e) => e.kind === 'run-start').length, runs);
    const ends = events.filter((e) => e.kind === 'run-end');
    assert.equal(ends.length, runs);
    assert.deepEqual(ends.map((e) => e.record), result.records);
    assert.ok(events.filter((e) => e.kind === 'update').length >= runs * 4, 'progressEvery 2 over 8 updates');
    assert.ok(events.every((e, i) => i === 0 || e.elapsedMs >= events[i - 1].elapsedMs));
  });

  test('leaves no tensor behind', () => {
    assert.equal(tf.memory().numTensors, tensorsBefore);
  });
});

describe('batchStatisticsDeviation', () => {
  test('is zero for a micro-batch holding all the samples, and grows as micro-batches shrink', () => {
    const data = loadMnist({ trainSize: 64, testSize: 1 });
    const model = cnn({ normalization: 'batch' });
    const whole = batchStatisticsDeviation(model, data.train.xs.slice(0, 32), 16);
    const small = batchStatisticsDeviation(model, data.train.xs.slice(0, 32), 1);
    assert.deepEqual(whole.map((d) => d.layer), [1, 5]);
    // Values per statistic: microBatchSize x positions (28 x 28 before the first pool, 14 x 14 after).
    assert.deepEqual(small.map((d) => d.valuesPerStatistic), [784, 196]);
    small.forEach((d, k) => assert.ok(d.meanShift > whole[k].meanShift && d.scaleShift > whole[k].scaleShift));
    const dense = mlp({ normalization: 'batch' });
    // A dense feature's statistic over one sample has zero variance: sigma_B = sqrt(epsilon), |r - 1| ~ 1.
    const single = batchStatisticsDeviation(dense, data.train.xs.slice(0, 32), 1);
    assert.deepEqual(single.map((d) => d.valuesPerStatistic), [1, 1]);
    assert.ok(single.every((d) => d.scaleShift > 0.9), JSON.stringify(single));
    model.dispose();
    dense.dispose();
    data.dispose();
  });
});

describe('bad experiment options', () => {
  test('name the argument and what it accepts', async () => {
    const fails = async (args: object, ...fragments: string[]) => {
      await assert.rejects(runNormExperiment(args), (error: Error) => {
        for (const f of fragments) assert.ok(error.message.includes(f), `"${error.message}" does not mention "${f}"`);
        return true;
      });
    };
    await fails({ normalizations: ['batch', 'weight'] }, 'normalization', '"batch", "group", "layer", "frozen-batch", "batch-renorm", "none"', 'got "weight"');
    await fails({ microBatchSizes: [3], logicalBatchSize: 32 }, 'microBatchSizes', 'divisors of logicalBatchSize (32)');
    await fails({ model: 'resnet' }, 'model', '"cnn" or "mlp"');
    await fails({ seeds: [] }, 'seeds', 'non-empty');
    await fails({ movingMomentum: 1 }, 'movingMomentum', '[0, 1)');
    await fails({ trainSize: 10, statisticsSize: 20 }, 'statisticsSize', 'trainSize (10)');
    const model = cnn({ normalization: 'batch' });
    const xs = tf.zeros([4, 28, 28, 1]);
    assertThrowsMentioning(() => batchStatisticsDeviation(model, xs, 4), 'microBatchSize', 'at most half');
    model.dispose();
    xs.dispose();
  });
});
