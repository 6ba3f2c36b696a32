import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { GradientAccumulator } from '../../src/core/gradientAccumulator';
import { warmupCosine } from '../../src/core/learningRate';
import { epochSchedule } from '../../src/core/schedule';

/**
 * The files a reader opens to follow one window of `GradientAccumulator.step` (issue 32): those
 * whose code runs, measured with V8's precise coverage (call counts) around the two micro-steps of
 * one window, the first opening it and the second applying it with every per-update option on.
 * At e3882cf the same measurement gave 18 files and 2,263 lines; the list below is what it gives
 * now, so that a change to the path is a decision made here. The update function itself is
 * update.ts, applyWindow.ts, accumulation.ts, addChecked.ts and state.ts.
 */

const ROOT = relative(process.cwd(), `${__dirname}/../..`) || '.';
const PATH = [
  'accumulation.ts', 'addChecked.ts', 'applyWindow.ts', 'ema.ts', 'errors.ts', 'gradientAccumulator.ts', 'learningRate.ts',
  'lossGradient.ts', 'optimizerSnapshot.ts', 'pendingGuard.ts', 'schedule.ts', 'state.ts', 'update.ts', 'varList.ts',
].map((f) => `src/core/${f}`);

const session = new Session();
before(async () => {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
});
after(() => session.disconnect());

/** The files of src/ whose functions ran during `fn`, with their lines. */
async function filesRun(fn: () => void): Promise<{ files: string[]; lines: number }> {
  await session.post('Profiler.takePreciseCoverage'); // counts start again from here
  fn();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = result
    .filter((s) => s.url.includes('/src/') && s.functions.some((f) => f.ranges[0].count > 0))
    .map((s) => relative(`${__dirname}/../..`, fileURLToPath(s.url)))
    .sort();
  return { files, lines: files.reduce((n, f) => n + readFileSync(`${ROOT}/${f}`, 'utf8').split('\n').length - 1, 0) };
}

describe('the files one window of GradientAccumulator.step runs', () => {
  it('are the 14 of the list (18 at e3882cf); a call into no library code runs none', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [4], activation: 'tanh' }), tf.layers.dense({ units: 1 })] });
    const [xs, ys] = [tf.randomNormal([5, 4], 0, 1, 'float32', 1), tf.randomNormal([5, 1], 0, 1, 'float32', 2)];
    const acc = new GradientAccumulator({
      optimizer: tf.train.adam(0.01),
      accumulationSteps: epochSchedule({ 0: 2 }),
      clipNorm: 1,
      skipLargeUpdates: { maxNorm: 1e6, factor: 100, history: 2 },
      weightDecay: { rate: 0.01 },
      ema: { decay: 0.9 },
      learningRate: warmupCosine({ peak: 0.01, warmupSteps: 1, totalSteps: 10 }),
    });
    const step = () => acc.step(() => tf.squeeze(tf.squaredDifference(model.apply(xs) as tf.Tensor, ys), [1]));
    for (let i = 0; i < 4; i++) step(); // two windows first: every slot and average exists
    const measured = await filesRun(() => {
      assert.equal(step().applied, false);
      assert.equal(step().applied, true);
    });
    console.log(`one window of step runs ${measured.files.length} files, ${measured.lines} lines: ${measured.files.join(', ')}`);
    assert.deepEqual(measured.files, PATH);
    assert.deepEqual((await filesRun(() => tf.tidy(() => tf.add(xs, 1)))).files, []);
    acc.dispose();
    model.dispose();
    tf.dispose([xs, ys]);
  });
});
