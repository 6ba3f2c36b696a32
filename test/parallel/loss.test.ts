import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { selectBackend } from '../../src/backend/selectBackend';
import { ParallelAccumulator, WorkerFailedError } from '../../src/parallel';
import { inLossTerms, resolveLoss } from '../../src/parallel/loss';
import { FIXTURES, args, batchOf, makeData, makeModel, trainable } from '../helpers/parallel';

/**
 * The loss as the workers find and call it: by name on one output or several, and its errors in
 * the words of the option the user wrote, `loss` (issue 32, items 6 and 8).
 */

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

describe('resolveLoss', () => {
  it('a loss by name on several outputs is the sum of its mean over each, as Keras applies one loss to several outputs', () => {
    const mse = resolveLoss('meanSquaredError');
    const ys = [tf.tensor2d([[1, 2]]), tf.tensor2d([[0]])];
    const predictions = [tf.tensor2d([[0, 0]]), tf.tensor2d([[3]])];
    // (1 + 4) / 2 for the first output, 9 for the second.
    assert.equal((mse(ys, predictions) as tf.Tensor).dataSync()[0], 2.5 + 9);
    assert.equal((mse(ys[1], predictions[1]) as tf.Tensor).dataSync()[0], 9, 'one output: the loss itself');
    tf.dispose([...ys, ...predictions]);
  });
});

describe('inLossTerms', () => {
  it('renames the core\'s lossFn to the option the user wrote, and leaves every other message as it was', () => {
    assert.equal(inLossTerms('P', 'P: lossFn must be a function; got 1.'), 'P: loss must be a function; got 1.');
    for (const other of ['P: sampleCount must be …', 'Q: lossFn must be …', 'a lossFn elsewhere']) assert.equal(inLossTerms('P', other), other);
  });
});

describe('ParallelAccumulator: a loss of the wrong shape (issue 32, item 8)', () => {
  it('returning [n, 4] fails the round naming loss, not lossFn, and changes nothing in either thread', async () => {
    const model = makeModel('mlp', 'none');
    const initial = trainable(model);
    const acc = await ParallelAccumulator.create(args(model, { loss: { module: FIXTURES, export: 'unreducedSquaredError' }, accumulationSteps: 1, workers: 1 }));
    const workers = await acc.workerTensorCounts();
    const tensors = tf.memory().numTensors;
    await assert.rejects(acc.step(batchOf(makeData([4])[0])), (e: Error) => {
      assert.ok(e instanceof WorkerFailedError, e.message);
      assert.match(e.message, /^worker 0 failed: ParallelAccumulator: loss must be a function that returns a scalar mean loss or a 1-D per-sample loss; got a function that returned a tensor of shape \[4, 4\]\.$/);
      return true;
    });
    assert.deepEqual([acc.microStep, acc.pendingMicroBatches, acc.updateStep], [0, 0, 0]);
    assert.deepEqual(trainable(model), initial);
    assert.equal(tf.memory().numTensors, tensors, 'main thread');
    assert.deepEqual(await acc.workerTensorCounts(), workers, 'worker');
    await acc.dispose();
    model.dispose();
  });
});

after(() => {
  tf.disposeVariables();
});
