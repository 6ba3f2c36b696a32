import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs';
import { GradientAccumulator } from '../../src/core/index';
import { PARITY_BACKENDS, useBackend } from '../helpers/kernelParity';
import { batch, denseModel, meanLoss, split } from '../helpers';

// sumAndRead's promise (update.ts), which chapter 1 shows a reader: a micro-step reads one tensor
// back to the host, the loss and the finiteness probe in one tensor, on every backend. On a GPU a read
// is a stall; on cpu and wasm it is cheap, and a change that read the scalars one by one there
// (a3f3c45, reverted) passed every unit test and failed only the chapter. This counts the reads.

const READS = ['dataSync', 'data', 'arraySync', 'array', 'bufferSync', 'buffer'] as const;

/** Runs `fn` with every read of a tensor's values counted; returns the count. */
async function countReads(fn: () => void | Promise<void>): Promise<number> {
  const proto = tf.Tensor.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = READS.map((m) => [m, proto[m]] as const);
  let reads = 0;
  for (const [m, original] of originals) {
    proto[m] = function (this: unknown, ...args: unknown[]) {
      reads++;
      return original.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const [m, original] of originals) proto[m] = original;
  }
  return reads;
}

/** Eight micro-steps in windows of 4 (two updates); `extraRead` plants a second read per step. */
async function eightSteps(extraRead: boolean): Promise<number> {
  const model = denseModel(3);
  const data = batch(32, 5);
  const micro = split(data, [4, 4, 4, 4, 4, 4, 4, 4]);
  const acc = new GradientAccumulator({ optimizer: tf.train.sgd(0.1), accumulationSteps: 4 });
  try {
    return await countReads(() => {
      for (const m of micro) {
        acc.step(() => {
          const loss = meanLoss(model, m.xs, m.ys);
          if (extraRead) loss.dataSync();
          return loss;
        });
      }
      assert.equal(acc.updateStep, 2);
    });
  } finally {
    acc.dispose();
    tf.dispose([data.xs, data.ys, ...micro.flatMap((m) => [m.xs, m.ys])]);
    model.dispose();
  }
}

describe('one host read per micro-step', () => {
  after(() => tf.setBackend('cpu'));
  for (const backend of PARITY_BACKENDS) {
    it(`on ${backend}: 8 micro-steps, 2 of them updates, read 8 tensors`, async () => {
      await useBackend(backend, true);
      assert.equal(await eightSteps(false), 8);
    });
  }

  it('counts a read made inside the step too (the negative case: a second read per micro-step gives 16)', async () => {
    await useBackend('cpu', true);
    assert.equal(await eightSteps(true), 16);
  });
});
