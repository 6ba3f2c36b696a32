import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAccumulatorArgs, GradientAccumulatorArgs } from '../../src/core/accumulatorArgs';
import { NonFiniteGradientError, NonFinitePolicy } from '../../src/core/nonFinite';
import { AccumulatorCore, emptyWindow, HeldState, initialCore, openedCore } from '../../src/core/state';
import { addContribution, checkContribution, closeWindow, flushWindow, skipNonFinite, UpdateConfig, updateResult } from '../../src/core/update';
import { assertNoLeak, assertThrowsMentioning } from '../helpers';

/**
 * The update path's functions, called directly on explicit state. The numbers are by hand: a
 * scalar weight w = 0 trained with SGD at rate 0.5, whose gradients 1 and 3 average to 2, so one
 * update gives w = 0 − 0.5 × 2 = −1.
 */

const OWNER = 'test';
const PLAN = { size: 2, scale: 0 };

function config(args: Partial<GradientAccumulatorArgs> = {}, nonFinite: NonFinitePolicy = 'error'): UpdateConfig {
  return { owner: OWNER, options: checkAccumulatorArgs(OWNER, { optimizer: tf.train.sgd(0.5), accumulationSteps: 2, nonFinite, ...args }) };
}

const fresh = (): HeldState => ({ core: initialCore(), slots: [] });

/** One micro-batch of mean loss `loss` and gradient `g` for `w`, counted as one micro-batch. */
function contribute(cfg: UpdateConfig, state: HeldState, w: tf.Variable, g: number, loss = g, plan = PLAN) {
  const gradients = [tf.scalar(g)];
  const meanLoss = tf.scalar(loss);
  try {
    return addContribution(cfg, state, { handed: [w], gradients, factor: 2 ** -plan.scale, loss: { objective: meanLoss, scale: { by: 1, perCount: false } }, countTensor: null, count: 1, unit: 'micro-batches', microBatches: 1 }, plan);
  } finally {
    tf.dispose([...gradients, meanLoss]);
  }
}

function disposeSlots(state: HeldState): void {
  tf.dispose(state.slots.flatMap((s) => [s.accumulator, s.ema]).filter((v): v is tf.Variable => v !== null));
}

describe('skipNonFinite', () => {
  const half: AccumulatorCore = { ...initialCore(), counters: { ...initialCore().counters, microStep: 1 }, window: { ...emptyWindow(), size: 2, microBatches: 1, weight: 1, unit: 'micro-batches', touched: ['a'], lossSum: 1 } };

  it('"skip-window" drops the window it completes, and reports it as it was', () => {
    const { core, window, skipped } = skipNonFinite(config({}, 'skip-window'), half, Number.NaN, 1);
    assert.equal(skipped, 'window');
    assert.deepEqual(core.window, emptyWindow());
    assert.deepEqual([core.counters.microStep, core.counters.skippedMicroBatches, core.counters.skippedWindows], [2, 1, 1]);
    assert.deepEqual([window.microBatches, window.poisoned], [2, true]);
  });

  it('"skip-micro-batch" leaves the window open and unchanged', () => {
    const { core, skipped } = skipNonFinite(config({}, 'skip-micro-batch'), half, Number.NaN, 1);
    assert.equal(skipped, 'micro-batch');
    assert.deepEqual(core.window, half.window);
    assert.deepEqual([core.counters.skippedMicroBatches, core.counters.skippedWindows], [1, 0]);
  });

  it('"error" throws and changes nothing', () => {
    const copy = structuredClone(half);
    assert.throws(() => skipNonFinite(config(), half, Number.NaN, 1), NonFiniteGradientError);
    assert.deepEqual(half, copy);
  });
});

