import * as tf from '@tensorflow/tfjs';
import { nextTokenLoss } from '../../core/nextTokenLoss';
import type { TinyGpt } from './model';

/**
 * Activation checkpointing (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost"):
 * keep only each block's input from the forward pass, and recompute a block's activations when
 * the backward pass reaches it. Memory for activations falls from every block's to one block's
 * plus the blocks' inputs; the price is a second forward pass through every block.
 *
 * Written segment by segment with tfjs's public `tf.valueAndGrads` and `tf.grads` (each given
 * the upstream gradient `dy`), not as a `tf.customGrad` around a block: a custom gradient's
 * `gradFunc` runs inside the outer backward pass, and a `tf.grads` called there starts a tape of
 * its own at gradient depth 0, which replaces the engine's active tape and sets it to null when
 * done (tfjs 4.22, `Engine.gradients`), so the outer backward pass then fails with "Cannot read
 * properties of null (reading 'forEach')". test/tutorial/lm/recompute.test.ts keeps that
 * finding checked.
 */

/** What {@link recomputedGradients} returns: the micro-batch's contribution for `addGradientSums`. Owns the gradient tensors. */
export interface RecomputedGradients {
  /** The gradient of the summed loss for every weight, keyed by variable name. */
  sums: tf.NamedTensorMap;
  /** Target tokens after the shift (the divisor this micro-batch adds to its window). */
  count: number;
  /** The summed loss over those tokens. */
  lossSum: number;
}

/**
 * The gradients of `nextTokenLoss` summed over one micro-batch, as `tf.variableGrads` would give
 * them, with each block's activations recomputed in the backward pass instead of kept from the
 * forward pass. Hand the result to `GradientAccumulator.addGradientSums(sums, { count, lossSum })`
 * and dispose the sums.
 */
export function recomputedGradients(model: TinyGpt, tokens: tf.Tensor2D, mask: tf.Tensor2D | null): RecomputedGradients {
  const layers = model.config.layers;
  const sums: tf.NamedTensorMap = {};
  // Kept: the sums outlive the tidy of the segment that made them; they go to the caller.
  const add = (variables: tf.Variable[], grads: tf.Tensor[]) => variables.forEach((v, i) => (sums[v.name] = tf.keep(grads[i])));
  // Forward without a tape: only the blocks' inputs (and the last block's output) are kept.
  const inputs: tf.Tensor3D[] = [tf.tidy(() => model.embed(tokens))];
  for (let i = 0; i < layers; i++) inputs.push(tf.tidy(() => model.block(i, inputs[i])));
  let lossSum = 0;
  let count = 0;
  // The readout and the loss: the gradient for the last block's output and the head's weights.
  const headWeights = model.readoutWeights();
  let dy = tf.tidy(() => {
    const { value, grads } = tf.valueAndGrads((x: tf.Tensor, ..._weights: tf.Tensor[]) => {
      const counted = nextTokenLoss(model.readout(x as tf.Tensor3D), tokens, mask);
      count = counted.count.dataSync()[0];
      return counted.loss as tf.Scalar;
    })([inputs[layers], ...headWeights]);
    lossSum = value.dataSync()[0];
    add(headWeights, grads.slice(1));
    return grads[0];
  });
  inputs.pop()?.dispose();
  // Backward through the blocks, last first, each recomputed from its kept input.
  for (let i = layers - 1; i >= 0; i--) {
    const weights = model.blockWeights(i);
    const upstream = dy;
    dy = tf.tidy(() => {
      const grads = tf.grads((x: tf.Tensor, ..._weights: tf.Tensor[]) => model.block(i, x as tf.Tensor3D))([inputs[i], ...weights], upstream);
      add(weights, grads.slice(1));
      return grads[0];
    });
    upstream.dispose();
    if (i > 0) inputs.pop()?.dispose();
  }
  const embeddings = [model.tokenEmbedding, model.positionEmbedding];
  tf.tidy(() => add(embeddings, tf.grads(() => model.embed(tokens))(embeddings, dy)));
  tf.dispose([dy, ...inputs]);
  return { sums, count, lossSum };
}
