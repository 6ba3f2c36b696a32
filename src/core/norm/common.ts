import * as tf from '@tensorflow/tfjs';
import { argumentError, isPositiveFinite } from '../errors';

/**
 * Resolves a channel axis against a rank. Axis 0 is the batch axis, which a normalization over
 * features never takes as its channel axis, so the accepted range is [1, rank - 1] or
 * [-(rank - 1), -1].
 */
export function resolveChannelAxis(owner: string, axis: unknown, rank: number): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis)) {
    throw argumentError(owner, 'axis', 'an integer channel axis (default -1, channels last)', axis);
  }
  const resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 1 || resolved > rank - 1) {
    throw argumentError(
      owner,
      'axis',
      `a channel axis in [1, ${rank - 1}] or [-${rank - 1}, -1] for a rank-${rank} input (axis 0 is the batch)`,
      axis,
    );
  }
  return resolved;
}

/** The channel count of a layer's input shape at `axis`, which must be known when the layer is built. */
export function channelsOfInput(owner: string, axis: number, inputShape: tf.Shape | tf.Shape[]): number {
  const shape = (Array.isArray(inputShape[0]) ? inputShape[0] : inputShape) as tf.Shape;
  const resolved = resolveChannelAxis(owner, axis, shape.length);
  const channels = shape[resolved];
  if (channels == null) {
    throw argumentError(owner, 'input shape', `a known channel dimension at axis ${resolved}`, `[${shape.join(', ')}]`);
  }
  return channels;
}

/** Checks the integer-ness of `axis` where the rank is not known yet (in a layer constructor). */
export function checkAxisArgument(owner: string, axis: unknown): number {
  if (typeof axis !== 'number' || !Number.isInteger(axis) || axis === 0) {
    throw argumentError(owner, 'axis', 'a non-zero integer channel axis (default -1, channels last; axis 0 is the batch)', axis);
  }
  return axis;
}

/** Checks `epsilon`, the variance floor every normalization adds before the square root. */
export function checkEpsilon(owner: string, epsilon: unknown): number {
  if (!isPositiveFinite(epsilon)) {
    throw argumentError(owner, 'epsilon', 'a finite number > 0 (e.g. 1e-3 or 1e-5)', epsilon);
  }
  return epsilon;
}

/** Checks a moving-average `momentum`: the fraction of the old statistic kept at each update. */
export function checkMomentum(owner: string, momentum: unknown): number {
  if (typeof momentum !== 'number' || !(momentum >= 0 && momentum < 1)) {
    throw argumentError(owner, 'momentum', 'a number in [0, 1) (the fraction of the old moving statistic kept per update)', momentum);
  }
  return momentum;
}

/** Checks an optional boolean argument. */
export function checkBoolean(owner: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw argumentError(owner, name, 'true or false', value);
  return value;
}

/** The axes a batch normalization averages over: every axis but the channel axis. */
export function reductionAxes(rank: number, channelAxis: number): number[] {
  const axes: number[] = [];
  for (let i = 0; i < rank; i++) if (i !== channelAxis) axes.push(i);
  return axes;
}

/** The shape that broadcasts a per-channel vector of length `channels` against a rank-`rank` input. */
export function channelBroadcastShape(rank: number, channelAxis: number, channels: number): number[] {
  const shape = new Array<number>(rank).fill(1);
  shape[channelAxis] = channels;
  return shape;
}

/**
 * Identity in the forward pass, zero gradient in the backward pass. tfjs has no
 * `stop_gradient`, and batch renormalization needs one for its r and d corrections.
 */
export const stopGradient: (x: tf.Tensor) => tf.Tensor = tf.customGrad((...inputs) => ({
  value: (inputs[0] as tf.Tensor).clone(),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
}));

/** Moves an exponential moving average one step: `v <- momentum * v + (1 - momentum) * value`. */
export function movingAverageUpdate(variable: tf.Tensor, value: tf.Tensor, momentum: number): tf.Tensor {
  return tf.add(tf.mul(variable, momentum), tf.mul(value, 1 - momentum));
}
