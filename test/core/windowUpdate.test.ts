import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAccumulatorArgs, GradientAccumulatorArgs } from '../../src/core/accumulatorArgs';
import { NonFiniteGradientError, NonFinitePolicy } from '../../src/core/nonFinite';
import { AccumulatorCore, emptyWindow, initialCore } from '../../src/core/state';
import { addContribution, closeWindow, flushWindow, joinWindow, skipNonFinite, UpdateContext, UpdateState, updateResult } from '../../src/core/windowUpdate';
import { assertNoLeak } from '../helpers';

/**
 * The update path's functions, called directly on explicit state. The numbers are by hand: a
 * scalar weight w = 0 trained with SGD at rate 0.5, whose gradients 1 and 3 average to 2, so one
 * update gives w = 0 − 0.5 × 2 = −1.
 */

const OWNER = 'test';

function context(args: Partial<GradientAccumulatorArgs> = {}, nonFinite: NonFinitePolicy = 'error'): UpdateContext {
  const options = checkAccumulatorArgs(OWNER, { optimizer: tf.train.sgd(0.5), accumulationSteps: 2, nonFinite, ...args });
  return { optimizer: options.optimizer, clipNorm: options.clipNorm, nonFinite: options.nonFinite, options };
}

/** One micro-batch of mean loss `loss` and gradient `g` for `w`, counted as one micro-batch. */
function contribute(ctx: UpdateContext, state: UpdateState, w: tf.Variable, g: number, loss = g) {
  const gradients = [tf.scalar(g)];
  const meanLoss = tf.scalar(loss);
  try {
    return addContribution(ctx, OWNER, state, { handed: [w], gradients, meanLoss, counted: { count: 1, unit: 'micro-batches', weight: 1 }, count: null, windowSize: 2 });
  } finally {
    tf.dispose([...gradients, meanLoss]);
  }
}

function disposeSlots(state: UpdateState): void {
  tf.dispose(state.slots.flatMap((s) => [s.accumulator, s.ema]).filter((v): v is tf.Variable => v !== null));
}

describe('joinWindow', () => {
  it('adds a contribution to a new state and leaves the old one as it was', () => {
    const before = initialCore();
    const next = joinWindow(before, { windowSize: 4, microBatches: 1, unit: 'samples', count: 3, lossSum: 6, touched: ['a'] });
    assert.deepEqual(before, initialCore());
    assert.equal(next.counters.microStep, 1);
    assert.deepEqual(next.window, { size: 4, microBatches: 1, weight: 3, unit: 'samples', poisoned: false, touched: ['a'], lossSum: 6 });
    const again = joinWindow(next, { windowSize: 4, microBatches: 2, unit: 'samples', count: 2, lossSum: null, touched: ['a', 'b'] });
    assert.deepEqual([again.counters.microStep, again.window.microBatches, again.window.weight, again.window.lossSum], [3, 3, 5, null]);
  });

  it('keeps a window that saw counts in counts', () => {
    const counted: AccumulatorCore = { ...initialCore(), window: { ...emptyWindow(), unit: 'counts' } };
    assert.equal(joinWindow(counted, { windowSize: 2, microBatches: 1, unit: 'samples', count: 1, lossSum: 1, touched: [] }).window.unit, 'counts');
  });
});

describe('skipNonFinite', () => {
  const half = joinWindow(initialCore(), { windowSize: 2, microBatches: 1, unit: 'micro-batches', count: 1, lossSum: 1, touched: ['a'] });

  it('"skip-window" drops the window it completes, and reports it as it was', () => {
    const { core, window, skipped } = skipNonFinite('skip-window', OWNER, half, 2, Number.NaN, 1);
    assert.equal(skipped, 'window');
    assert.deepEqual(core.window, emptyWindow());
    assert.deepEqual([core.counters.microStep, core.counters.skippedMicroBatches, core.counters.skippedWindows], [2, 1, 1]);
    assert.deepEqual([window.microBatches, window.poisoned], [2, true]);
  });

  it('"skip-micro-batch" leaves the window open and unchanged', () => {
    const { core, skipped } = skipNonFinite('skip-micro-batch', OWNER, half, 2, Number.NaN, 1);
    assert.equal(skipped, 'micro-batch');
    assert.deepEqual(core.window, half.window);
    assert.deepEqual([core.counters.skippedMicroBatches, core.counters.skippedWindows], [1, 0]);
  });

  it('"error" throws and changes nothing', () => {
    const copy = structuredClone(half);
    assert.throws(() => skipNonFinite('error', OWNER, half, 2, Number.NaN, 1), NonFiniteGradientError);
    assert.deepEqual(half, copy);
  });
});

