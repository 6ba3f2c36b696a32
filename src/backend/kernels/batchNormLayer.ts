import * as tf from '@tensorflow/tfjs';
import { batchNormTraining, fusedTrainingAvailable } from './batchNormTraining';

/**
 * tfjs-layers' BatchNormalization, trained through {@link batchNormTraining}.
 *
 * The layer's training branch cannot be reached from tfjs's registries (the moments are plain
 * ops on the tape), so `installFastKernels` wraps the class's `call`: in training, for the
 * common case it takes over (normalizing over every axis but the last, with γ and β, on a
 * backend with the fused kernel), it does what tfjs-layers does (the batch's moments,
 * `tf.batchNorm`, then each moving statistic `m − (m − batch)·(1 − momentum)`) with the moments
 * and the normalization differentiated as one op. Everything else (inference, another axis, no
 * γ or β, other backends) runs the layer's own `call`. `uninstallFastKernels` puts it back.
 * test/backend/kernels/batchNormLayer.test.ts checks the outputs and moving statistics against
 * the original `call` bit for bit, so a tfjs whose layer differs fails there.
 */

interface BatchNormLayer {
  axis: number;
  momentum: number;
  epsilon: number;
  center: boolean;
  scale: boolean;
  gamma: tf.LayerVariable | null;
  beta: tf.LayerVariable | null;
  movingMean: tf.LayerVariable;
  movingVariance: tf.LayerVariable;
}

type Call = (this: BatchNormLayer, inputs: tf.Tensor | tf.Tensor[], kwargs: { training?: boolean }) => tf.Tensor | tf.Tensor[];

let original: Call | null = null;

/** How `installedFastKernels` names the wrapped layer, and what it does differently. */
export const BATCH_NORM_LAYER = 'BatchNormalization.call in training';
export const BATCH_NORM_LAYER_DESCRIPTION = "tf.layers.batchNormalization in training: the batch's moments and the normalization differentiated as one op (batchNormTraining.ts)";

/** tfjs-layers' BatchNormalization class, as registered for deserialization. */
function layerPrototype(): { call: Call } {
  const map = tf.serialization.SerializationMap.getMap().classNameMap as Record<string, [{ prototype: { call: Call } }, unknown]>;
  const entry = map.BatchNormalization;
  if (!entry) throw new Error('tfjs-accumulate: tfjs-layers has no BatchNormalization class registered.');
  return entry[0].prototype;
}

/**
 * Whether the layer has the fields this file reads, as tfjs-layers 4.x names them. A version that
 * names them otherwise keeps its own call instead of failing in ours.
 */
function hasExpectedFields(layer: BatchNormLayer): boolean {
  const readable = (v: unknown) => v !== null && typeof v === 'object' && typeof (v as tf.LayerVariable).read === 'function' && typeof (v as tf.LayerVariable).write === 'function';
  return (
    [layer.axis, layer.momentum, layer.epsilon].every((n) => typeof n === 'number') &&
    layer.center === true &&
    layer.scale === true &&
    [layer.gamma, layer.beta, layer.movingMean, layer.movingVariance].every(readable)
  );
}

/** The one input, γ and β, in the case the fused step covers; null to leave the call to the layer. */
function fusedOperands(layer: BatchNormLayer, inputs: tf.Tensor | tf.Tensor[], kwargs: { training?: boolean } | undefined): { x: tf.Tensor; gamma: tf.Tensor; beta: tf.Tensor } | null {
  if (kwargs?.training !== true) return null;
  const x = Array.isArray(inputs) ? (inputs.length === 1 ? inputs[0] : null) : inputs;
  if (!(x instanceof tf.Tensor) || !hasExpectedFields(layer)) return null;
  const axis = layer.axis >= 0 ? layer.axis : layer.axis + x.rank;
  if (axis !== x.rank - 1) return null;
  const gamma = (layer.gamma as tf.LayerVariable).read();
  const beta = (layer.beta as tf.LayerVariable).read();
  return fusedTrainingAvailable(x, gamma, beta) ? { x, gamma, beta } : null;
}

/** The moving-average update, as tfjs-layers writes it. */
function updateMoving(variable: tf.LayerVariable, value: tf.Tensor, momentum: number): void {
  tf.tidy(() => {
    const decay = 1 - momentum;
    const previous = variable.read();
    variable.write(tf.sub(previous, tf.mul(tf.sub(previous, value), decay)));
  });
}

function fusedCall(this: BatchNormLayer, inputs: tf.Tensor | tf.Tensor[], kwargs: { training?: boolean }): tf.Tensor | tf.Tensor[] {
  const fused = fusedOperands(this, inputs, kwargs);
  if (fused === null) return (original as Call).call(this, inputs, kwargs);
  return tf.tidy(() =>
    batchNormTraining(fused.x, fused.gamma, fused.beta, this.epsilon, (mean, variance) => {
      updateMoving(this.movingMean, mean, this.momentum);
      updateMoving(this.movingVariance, variance, this.momentum);
    }),
  );
}

/** Wraps BatchNormalization's `call` (once; again after a restore). */
export function installBatchNormLayer(): void {
  if (original !== null) return;
  const prototype = layerPrototype();
  original = prototype.call;
  prototype.call = fusedCall;
}

/** Puts the layer's own `call` back. */
export function restoreBatchNormLayer(): void {
  if (original === null) return;
  layerPrototype().call = original;
  original = null;
}

/** Whether the layer's `call` is wrapped now (for tests and `installedFastKernels`). */
export function batchNormLayerInstalled(): boolean {
  return original !== null;
}
