import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBiasOrNormalization } from '../../src/core/accumulatorArgs';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { warmupCosine } from '../../src/core/learningRate';
import { assertNoLeak, assertThrowsMentioning, denseNet, samples } from '../helpers';
import { FixedStepOptimizer } from '../helpers/customOptimizer';

/** A scalar weight whose loss `w · g` has gradient exactly g. */
function scalar(initial = 0) {
  const w = tf.variable(tf.scalar(initial));
  return { w, loss: (g: number) => () => tf.mul(w, g) as tf.Scalar, value: () => w.dataSync()[0] };
}

describe('training options: hand-checkable cases', () => {
  it('learningRate: each applied update uses the schedule at its update step', () => {
    const { w, loss, value } = scalar();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 2, varList: [w], learningRate: (step) => [0.5, 0.25][step] });
    [1, 1, 1, 1].forEach((g) => acc.step(loss(g)));
    assert.equal(value(), -0.75); // −0.5 · 1 − 0.25 · 1
    acc.dispose();
    w.dispose();
  });

  it('skipLargeUpdates: a window above maxNorm is skipped and leaves the optimizer untouched; counted in results', async () => {
    const { w, loss, value } = scalar();
    const acc = new GradientAccumulator({ optimizer: tf.train.adam(0.1), accumulationSteps: 1, varList: [w], skipLargeUpdates: { maxNorm: 5 } });
    acc.step(loss(1));
    const before = { w: value(), optimizer: JSON.stringify((await acc.getState()).optimizer) };
    const skipped = acc.step(loss(100));
    assert.equal(skipped.skipped, 'large-update');
    assert.equal(skipped.applied, false);
    assert.equal(skipped.gradientNorm, 100);
    assert.equal(acc.skippedLargeUpdates, 1);
    assert.equal(value(), before.w);
    assert.equal(JSON.stringify((await acc.getState()).optimizer), before.optimizer, 'slots or iteration count moved');
    assert.equal(acc.optimizer.iterations, 1);
    acc.dispose();
    w.dispose();
  });

  it('skipLargeUpdates: factor × the median of the last norms', () => {
    const { w, loss } = scalar();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.01), accumulationSteps: 1, varList: [w], skipLargeUpdates: { factor: 3, history: 3 } });
    const outcomes = [1, 2, 3, 5, 7, 100, 6].map((g) => acc.step(loss(g)).skipped);
    // Median of the last 3 applied norms: after 1,2,3 → 2 (5 < 6 applies), after 2,3,5 → 3
    // (7 < 9 applies), after 3,5,7 → 5 (100 > 15 skipped), then 6 < 15 applies.
    assert.deepEqual(outcomes, [null, null, null, null, null, 'large-update', null]);
    acc.dispose();
    w.dispose();
  });

  it('weightDecay: once per update, w · (1 − lr · rate), biases and normalization excluded by default', () => {
    const model = denseNet(2, 2, 3);
    const [kernel, bias] = model.layers[0].trainableWeights.map((v) => v.read() as tf.Variable);
    assert.equal(isBiasOrNormalization(bias), true);
    assert.equal(isBiasOrNormalization(kernel), false);
    const before = { kernel: Array.from(kernel.dataSync()), bias: Array.from(bias.dataSync()) };
    // SGD with lr 0.1 and a loss of no gradient for these weights (times 0): only the decay moves them.
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 3, varList: model.trainableWeights, weightDecay: { rate: 0.5 } });
    const xs = tf.ones([1, 2]);
    for (let k = 0; k < 3; k++) acc.step(() => tf.mul(tf.sum(model.apply(xs) as tf.Tensor), 0) as tf.Scalar);
    Array.from(kernel.dataSync()).forEach((v, i) => assert.ok(Math.abs(v - before.kernel[i] * 0.95) < 1e-7, 'kernel decayed once by 1 − 0.1 · 0.5'));
    assert.deepEqual(Array.from(bias.dataSync()), before.bias, 'the bias is excluded');
    acc.dispose();
    xs.dispose();
    model.dispose();
  });

  it('ema: updated on applied updates only; withAveragedWeights swaps it in and back', async () => {
    const { w, loss, value } = scalar(1);
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [w], ema: { decay: 0.5 }, nonFinite: 'skip-window' });
    acc.step(loss(1)); // w = 0; the average starts here, at the weight after the first update: ema = 0
    acc.step(() => tf.mul(w, Number.NaN) as tf.Scalar); // skipped: ema unchanged
    acc.step(loss(1)); // w = −1, ema = 0.5 · 0 + 0.5 · (−1) = −0.5
    const seen = await acc.withAveragedWeights(() => value());
    assert.equal(seen, -0.5);
    assert.equal(value(), -1, 'the trained weight is back');
    await assert.rejects(acc.withAveragedWeights(() => { throw new Error('inside'); }), /inside/);
    assert.equal(value(), -1, 'swapped back after a throw');
    assert.equal((await acc.getState()).ema?.[0]?.values[0], -0.5);
    acc.dispose();
    w.dispose();
  });

  it('weightDecay with an optimizer that has no numeric learningRate is refused at construction (issue 23, item 11)', () => {
    const w = tf.variable(tf.scalar(1));
    const tensors = tf.memory().numTensors;
    assertThrowsMentioning(
      () => new GradientAccumulator({ optimizer: new FixedStepOptimizer(0.1), accumulationSteps: 1, varList: [w], weightDecay: { rate: 0.5, exclude: () => false } }),
      'GradientAccumulator: optimizer must be an optimizer with a numeric learningRate', 'when weightDecay is set', 'got a FixedStepOptimizer without a numeric learningRate',
    );
    assert.equal(tf.memory().numTensors, tensors);
    // Without weightDecay the same optimizer trains.
    const acc = new GradientAccumulator({ optimizer: new FixedStepOptimizer(0.1), accumulationSteps: 1, varList: [w] });
    acc.step(() => tf.mul(w, 2) as tf.Scalar);
    assert.equal(w.dataSync()[0], Math.fround(1 - Math.fround(0.2)));
    acc.dispose();
    w.dispose();
  });

  it('{ loss, count }: the window is divided by the total count; a micro-batch of count 0 adds nothing', () => {
    const { w, value } = scalar();
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 3, varList: [w] });
    // Summed losses w·3 over 3 tokens, w·0 over 0 tokens, w·5 over 1 token: gradient (3 + 0 + 5) / 4 = 2.
    acc.step(() => ({ loss: tf.mul(w, 3), count: tf.scalar(3) }));
    acc.step(() => ({ loss: tf.mul(w, 0), count: tf.scalar(0, 'int32') }));
    const last = acc.step(() => ({ loss: tf.mul(w, 5), count: tf.scalar(1) }));
    assert.equal(last.applied, true);
    assert.equal(value(), -2);
    acc.dispose();
    w.dispose();
  });
});

