import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { stepDecay } from '../../src/core/learningRate';
import { denseNet, samples } from '../helpers';

/**
 * The anchor frameworks' accumulation bugs, one test each, named after the issue. Each builds
 * the naive behaviour from plain tfjs, measures how far it is from the exact reference, and
 * shows the library exact. The naive path is the negative case: each test fails if the library
 * is swapped for it (the measured gap is asserted above a bound).
 */

/** A scalar weight whose loss `w · g` has gradient exactly g: hand-checkable updates. */
function scalar(initial = 0) {
  const w = tf.variable(tf.scalar(initial));
  return { w, loss: (g: number) => () => tf.mul(w, g) as tf.Scalar, value: () => w.dataSync()[0] };
}

describe('anchor regressions', () => {
  it('Lightning #19987: a short last window is averaged over what it holds, not divided by accumulationSteps', () => {
    // Window of 4, but the epoch ends after gradients 1 and 3. Exact: the mean, 2; SGD(1) steps to −2.
    const exact = scalar();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 4, varList: [exact.w] });
    [1, 3].forEach((g) => acc.step(exact.loss(g)));
    acc.endEpoch();
    assert.equal(exact.value(), -2);
    // Naive: every micro-batch scaled by 1/4 and stepped at the epoch's end: (1 + 3) / 4 = 1.
    const naive = scalar();
    const sgd = tf.train.sgd(1);
    tf.tidy(() => sgd.applyGradients({ [naive.w.name]: tf.scalar((1 + 3) / 4) } as never));
    assert.equal(naive.value(), -1, 'the naive step is half the exact one');
    acc.dispose();
    sgd.dispose();
    tf.dispose([exact.w, naive.w]);
  });

  it('Keras #19990: clipping, weight decay and the iteration count run once per update, not per micro-step', () => {
    const gradients = [10, -10, 10, 10];
    const exact = scalar(1);
    const acc = new GradientAccumulator({
      optimizer: tf.train.adam(0.1),
      accumulationSteps: 4,
      varList: [exact.w],
      clipNorm: 1,
      weightDecay: { rate: 0.5, exclude: () => false },
    });
    const results = gradients.map((g) => acc.step(exact.loss(g)));
    assert.equal(results[3].gradientNorm, 5, 'the norm of the averaged gradient (10 − 10 + 10 + 10) / 4');
    assert.equal(acc.optimizer.iterations, 1, 'Adam counted one update');
    // Reference by hand: decay once (w · (1 − 0.1 · 0.5) = 0.95), then Adam's first step with the
    // clipped gradient 1 moves by −lr · 1 / (1 + ε) ≈ −0.1.
    assert.ok(Math.abs(exact.value() - (0.95 - 0.1)) < 1e-6, `w = ${exact.value()}`);
    // Naive (Keras before PR #19998): clip each micro-batch (±1), decay at every micro-step, and
    // Adam stepping with the accumulated gradient but counting 4 iterations.
    const naive = scalar(1);
    const adam = tf.train.adam(0.1);
    const clippedMean = gradients.map((g) => Math.sign(g)).reduce((a, b) => a + b, 0) / 4; // 0.5, not 1
    for (let k = 0; k < 4; k++) tf.tidy(() => naive.w.assign(tf.mul(naive.w, 1 - 0.1 * 0.5)));
    tf.tidy(() => adam.applyGradients({ [naive.w.name]: tf.scalar(clippedMean) } as never));
    const gap = Math.abs(naive.value() - exact.value());
    assert.ok(gap > 0.1, `naive w = ${naive.value()}, exact ${exact.value()}: the per-micro-step path is off by ${gap}`);
    assert.equal(clippedMean, 0.5, 'clipping per micro-batch halves this gradient');
    acc.dispose();
    adam.dispose();
    tf.dispose([exact.w, naive.w]);
  });

  it('transformers #34191: token-level losses are divided by the tokens of the whole window', () => {
    // Four padded sequences of lengths 1, 2, 7 and 8 (of 8 positions), in micro-batches of two.
    const lengths = [1, 2, 7, 8];
    const mask = tf.tensor2d(lengths.map((n) => Array.from({ length: 8 }, (_, t) => (t < n ? 1 : 0))));
    const targets = tf.randomNormal([4, 8], 0, 1, 'float32', 3);
    const w = tf.variable(tf.tensor1d([0.5, -0.2]));
    const tokenLoss = (rows: number[]) => {
      const m = tf.gather(mask, rows);
      const prediction = tf.add(tf.mul(w.slice(0, 1), tf.ones([rows.length, 8])), w.slice(1, 1));
      return { loss: tf.sum(tf.mul(tf.square(tf.sub(prediction, tf.gather(targets, rows))), m)), count: tf.sum(m) };
    };
    const bigBatch = (params: tf.Variable) => tf.tidy(() => {
      const { grads } = tf.variableGrads(() => { const { loss, count } = tokenLoss([0, 1, 2, 3]); return tf.div(loss, count) as tf.Scalar; }, [params]);
      return grads[params.name].dataSync();
    });
    const reference = Array.from(bigBatch(w));
    const start = Array.from(w.dataSync());
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [w] });
    acc.step(() => tokenLoss([0, 1]));
    const last = acc.step(() => tokenLoss([2, 3]));
    assert.equal(last.applied, true);
    const exactGradient = Array.from(w.dataSync()).map((v, i) => start[i] - v);
    const exactGap = Math.max(...exactGradient.map((g, i) => Math.abs(g - reference[i]) / Math.max(...reference.map(Math.abs))));
    assert.ok(exactGap <= 1e-5, `library vs all tokens: ${exactGap}`);
    // Naive: the mean of per-micro-batch token means (micro-batch 1 has 3 tokens, 2 has 15).
    w.assign(tf.tensor1d(start));
    const means = [[0, 1], [2, 3]].map((rows) => tf.tidy(() => {
      const { grads } = tf.variableGrads(() => { const { loss, count } = tokenLoss(rows); return tf.div(loss, count) as tf.Scalar; }, [w]);
      return Array.from(grads[w.name].dataSync());
    }));
    const naive = means[0].map((g, i) => (g + means[1][i]) / 2);
    const naiveGap = Math.max(...naive.map((g, i) => Math.abs(g - reference[i]) / Math.max(...reference.map(Math.abs))));
    assert.ok(naiveGap > 0.05, `the mean of means is off by only ${naiveGap}`);
    acc.dispose();
    tf.dispose([mask, targets, w]);
  });

  it('transformers #37197 / #35438: the logged window loss is the big batch\'s loss, not scaled by the accumulation count', () => {
    const model = denseNet(3, 2, 4);
    const data = samples(12, 3, 4);
    const mse = (xs: tf.Tensor, ys: tf.Tensor) => tf.losses.meanSquaredError(ys, model.apply(xs) as tf.Tensor) as tf.Scalar;
    const bigLoss = tf.tidy(() => mse(data.xs, data.ys).dataSync()[0]);
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0), accumulationSteps: 3, varList: model.trainableWeights });
    const results = [0, 4, 8].map((start) => acc.step(() => mse(data.xs.slice(start, 4), data.ys.slice(start, 4)), { sampleCount: 4 }));
    const logged = results[2].windowLoss as number;
    assert.ok(Math.abs(logged - bigLoss) <= 1e-6 * bigLoss, `logged ${logged} vs ${bigLoss}`);
    // Naive: summing the micro-batch losses (each already a mean) logs 3× the loss.
    const naive = results.reduce((a, r) => a + r.loss, 0);
    assert.ok(Math.abs(naive / bigLoss - 3) < 1e-5, `naive logs ${naive / bigLoss}× the loss`);
    acc.dispose();
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  });

  it('transformers PR #35808: the reported gradient norm does not depend on the accumulation count', () => {
    const data = samples(16, 3, 9);
    const norms: number[] = [];
    const naive: number[] = [];
    for (const steps of [1, 2, 4]) {
      const model = denseNet(3, 2, 9);
      const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0), accumulationSteps: steps, varList: model.trainableWeights, clipNorm: 1e9 });
      const size = 16 / steps;
      let summed: tf.Tensor[] | null = null;
      for (let k = 0; k < steps; k++) {
        const xs = data.xs.slice(k * size, size);
        const ys = data.ys.slice(k * size, size);
        const r = acc.step(() => tf.losses.meanSquaredError(ys, model.apply(xs) as tf.Tensor), { sampleCount: size });
        if (r.applied) norms.push(r.gradientNorm as number);
        // Naive: the norm of the summed micro-batch mean gradients, which grows with the count.
        const g = tf.tidy(() => Object.values(tf.variableGrads(() => tf.losses.meanSquaredError(ys, model.apply(xs) as tf.Tensor) as tf.Scalar, model.trainableWeights.map((w) => w.read() as tf.Variable)).grads));
        const next: tf.Tensor[] = summed === null ? g : g.map((t, i) => tf.add(t, (summed as tf.Tensor[])[i]));
        if (summed !== null) tf.dispose([...summed, ...g]);
        summed = next;
        tf.dispose([xs, ys]);
      }
      naive.push(tf.tidy(() => Math.sqrt((summed as tf.Tensor[]).reduce((a, t) => a + tf.sum(tf.square(t)).dataSync()[0], 0))));
      tf.dispose(summed as tf.Tensor[]);
      acc.dispose();
      model.dispose();
    }
    norms.forEach((n) => assert.ok(Math.abs(n - norms[0]) <= 1e-5 * norms[0], `norms ${norms}`));
    assert.ok(naive[2] / naive[0] > 2.5, `naive norms ${naive}: should grow about 4× from 1 to 4 micro-batches`);
    tf.dispose([data.xs, data.ys]);
  });

  it('Lightning #18828: the learning-rate schedule advances on applied updates only, never on skipped windows', () => {
    const schedule = stepDecay({ initial: 1, factor: 0.5, every: 1 }); // 1, 0.5, 0.25, …
    const exact = scalar();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [exact.w], learningRate: schedule, nonFinite: 'skip-window' });
    acc.step(exact.loss(1)); // update 0 at rate 1: w = −1
    acc.step(() => tf.mul(exact.w, Number.NaN) as tf.Scalar); // skipped
    acc.step(exact.loss(1)); // update 1 at rate 0.5: w = −1.5
    assert.equal(acc.skippedWindows, 1);
    assert.equal(exact.value(), -1.5);
    // Naive: the scheduler steps once per window, skipped or not, so the third window gets 0.25.
    const naive = -1 - schedule(2);
    assert.equal(naive, -1.25);
    assert.ok(Math.abs(naive - exact.value()) >= 0.25, 'the naive schedule is off by a whole decay step');
    acc.dispose();
    exact.w.dispose();
  });
});
