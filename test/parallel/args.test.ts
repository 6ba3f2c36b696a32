import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { BACKEND_ENV_VAR, selectBackend } from '../../src/backend/selectBackend';
import { ParallelAccumulator, WORKERS_PER_CORE, maxWorkers } from '../../src/parallel';
import { checkParallelArgs } from '../../src/parallel/args';
import { args, makeModel, threadCount } from '../helpers/parallel';

/**
 * The parallel trainer's own options, checked before any thread starts (issue 32, items 8 and
 * 12): `workers` has an upper bound, and `backend` (or the environment variable the workers
 * would read instead) is checked by its name.
 */

const OWNER = 'ParallelAccumulator';
const PREFERENCES = '"auto", "tensorflow", "native", "native-cpu", "wasm", "cpu", "wasm-stock", "cpu-stock"';

before(async () => {
  await selectBackend('wasm', { onNotice: () => {} });
});

describe('checkParallelArgs: workers and backend', () => {
  const cores = availableParallelism();
  let model: tf.Sequential;
  let optimizer: tf.Optimizer;
  before(() => {
    model = makeModel('mlp', 'none');
    optimizer = tf.train.sgd(0.1);
  });

  it(`accepts 1 to ${WORKERS_PER_CORE} per core, and refuses more, 0 and fractions by name with the bound`, () => {
    assert.equal(maxWorkers(2), 8);
    assert.equal(maxWorkers(0), WORKERS_PER_CORE, 'at least one core');
    assert.equal(maxWorkers(), WORKERS_PER_CORE * cores);
    assert.equal(checkParallelArgs(OWNER, args(model, { optimizer, workers: maxWorkers() })).workers, maxWorkers());
    assert.equal(checkParallelArgs(OWNER, args(model, { optimizer, workers: 1 })).workers, 1);
    assert.equal(checkParallelArgs(OWNER, args(model, { optimizer, workers: undefined })).workers, cores, 'one per core by default');
    const bound = new RegExp(`^${OWNER}: workers must be an integer from 1 to ${maxWorkers()} \\(${WORKERS_PER_CORE} per core on this machine's ${cores}: more threads only wait for a core\\), or left out for one per core; got `);
    for (const workers of [maxWorkers() + 1, 1000, 0, 1.5, Number.NaN]) {
      assert.throws(() => checkParallelArgs(OWNER, args(model, { optimizer, workers })), (e: Error) => bound.test(e.message) && e.message.endsWith(`got ${Number.isNaN(workers) ? 'NaN' : workers}.`), String(workers));
    }
  });

  it('checks backend by its name and the accepted values, and the environment variable the workers read when it is left out', () => {
    assert.equal(checkParallelArgs(OWNER, args(model, { optimizer, backend: 'cpu' })).backend, 'cpu');
    assert.throws(() => checkParallelArgs(OWNER, args(model, { optimizer, backend: 'wsam' as never })), new RegExp(`^Error: ${OWNER}: backend must be one of ${PREFERENCES}, or left out; got "wsam"\\.$`));
    const saved = process.env[BACKEND_ENV_VAR];
    try {
      process.env[BACKEND_ENV_VAR] = 'wsam';
      assert.throws(
        () => checkParallelArgs(OWNER, args(model, { optimizer, backend: undefined })),
        new RegExp(`^Error: ${OWNER}: the ${BACKEND_ENV_VAR} environment variable \\(read by every worker, since backend is left out\\) must be one of ${PREFERENCES}, or unset; got "wsam"\\.$`),
      );
      assert.equal(checkParallelArgs(OWNER, args(model, { optimizer, backend: 'wasm' })).backend, 'wasm', 'an explicit backend wins over the variable');
      process.env[BACKEND_ENV_VAR] = 'cpu';
      assert.equal(checkParallelArgs(OWNER, args(model, { optimizer, backend: undefined })).backend, undefined, 'a good variable is left to the workers');
    } finally {
      if (saved === undefined) delete process.env[BACKEND_ENV_VAR];
      else process.env[BACKEND_ENV_VAR] = saved;
    }
  });

  it('create refuses both before any thread starts, keeping no tensor', async () => {
    const threads = threadCount();
    const tensors = tf.memory().numTensors;
    await assert.rejects(ParallelAccumulator.create(args(model, { optimizer, backend: 'wsam' as never })), /ParallelAccumulator: backend must be one of "auto"/);
    await assert.rejects(ParallelAccumulator.create(args(model, { optimizer, workers: 1000 })), /ParallelAccumulator: workers must be an integer from 1 to/);
    assert.deepEqual([threadCount(), tf.memory().numTensors], [threads, tensors]);
  });

  after(() => {
    optimizer.dispose();
    model.dispose();
  });
});