describe('training options: leaks, resume and named errors', () => {
  it('every option together leaks nothing over many windows', () => {
    const model = denseNet(3, 2, 5);
    const data = samples(4, 3, 5);
    const acc = new GradientAccumulator({
      optimizer: tf.train.adam(0.01),
      accumulationSteps: 2,
      varList: model.trainableWeights,
      learningRate: warmupCosine({ peak: 0.01, warmupSteps: 2, totalSteps: 10 }),
      skipLargeUpdates: { maxNorm: 1e6, factor: 10, history: 2 },
      weightDecay: { rate: 0.01 },
      ema: { decay: 0.9 },
      clipNorm: 1,
    });
    const tokenStep = () => acc.step(() => {
      const perSample = tf.squeeze(tf.squaredDifference(model.apply(data.xs) as tf.Tensor, data.ys), [1]);
      return { loss: tf.sum(perSample), count: tf.scalar(4) };
    });
    assertNoLeak(() => { tokenStep(); tokenStep(); }, 5);
    acc.dispose();
    tf.dispose([data.xs, data.ys]);
    model.dispose();
  });

  it('resumes EMA, recent norms and the skip counter from getState', async () => {
    const run = () => {
      const w = tf.variable(tf.scalar(1));
      const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 1, varList: [w], ema: { decay: 0.5 }, skipLargeUpdates: { factor: 3, history: 2 } });
      return { w, acc, step: (g: number) => acc.step(() => tf.mul(w, g) as tf.Scalar) };
    };
    const reference = run();
    [1, 2, 50, 2].forEach((g) => reference.step(g));
    const first = run();
    [1, 2].forEach((g) => first.step(g));
    const text = JSON.stringify(await first.acc.getState());
    const second = run();
    second.w.assign(first.w);
    await second.acc.setState(JSON.parse(text), { matchBy: 'order' });
    [50, 2].forEach((g) => second.step(g));
    assert.equal(second.acc.skippedLargeUpdates, 1, 'the median of the resumed norms skipped 50');
    // The same state but for the variable names (each run has its own variable).
    const unnamed = async (acc: GradientAccumulator) => JSON.stringify(await acc.getState()).replace(/"name":"[^"]*"/g, '').replace(/"\d+\/[a-z]+"/g, '');
    assert.equal(await unnamed(second.acc), await unnamed(reference.acc));
    for (const r of [reference, first, second]) {
      r.acc.dispose();
      r.w.dispose();
    }
  });

  it('refuses bad options by name', () => {
    const w = tf.variable(tf.scalar(0));
    const make = (extra: object) => () => new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [w], ...extra } as never);
    assertThrowsMentioning(make({ learningRate: 0.1 }), 'learningRate', 'a function');
    assertThrowsMentioning(make({ skipLargeUpdates: {} }), 'skipLargeUpdates', 'maxNorm, factor or both');
    assertThrowsMentioning(make({ skipLargeUpdates: { factor: 1 } }), 'skipLargeUpdates.factor', '> 1');
    assertThrowsMentioning(make({ skipLargeUpdates: { maxnorm: 1 } }), 'unknown key "maxnorm"');
    assertThrowsMentioning(make({ weightDecay: 0.01 }), 'weightDecay', 'an object');
    assertThrowsMentioning(make({ weightDecay: { rate: -1 } }), 'weightDecay.rate');
    assertThrowsMentioning(make({ ema: { decay: 1 } }), 'ema.decay', '(0, 1)');
    const acc = new GradientAccumulator({ optimizer: tf.train.sgd(1), accumulationSteps: 1, varList: [w], learningRate: () => Number.NaN });
    const tensors = tf.memory().numTensors;
    assertThrowsMentioning(() => acc.step(() => tf.mul(w, 1) as tf.Scalar), 'learningRate', 'update step 0', 'finite');
    assert.equal(acc.microStep, 0);
    assert.equal(tf.memory().numTensors, tensors);
    assertThrowsMentioning(() => acc.step(() => ({ loss: tf.mul(w, 1), count: tf.tensor1d([1, 2]) })), 'scalar count');
    assertThrowsMentioning(() => acc.step(() => ({ loss: tf.mul(w, 1), count: tf.scalar(-1) })), 'count ≥ 0');
    assert.equal(tf.memory().numTensors, tensors, 'a refused count leaked tensors');
    acc.dispose();
    w.dispose();
  });
});
