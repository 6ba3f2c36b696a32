import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileSystem } from '../../src/backend/fileSystem';
import { AccumulatingOptimizer } from '../../src/core/accumulatingOptimizer';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tfjs-accumulate-fs-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function model(name: string): tf.Sequential {
  return tf.sequential({
    name,
    layers: [tf.layers.dense({ units: 4, inputShape: [3], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }), tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) })],
  });
}

describe('fileSystem: model.save and tf.loadLayersModel on disk without tfjs-node', () => {
  it('saves the model with its AccumulatingOptimizer, and a loaded copy trains on as the original', async () => {
    // 4 batches of 8 per epoch, windows of 2; model.save carries the accumulator's whole state
    // (test/core/modelState.test.ts saves mid-window); here the files on disk are the point.
    const xs = tf.randomNormal([32, 3], 0, 1, 'float32', 3);
    const ys = tf.randomNormal([32, 1], 0, 1, 'float32', 4);
    const original = model('saved');
    const optimizer = new AccumulatingOptimizer({ optimizer: tf.train.adam(0.01), accumulationSteps: 2 });
    original.compile({ optimizer, loss: 'meanSquaredError' });
    await original.fit(xs, ys, { batchSize: 8, epochs: 1, verbose: 0, shuffle: false, callbacks: [optimizer.callback()] });
    const folder = path.join(tmp, 'nested', 'model');
    const saved = await original.save(fileSystem(`file://${folder}`), { includeOptimizer: true });
    assert.ok((saved.modelArtifactsInfo.weightDataBytes ?? 0) > 0);
    assert.deepEqual(fs.readdirSync(folder).sort(), ['model.json', 'weights.bin']);

    // The layout tfjs-node writes: one manifest group reading weights.bin, every weight in it.
    const json = JSON.parse(fs.readFileSync(path.join(folder, 'model.json'), 'utf8'));
    assert.deepEqual(Object.keys(json).sort(), ['convertedBy', 'format', 'generatedBy', 'modelTopology', 'trainingConfig', 'weightsManifest']);
    assert.equal(json.weightsManifest.length, 1);
    assert.deepEqual(json.weightsManifest[0].paths, ['weights.bin']);
    // Every weight in weights.bin: the numeric ones at 4 bytes a value, and the accumulator's state
    // as one string tensor (tfjs writes a 4-byte length before each string), all that tfjs handed over.
    const entries = json.weightsManifest[0].weights as { shape: number[]; dtype: string }[];
    const numeric = entries.filter((w) => w.dtype !== 'string').reduce((n, w) => n + 4 * w.shape.reduce((a, b) => a * b, 1), 0);
    assert.ok(entries.every((w) => ['float32', 'int32', 'string'].includes(w.dtype)), JSON.stringify(entries.map((w) => w.dtype)));
    assert.equal(entries.filter((w) => w.dtype === 'string').length, 1, "the accumulator's state is saved with the optimizer");
    assert.equal(fs.statSync(path.join(folder, 'weights.bin')).size, saved.modelArtifactsInfo.weightDataBytes);
    assert.ok((saved.modelArtifactsInfo.weightDataBytes ?? 0) > numeric + 4);
    assert.ok((json.weightsManifest[0].weights as { group?: string }[]).some((w) => w.group === 'optimizer'), 'the optimizer weights are saved');

    const tensors = tf.memory().numTensors;
    for (const location of [folder, `file://${folder}`, path.join(folder, 'model.json')]) {
      const loaded = await tf.loadLayersModel(fileSystem(location));
      assert.deepEqual(
        loaded.getWeights().map((w) => Array.from(w.dataSync())),
        original.getWeights().map((w) => Array.from(w.dataSync())),
      );
      loaded.dispose();
      loaded.optimizer?.dispose();
    }
    assert.equal(tf.memory().numTensors, tensors, 'loading and disposing leaks nothing');

    // model.optimizer is a tf.Optimizer; `instanceof` narrows it to the accumulating one.
    const loaded = await tf.loadLayersModel(fileSystem(folder));
    assert.ok(loaded.optimizer instanceof AccumulatingOptimizer);
    assert.equal(loaded.optimizer.accumulator.accumulationSteps, 2);
    for (const m of [original, loaded]) {
      const accumulating = m.optimizer as AccumulatingOptimizer;
      await m.fit(xs, ys, { batchSize: 8, epochs: 2, verbose: 0, shuffle: false, callbacks: [accumulating.callback()] });
    }
    assert.deepEqual(
      loaded.getWeights().map((w) => Array.from(w.dataSync())),
      original.getWeights().map((w) => Array.from(w.dataSync())),
      'the loaded model resumes bit for bit',
    );
    tf.dispose([xs, ys]);
    for (const m of [original, loaded]) {
      m.optimizer.dispose();
      m.dispose();
    }
  });

  it('joins weight data given in several buffers (tfjs 4.10 and later may hand them so)', async () => {
    const folder = path.join(tmp, 'parts');
    const weightSpecs: tf.io.WeightsManifestEntry[] = [
      { name: 'a', shape: [2], dtype: 'float32' },
      { name: 'b', shape: [1], dtype: 'float32' },
    ];
    await fileSystem(folder).save!({ modelTopology: { class_name: 'none' }, weightSpecs, weightData: [new Float32Array([1, 2]).buffer, new Float32Array([3]).buffer] });
    const artifacts = await fileSystem(folder).load!();
    assert.deepEqual(artifacts.weightSpecs, weightSpecs);
    const data = artifacts.weightData as ArrayBuffer | ArrayBuffer[];
    const joined = Array.isArray(data) ? data : [data];
    assert.deepEqual(joined.flatMap((b) => Array.from(new Float32Array(b))), [1, 2, 3]);
  });

  it('names what is wrong: a location that is not a path, a folder without a model', async () => {
    for (const bad of ['', 'file://', 42, undefined]) {
      assert.throws(() => fileSystem(bad as never), /^Error: fileSystem: location must be a folder, or its model\.json, as a path or a "file:\/\/" URL; got /);
    }
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    await assert.rejects(tf.loadLayersModel(fileSystem(empty)), new RegExp(`fileSystem: cannot read ${empty.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/model\\.json \\(ENOENT`));
    await assert.rejects(fileSystem(empty).save!({ modelTopology: new ArrayBuffer(4) }), /a GraphModel's protobuf\) is not supported/);
    assert.deepEqual(fs.readdirSync(empty), [], 'a refused save writes nothing');
  });
});
