import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';

/**
 * Shared helpers of the normalization tests: float64 references written out by hand, and the
 * in-memory save/load round trip.
 */

/** Deterministic, non-trivial test values: a seeded normal tensor shifted and scaled per channel. */
export function sampleInput(shape: number[], seed = 3): tf.Tensor {
  return tf.tidy(() => {
    const channels = shape[shape.length - 1];
    const shift = tf.range(0, channels).mul(0.7).sub(1);
    const scale = tf.range(1, channels + 1).mul(0.5);
    return tf.randomNormal(shape, 0, 1, 'float32', seed).mul(scale).add(shift);
  });
}

/**
 * Group normalization in float64 plain JavaScript, channels last: the reference the tfjs
 * implementation is checked against (written from the definition in Wu & He 2018, eq. 1-3:
 * mean and biased variance over each sample's group of channels and all positions).
 */
export function groupNormReference(
  values: ArrayLike<number>,
  shape: number[],
  gamma: ArrayLike<number> | null,
  beta: ArrayLike<number> | null,
  groups: number,
  epsilon: number,
): Float64Array {
  const batch = shape[0];
  const channels = shape[shape.length - 1];
  const positions = values.length / (batch * channels);
  const perGroup = channels / groups;
  const out = new Float64Array(values.length);
  for (let n = 0; n < batch; n++) {
    for (let g = 0; g < groups; g++) {
      const indices: number[] = [];
      for (let p = 0; p < positions; p++) {
        for (let c = g * perGroup; c < (g + 1) * perGroup; c++) indices.push((n * positions + p) * channels + c);
      }
      const mean = indices.reduce((a, i) => a + values[i], 0) / indices.length;
      const variance = indices.reduce((a, i) => a + (values[i] - mean) ** 2, 0) / indices.length;
      for (const i of indices) {
        const c = i % channels;
        out[i] = ((values[i] - mean) / Math.sqrt(variance + epsilon)) * (gamma ? gamma[c] : 1) + (beta ? beta[c] : 0);
      }
    }
  }
  return out;
}

/** Asserts |actual - expected| <= tolerance elementwise. */
export function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number, what = 'values'): void {
  assert.equal(actual.length, expected.length, `${what}: lengths differ`);
  let worst = 0;
  let where = -1;
  for (let i = 0; i < actual.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    if (!(d <= worst)) {
      worst = d;
      where = i;
    }
  }
  assert.ok(worst <= tolerance, `${what}: max difference ${worst} at ${where} (actual ${actual[where]}, expected ${expected[where]}) exceeds ${tolerance}`);
}

/** Saves a model to memory and loads it back, as `model.save` / `tf.loadLayersModel` would through files. */
export async function saveAndLoad(model: tf.LayersModel): Promise<tf.LayersModel> {
  let artifacts: tf.io.ModelArtifacts | null = null;
  await model.save(
    tf.io.withSaveHandler(async (a) => {
      artifacts = a;
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    }),
  );
  assert.ok(artifacts, 'nothing was saved');
  // Through JSON, as a file would carry the topology.
  const saved = artifacts as tf.io.ModelArtifacts;
  const topology = JSON.parse(JSON.stringify(saved.modelTopology));
  return tf.loadLayersModel(tf.io.fromMemory({ ...saved, modelTopology: topology }));
}

/** Sets every weight of a layer to distinct non-default values, so that a round trip that loses one is caught. */
export function perturbWeights(layer: tf.layers.Layer, seed = 11): void {
  const values = layer.getWeights().map((w, i) =>
    tf.tidy(() => {
      if (w.rank === 0) return tf.scalar(7);
      const r = tf.randomUniform(w.shape, 0.5, 1.5, 'float32', seed + i);
      return r;
    }),
  );
  layer.setWeights(values);
  tf.dispose(values);
}