describe('addContribution and closeWindow', () => {
  it('joins the open window, then applies the window it completes (1 and 3 give w = −1)', () => {
    const ctx = context();
    const w = tf.variable(tf.scalar(0));
    const start: UpdateState = { slots: [], core: initialCore() };
    const first = contribute(ctx, start, w, 1);
    assert.deepEqual(start, { slots: [], core: initialCore() }, 'the state handed in is not changed');
    assert.deepEqual([first.outcome.applied, first.core.window.microBatches, first.slots.length], [false, 1, 1]);
    assert.equal(first.slots[0].accumulator!.dataSync()[0], 1);
    assert.equal(w.dataSync()[0], 0);
    const second = contribute(ctx, first, w, 3);
    assert.deepEqual([second.outcome.applied, second.outcome.skipped, second.core.counters.updateStep], [true, null, 1]);
    assert.deepEqual(second.core.window, emptyWindow());
    assert.deepEqual([second.outcome.window.weight, second.outcome.window.lossSum], [2, 4]);
    assert.equal(w.dataSync()[0], -1);
    disposeSlots(second);
    w.dispose();
  });

  it('drops a window counting 0 without calling the optimizer', () => {
    const ctx = context();
    const w = tf.variable(tf.scalar(0));
    const next: AccumulatorCore = { ...initialCore(), window: { ...emptyWindow(), size: 2, microBatches: 2, touched: ['x'] } };
    const sum = tf.scalar(4);
    const closed = closeWindow(ctx, OWNER, { slots: [], core: next }, [w], [sum]);
    assert.deepEqual(closed.end, { applied: false, skipped: 'window', gradientNorm: null });
    assert.deepEqual([closed.core.counters.skippedWindows, closed.core.counters.updateStep], [1, 0]);
    assert.equal(w.dataSync()[0], 0);
    tf.dispose([sum, w]);
  });

  it('skips a window whose norm is above skipLargeUpdates.maxNorm', () => {
    const ctx = context({ skipLargeUpdates: { maxNorm: 1 } });
    const w = tf.variable(tf.scalar(0));
    const next: AccumulatorCore = { ...initialCore(), window: { ...emptyWindow(), size: 2, microBatches: 2, weight: 2, touched: ['x'] } };
    const sum = tf.scalar(4);
    const closed = closeWindow(ctx, OWNER, { slots: [], core: next }, [w], [sum]);
    assert.deepEqual(closed.end, { applied: false, skipped: 'large-update', gradientNorm: 2 });
    assert.deepEqual([closed.core.counters.skippedLargeUpdates, closed.core.counters.updateStep], [1, 0]);
    assert.equal(w.dataSync()[0], 0);
    tf.dispose([sum, w]);
  });

  it('throws under nonFinite "error" with no tensor left behind and the state as it was', () => {
    const ctx = context();
    const w = tf.variable(tf.scalar(0));
    const first = contribute(ctx, { slots: [], core: initialCore() }, w, 1);
    const core = structuredClone(first.core);
    const tensors = tf.memory().numTensors;
    assert.throws(() => contribute(ctx, first, w, Number.NaN), NonFiniteGradientError);
    assert.equal(tf.memory().numTensors, tensors);
    assert.deepEqual(first.core, core);
    assert.equal(first.slots[0].accumulator!.dataSync()[0], 1);
    disposeSlots(first);
    w.dispose();
  });

  it('leaks no tensor over whole windows', () => {
    const ctx = context();
    const w = tf.variable(tf.scalar(0));
    let state: UpdateState = { slots: [], core: initialCore() };
    assertNoLeak(() => {
      state = contribute(ctx, contribute(ctx, state, w, 1), w, 3);
    }, 3);
    disposeSlots(state);
    w.dispose();
  });
});

describe('flushWindow and updateResult', () => {
  it('applies a short window over what it holds, and reports it', () => {
    const ctx = context();
    const w = tf.variable(tf.scalar(0));
    const open = contribute(ctx, { slots: [], core: initialCore() }, w, 2, 5);
    const flushed = flushWindow(ctx, OWNER, open);
    assert.equal(w.dataSync()[0], -1); // 0 − 0.5 × 2 / 1
    assert.deepEqual(updateResult(open.core.window, flushed.core.counters.updateStep, flushed.end), {
      applied: true,
      skipped: null,
      gradientNorm: null,
      updateStep: 1,
      microBatches: 1,
      weight: 1,
      loss: 5,
    });
    disposeSlots(flushed);
    w.dispose();
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