describe('checkContribution', () => {
  const a = tf.variable(tf.scalar(0));
  const b = tf.variable(tf.scalar(0));
  const g = tf.scalar(1);
  const window = { ...emptyWindow(), size: 4, microBatches: 1, weight: 1, unit: 'micro-batches' as const, touched: [a.name] };

  it('accepts a micro-batch that trains some of the window\'s variables, or more', () => {
    checkContribution(OWNER, window, { handed: [a, b], gradients: [g, g], unit: 'micro-batches' });
    checkContribution(OWNER, window, { handed: [a, b], gradients: [g, null], unit: 'micro-batches' });
    checkContribution(OWNER, emptyWindow(), { handed: [b], gradients: [g], unit: 'samples' });
  });

  it('refuses one that trains none of them (another model\'s), one without gradient, and a unit that cannot mix', () => {
    assertThrowsMentioning(() => checkContribution(OWNER, window, { handed: [a, b], gradients: [null, g], unit: 'micro-batches' }), 'trains none of the variables', a.name, 'flush', 'matchBy: "order"');
    assertThrowsMentioning(() => checkContribution(OWNER, window, { handed: [a], gradients: [null], unit: 'micro-batches' }), 'at least one trained variable');
    assertThrowsMentioning(() => checkContribution(OWNER, window, { handed: [a], gradients: [g], unit: 'samples' }), 'counted micro-batches', 'gives samples');
  });
});

describe('addContribution and closeWindow', () => {
  it('joins the open window, then applies the window it completes (1 and 3 give w = −1)', () => {
    const cfg = config();
    const w = tf.variable(tf.scalar(0));
    const start = fresh();
    const first = contribute(cfg, start, w, 1);
    assert.deepEqual(start, fresh(), 'the state handed in is not changed');
    assert.deepEqual([first.outcome.applied, first.state.core.window.microBatches, first.state.core.window.size, first.state.slots.length], [false, 1, 2, 1]);
    assert.equal(first.state.slots[0].accumulator!.dataSync()[0], 1);
    assert.equal(w.dataSync()[0], 0);
    const second = contribute(cfg, first.state, w, 3);
    assert.deepEqual([second.outcome.applied, second.outcome.skipped, second.state.core.counters.updateStep], [true, null, 1]);
    assert.deepEqual(second.state.core.window, emptyWindow());
    assert.deepEqual([second.outcome.window.weight, second.outcome.window.lossSum], [2, 4]);
    assert.equal(w.dataSync()[0], -1);
    disposeSlots(second.state);
    w.dispose();
  });

  it('holds the sums at the window\'s scale and applies the same update: gradients 3e38 and 3e38 average to 3e38, not Infinity', () => {
    const cfg = config({ optimizer: tf.train.sgd(1e-37) });
    const w = tf.variable(tf.scalar(0));
    const plan = { size: 2, scale: 1 };
    const first = contribute(cfg, fresh(), w, 3e38, 0, plan);
    assert.deepEqual([first.state.core.window.scale, first.state.slots[0].accumulator!.dataSync()[0]], [1, Math.fround(3e38) / 2]);
    const second = contribute(cfg, first.state, w, 3e38, 0, plan);
    assert.equal(second.outcome.applied, true);
    // w = 0 − 1e-37 · 3e38 = −30, in float32 (the rate and the gradient rounded first).
    assert.equal(w.dataSync()[0], Math.fround(-Math.fround(1e-37) * Math.fround(3e38)));
    // At scale 0 the same two finite gradients overflow the sum and are called non-finite.
    const half = contribute(cfg, fresh(), w, 3e38, 0).state;
    assert.throws(() => contribute(cfg, half, w, 3e38, 0), NonFiniteGradientError);
    [second.state, half].forEach(disposeSlots);
    w.dispose();
  });

  it('drops a window counting 0 without calling the optimizer', () => {
    const w = tf.variable(tf.scalar(0));
    const next: AccumulatorCore = { ...initialCore(), window: { ...emptyWindow(), size: 2, microBatches: 2, touched: ['x'] } };
    const sum = tf.scalar(4);
    const closed = closeWindow(config(), { slots: [], core: next }, [w], [sum]);
    assert.deepEqual(closed.end, { applied: false, skipped: 'window', gradientNorm: null });
    assert.deepEqual([closed.state.core.counters.skippedWindows, closed.state.core.counters.updateStep], [1, 0]);
    assert.equal(w.dataSync()[0], 0);
    tf.dispose([sum, w]);
  });

  it('skips a window whose norm is above skipLargeUpdates.maxNorm', () => {
    const w = tf.variable(tf.scalar(0));
    const next: AccumulatorCore = { ...initialCore(), window: { ...emptyWindow(), size: 2, microBatches: 2, weight: 2, touched: ['x'] } };
    const sum = tf.scalar(4);
    const closed = closeWindow(config({ skipLargeUpdates: { maxNorm: 1 } }), { slots: [], core: next }, [w], [sum]);
    assert.deepEqual(closed.end, { applied: false, skipped: 'large-update', gradientNorm: 2 });
    assert.deepEqual([closed.state.core.counters.skippedLargeUpdates, closed.state.core.counters.updateStep], [1, 0]);
    assert.equal(w.dataSync()[0], 0);
    tf.dispose([sum, w]);
  });

  it('throws under nonFinite "error" with no tensor left behind and the state as it was', () => {
    const cfg = config();
    const w = tf.variable(tf.scalar(0));
    const first = contribute(cfg, fresh(), w, 1).state;
    const core = structuredClone(first.core);
    const tensors = tf.memory().numTensors;
    assert.throws(() => contribute(cfg, first, w, Number.NaN), NonFiniteGradientError);
    assert.equal(tf.memory().numTensors, tensors);
    assert.deepEqual(first.core, core);
    assert.equal(first.slots[0].accumulator!.dataSync()[0], 1);
    disposeSlots(first);
    w.dispose();
  });

  it('leaks no tensor over whole windows', () => {
    const cfg = config();
    const w = tf.variable(tf.scalar(0));
    let state = fresh();
    assertNoLeak(() => {
      state = contribute(cfg, contribute(cfg, state, w, 1).state, w, 3).state;
    }, 3);
    disposeSlots(state);
    w.dispose();
  });
});

