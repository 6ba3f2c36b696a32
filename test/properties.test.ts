import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GradientAccumulator } from '../src/gradientAccumulator';
import { disposeOptimizer } from '../src/optimizerSnapshot';
import { Averaging } from '../src/state';
import { OPTIMIZERS, OptimizerName, denseNet, fcParameters, maxRelativeDifference, samples, weightsOf } from './helpers';

/**
 * The core invariant, as a property: whatever the model, the split into micro-batches, the
 * window sizes (fixed or scheduled), the optimizer, the averaging, and wherever flush, endEpoch
 * and a checkpoint/resume fall, the accumulated training equals the reference that applies one
 * big-batch gradient per window (per-sample: the gradient of the mean over the window's samples;
 * per-micro-batch: of the mean of micro-batch means).
 */

type Event = 'none' | 'flush' | 'endEpoch' | 'endEpochCarry' | 'checkpoint';

interface Run {
  inputs: number;
  hidden: number;
  seed: number;
  optimizer: OptimizerName;
  averaging: Averaging;
  /** Window sizes by update step (cycled); a single entry is passed as a number. */
  steps: number[];
  /** Each micro-batch: its size, how the loss reports it, and what happens after it. */
  microBatches: { size: number; perSampleVector: boolean; event: Event }[];
}

const runArbitrary: fc.Arbitrary<Run> = fc.record({
  inputs: fc.integer({ min: 1, max: 5 }),
  hidden: fc.integer({ min: 1, max: 4 }),
  seed: fc.integer({ min: 1, max: 1000 }),
  optimizer: fc.constantFrom<OptimizerName>('sgd', 'momentum', 'adam', 'rmsprop'),
  averaging: fc.constantFrom<Averaging>('per-sample', 'per-micro-batch'),
  steps: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
  microBatches: fc.array(
    fc.record({
      size: fc.integer({ min: 1, max: 6 }),
      perSampleVector: fc.boolean(),
      event: fc.constantFrom<Event>('none', 'none', 'none', 'flush', 'endEpoch', 'endEpochCarry', 'checkpoint'),
    }),
    { minLength: 1, maxLength: 10 },
  ),
});

/** Which micro-batches each applied window holds, simulating the schedule (evaluated at window start). */
function windowsOf(run: Run): number[][] {
  const windows: number[][] = [];
  let open: number[] = [];
  let size = 0;
  const close = () => {
    if (open.length > 0) windows.push(open);
    open = [];
  };
  run.microBatches.forEach((m, i) => {
    if (open.length === 0) size = run.steps[windows.length % run.steps.length];
    open.push(i);
    if (open.length === size) close();
    if (m.event === 'flush' || m.event === 'endEpoch') close();
  });
  close();
  return windows;
}

function perSample(model: tf.LayersModel, xs: tf.Tensor, ys: tf.Tensor): tf.Tensor1D {
  return tf.squeeze(tf.squaredDifference(model.apply(xs) as tf.Tensor, ys), [1]) as tf.Tensor1D;
}

/** The reference: one plain optimizer update per window, from the window's big-batch objective. */
function reference(run: Run, data: { xs: tf.Tensor2D; ys: tf.Tensor2D }[]): Float32Array[] {
  const model = denseNet(run.inputs, run.hidden, run.seed);
  const optimizer = OPTIMIZERS[run.optimizer]();
  for (const window of windowsOf(run)) {
    tf.tidy(() => {
      optimizer.minimize(() => {
        if (run.averaging === 'per-sample') {
          const xs = tf.concat(window.map((i) => data[i].xs));
          const ys = tf.concat(window.map((i) => data[i].ys));
          return tf.mean(perSample(model, xs, ys)) as tf.Scalar;
        }
        return tf.mean(tf.stack(window.map((i) => tf.mean(perSample(model, data[i].xs, data[i].ys))))) as tf.Scalar;
      });
    });
  }
  const weights = weightsOf(model);
  disposeOptimizer(optimizer);
  model.dispose();
  return weights;
}

async function accumulated(run: Run, data: { xs: tf.Tensor2D; ys: tf.Tensor2D }[]): Promise<Float32Array[]> {
  const model = denseNet(run.inputs, run.hidden, run.seed);
  const args = () => ({
    optimizer: OPTIMIZERS[run.optimizer](),
    accumulationSteps: run.steps.length === 1 ? run.steps[0] : ({ updateStep }: { updateStep: number }) => run.steps[updateStep % run.steps.length],
    averaging: run.averaging,
    varList: model.trainableWeights,
  });
  let acc = new GradientAccumulator(args());
  for (const [i, m] of run.microBatches.entries()) {
    const { xs, ys } = data[i];
    if (run.averaging === 'per-sample' && m.perSampleVector) acc.step(() => perSample(model, xs, ys));
    else acc.step(() => tf.mean(perSample(model, xs, ys)), run.averaging === 'per-sample' ? { sampleCount: m.size } : {});
    if (m.event === 'flush') acc.flush();
    if (m.event === 'endEpoch') acc.endEpoch();
    if (m.event === 'endEpochCarry') acc.endEpoch({ flush: false });
    if (m.event === 'checkpoint') {
      // Resume in a fresh accumulator (and optimizer) from the JSON text, as a new process would.
      const text = JSON.stringify(await acc.getState());
      acc.dispose();
      acc = new GradientAccumulator(args());
      await acc.setState(JSON.parse(text));
    }
  }
  acc.flush();
  const weights = weightsOf(model);
  acc.dispose();
  model.dispose();
  return weights;
}

describe('property: accumulation equals the big-batch reference', () => {
  it('for random Dense models, splits, schedules, optimizers, averaging, flush/endEpoch and resume points', async () => {
    await fc.assert(
      fc.asyncProperty(runArbitrary, async (run) => {
        const tensors = tf.memory().numTensors;
        const data = run.microBatches.map((m, i) => samples(m.size, run.inputs, run.seed * 100 + i));
        const expected = reference(run, data);
        const actual = await accumulated(run, data);
        tf.dispose(data.flatMap((d) => [d.xs, d.ys]));
        // Rounding-level only: the sums run in another order than the big batch's reductions.
        const difference = maxRelativeDifference(actual, expected);
        assert.ok(difference <= 1e-4, `relative difference ${difference}`);
        assert.equal(tf.memory().numTensors, tensors, 'tensors leaked');
      }),
      fcParameters(40),
    );
  });

  it('negative case: the same property catches a wrong averaging (per-micro-batch against the per-sample reference)', async () => {
    // Uneven micro-batches in one window: the textbook rule is measurably off, and the check sees it.
    const run: Run = {
      inputs: 3, hidden: 2, seed: 5, optimizer: 'sgd', averaging: 'per-sample', steps: [2],
      microBatches: [{ size: 1, perSampleVector: false, event: 'none' }, { size: 6, perSampleVector: false, event: 'none' }],
    };
    const data = run.microBatches.map((m, i) => samples(m.size, run.inputs, run.seed * 100 + i));
    const expected = reference(run, data);
    const wrong = await accumulated({ ...run, averaging: 'per-micro-batch' }, data);
    tf.dispose(data.flatMap((d) => [d.xs, d.ys]));
    assert.ok(maxRelativeDifference(wrong, expected) > 1e-3, 'the property could not tell the averaging apart');
  });
});
