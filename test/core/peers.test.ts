import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';
import { checkTfjsVersion, loadOptionalPeer, MissingPeerDependencyError, TfjsCopiesError, TFJS_PEER_RANGE, UnsupportedTfjsVersionError } from '../../src/core/peers';

/**
 * A second, complete copy of @tensorflow/tfjs in this process, as npm nested one under
 * tfjs-accumulate when the package pinned tfjs as a dependency: the modules are loaded again
 * from a cleared require cache, then the first copy's entries are put back. Both copies share
 * tfjs's global engine, as two installed copies do.
 */
function secondTfjs(): typeof tf {
  const isTfjs = (file: string) => /[\\/]node_modules[\\/]@tensorflow[\\/]/.test(file);
  const first = Object.entries(require.cache).filter(([file]) => isTfjs(file));
  for (const [file] of first) delete require.cache[file];
  const warn = console.warn;
  // The second copy registers every kernel again, one warning each.
  console.warn = () => {};
  try {
    return require('@tensorflow/tfjs') as typeof tf;
  } finally {
    console.warn = warn;
    for (const file of Object.keys(require.cache).filter(isTfjs)) delete require.cache[file];
    for (const [file, mod] of first) require.cache[file] = mod;
  }
}

describe('the peer @tensorflow/tfjs', () => {
  it('accepts the 4.x versions and refuses others by name, saying what to install', () => {
    for (const version of ['4.0.0', '4.22.0', '4.23.0-rc.0', tf.version_core]) checkTfjsVersion(version);
    for (const version of ['3.21.0', '5.0.0', '0.15.3', 'unknown']) {
      assert.throws(
        () => checkTfjsVersion(version),
        (e: Error) => e instanceof UnsupportedTfjsVersionError && e.name === 'UnsupportedTfjsVersionError' && e.message.includes(`tfjs-core ${version}`) && e.message.includes(`npm install @tensorflow/tfjs@${TFJS_PEER_RANGE}`),
      );
    }
  });

  it("refuses model.fit of another copy by name; that copy's tfjs-layers loops on the callback otherwise", async () => {
    const other = secondTfjs();
    assert.notEqual(other.CustomCallback, tf.CustomCallback, 'a second copy was loaded');
    // Each copy counts layer names on its own, while variables share the engine: names given.
    const model = other.sequential({ layers: [other.layers.dense({ name: 'otherCopyDense', units: 1, inputShape: [3], kernelInitializer: 'zeros' })] });
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2 });
    model.compile({ optimizer, loss: 'meanSquaredError' });
    const [xs, ys] = [tf.ones([8, 3]), tf.ones([8, 1])];
    const before = model.getWeights()[0].dataSync().slice();
    await assert.rejects(model.fit(xs, ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [optimizer.callback()] }), (e: Error) => {
      assert.ok(e instanceof TfjsCopiesError, String(e));
      assert.match(e.message, /^AccumulatingOptimizer\.callback: model\.fit runs on another copy of @tensorflow\/tfjs than tfjs-accumulate, which loaded @tensorflow\/tfjs 4\.22\.0/);
      assert.match(e.message, /npm ls @tensorflow\/tfjs-core/);
      return true;
    });
    assert.deepEqual(model.getWeights()[0].dataSync(), before, 'no update was applied');
    assert.equal(optimizer.accumulator.microStep, 0);

    // The cause, shown on a callback without the guard: the other copy wraps it as a config
    // whose trainBegin is CustomCallback.prototype.onTrainBegin, which calls itself. Stopped at
    // 200 calls here; unstopped, V8 ends the process at its heap limit.
    const plain = new tf.CustomCallback({ onTrainBegin: async () => {} });
    const onTrainBegin = tf.CustomCallback.prototype.onTrainBegin;
    let calls = 0;
    tf.CustomCallback.prototype.onTrainBegin = function (this: tf.CustomCallback, logs?: tf.Logs) {
      if (++calls === 200) return Promise.reject(new Error('200 nested calls'));
      return onTrainBegin.call(this, logs);
    };
    try {
      await assert.rejects(model.fit(xs, ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [plain] }), /200 nested calls/);
    } finally {
      tf.CustomCallback.prototype.onTrainBegin = onTrainBegin;
    }
    assert.equal(calls, 200);

    // The same copy drives the guarded callback as before.
    const same = tf.sequential({ layers: [tf.layers.dense({ name: 'sameCopyDense', units: 1, inputShape: [3], kernelInitializer: 'zeros' })] });
    const sameOptimizer = new AccumulatingOptimizer({ optimizer: tf.train.sgd(0.1), accumulationSteps: 2 });
    same.compile({ optimizer: sameOptimizer, loss: 'meanSquaredError' });
    await same.fit(xs, ys, { batchSize: 4, epochs: 1, verbose: 0, callbacks: [sameOptimizer.callback()] });
    assert.equal(sameOptimizer.accumulator.updateStep, 1);
    tf.dispose([xs, ys]);
    model.dispose();
    same.dispose();
    optimizer.dispose();
    sameOptimizer.dispose();
  });
});

describe('loadOptionalPeer', () => {
  const args = { name: 'no-such-package-for-tfjs-accumulate', install: '^1.0.0', neededBy: 'someFunction (tfjs-accumulate/tutorial)' };

  it('returns the package when it loads', () => {
    assert.equal(loadOptionalPeer({ ...args, name: 'node:path', load: () => require('node:path') }), require('node:path'));
  });

  it('names a package that is not installed, what needs it and the command that installs it', () => {
    assert.throws(
      () => loadOptionalPeer({ ...args, load: () => require(args.name) }),
      (e: Error) =>
        e instanceof MissingPeerDependencyError &&
        e.packageName === args.name &&
        e.install === `npm install ${args.name}@^1.0.0` &&
        e.message === `someFunction (tfjs-accumulate/tutorial) needs the package "${args.name}", which is not installed. tfjs-accumulate lists it as an optional peer dependency, which npm does not install by itself: npm install ${args.name}@^1.0.0`,
    );
  });

  it('rethrows the error of a package that is installed but fails to load', () => {
    // Its own dependency is missing: that one is named, not the package.
    const inner = Object.assign(new Error("Cannot find module 'its-own-dependency'"), { code: 'MODULE_NOT_FOUND' });
    assert.throws(() => loadOptionalPeer({ ...args, load: () => { throw inner; } }), (e) => e === inner);
    const broken = new SyntaxError('Unexpected token');
    assert.throws(() => loadOptionalPeer({ ...args, load: () => { throw broken; } }), (e) => e === broken);
  });
});