describe('flushWindow and updateResult', () => {
  it('applies a short window over what it holds, and reports it', () => {
    const cfg = config();
    const w = tf.variable(tf.scalar(0));
    const open = contribute(cfg, fresh(), w, 2, 5).state;
    const flushed = flushWindow(cfg, open);
    assert.equal(w.dataSync()[0], -1); // 0 − 0.5 × 2 / 1
    assert.deepEqual(updateResult(open.core.window, flushed.state.core.counters.updateStep, flushed.end), {
      applied: true,
      skipped: null,
      gradientNorm: null,
      updateStep: 1,
      microBatches: 1,
      weight: 1,
      loss: 5,
    });
    disposeSlots(flushed.state);
    w.dispose();
  });

  it('closes a window opened but still empty, so that the next one reads the schedule again', () => {
    const opened = { core: openedCore(initialCore(), 4, 2), slots: [] };
    const flushed = flushWindow(config(), opened);
    assert.deepEqual(flushed.state.core, initialCore());
    assert.deepEqual(flushed.end, { applied: false, skipped: null, gradientNorm: null });
    assert.equal(flushWindow(config(), fresh()).state.core.window.size, null);
  });

  it('reports no weight and no loss for a window that was not applied', () => {
    const w = { ...emptyWindow(), microBatches: 2, weight: 3, lossSum: 6 };
    assert.deepEqual(updateResult(w, 4, { applied: false, skipped: 'window', gradientNorm: null }), {
      applied: false,
      skipped: 'window',
      gradientNorm: null,
      updateStep: 4,
      microBatches: 2,
      weight: 0,
      loss: null,
    });
  });
});
