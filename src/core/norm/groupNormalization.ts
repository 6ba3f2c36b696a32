import * as tf from '@tensorflow/tfjs';
import type { LayerArgs } from '@tensorflow/tfjs-layers/dist/engine/topology';
import { argumentError, isPositiveInteger } from '../errors';
import { checkAxisArgument, checkBoolean, checkEpsilon, resolveChannelAxis, channelsOfInput } from './common';

const OWNER = 'groupNorm';

/**
 * Group normalization (Wu & He 2018) as a pure function: splits the channels into `groups`
 * groups and normalizes every sample's group to zero mean and unit variance over the group's
 * channels and all spatial positions, then applies the per-channel `gamma` and `beta`.
 *
 * Nothing is computed across the batch, so the result for one sample does not depend on the
 * other samples of its micro-batch: this is why it survives micro-batches of 1. `groups = 1`
 * is layer normalization over every non-batch axis; `groups = channels` is instance
 * normalization.
 *
 * @param x Input of rank >= 2, `[batch, ...spatial, channels]` for the default axis.
 * @param gamma Per-channel scale, shape `[channels]`, or null for none.
 * @param beta Per-channel offset, shape `[channels]`, or null for none.
 * @param groups Number of groups; must divide the number of channels.
 * @param epsilon Added to the variance before the square root; > 0.
 * @param axis The channel axis. Default -1 (channels last).
 */
export function groupNorm(
  x: tf.Tensor,
  gamma: tf.Tensor | null,
  beta: tf.Tensor | null,
  groups: number,
  epsilon: number,
  axis = -1,
): tf.Tensor {
  if (!(x instanceof tf.Tensor)) throw argumentError(OWNER, 'x', 'a tf.Tensor of rank >= 2', x);
  if (x.rank < 2) throw argumentError(OWNER, 'x', 'a tensor of rank >= 2 ([batch, ..., channels])', x);
  const channelAxis = resolveChannelAxis(OWNER, axis, x.rank);
  const channels = x.shape[channelAxis];
  checkGroups(OWNER, groups, channels);
  checkEpsilon(OWNER, epsilon);
  for (const [name, p] of [['gamma', gamma], ['beta', beta]] as const) {
    if (p !== null && (!(p instanceof tf.Tensor) || p.rank !== 1 || p.shape[0] !== channels)) {
      throw argumentError(OWNER, name, `null or a tensor of shape [${channels}] (one value per channel)`, p);
    }
  }
  return tf.tidy(() => {
    const last = x.rank - 1;
    // The math is written for channels last; any other channel axis is moved there and back.
    const perm = channelAxis === last ? null : [...Array(x.rank).keys()].filter((i) => i !== channelAxis).concat(channelAxis);
    const xt = perm === null ? x : tf.transpose(x, perm);
    const shape = xt.shape;
    const batch = shape[0];
    const spatial = xt.size / (batch * channels);
    const perGroup = channels / groups;
    const count = spatial * perGroup;
    // Statistics in two reductions: over positions (axis 1 of [batch, positions, groups,
    // channelsPerGroup], a view that stays channels-last and needs no transpose), then over each
    // group's channels. Written this way rather than as tf.moments over axes [1, 3], which
    // transposes the whole activation forward and backward. The statistics, [batch, 1, groups, 1],
    // broadcast over the view: a tf.tile to [batch, 1, channels] instead has a gradient of one
    // slice and one add per repeat (256 of each per call for LayerNorm of 256 features): chapter
    // 6's MLP experiment took 28.9 s with it and 15.7 s with this, on wasm.
    const view = tf.reshape(xt, [batch, spatial, groups, perGroup]);
    const groupMean = (t: tf.Tensor) => tf.reshape(tf.div(tf.sum(tf.sum(t, 1), 2, true), count), [batch, 1, groups, 1]);
    const mean = groupMean(view);
    const centered = tf.sub(view, mean);
    const variance = groupMean(tf.square(centered));
    // gamma is folded into the small [batch, 1, groups, channelsPerGroup] multiplier: one
    // full-size product, not two.
    let multiplier = tf.rsqrt(tf.add(variance, epsilon));
    if (gamma !== null) multiplier = tf.mul(multiplier, tf.reshape(gamma, [groups, perGroup]));
    let normalized = tf.mul(centered, multiplier);
    if (beta !== null) normalized = tf.add(normalized, tf.reshape(beta, [groups, perGroup]));
    const y = tf.reshape(normalized, shape);
    if (perm === null) return y;
    const inverse = new Array<number>(perm.length);
    perm.forEach((p, i) => (inverse[p] = i));
    return tf.transpose(y, inverse);
  });
}

/** Checks that `groups` is a positive integer dividing `channels`. */
export function checkGroups(owner: string, groups: unknown, channels: number): number {
  if (!isPositiveInteger(groups)) {
    throw argumentError(owner, 'groups', `a positive integer that divides the number of channels (${channels})`, groups);
  }
  if (channels % groups !== 0) {
    throw argumentError(owner, 'groups', `a divisor of the number of channels (${channels}): one of ${divisors(channels).join(', ')}`, groups);
  }
  return groups;
}

function divisors(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

/** Options of {@link GroupNormalization}. */
export interface GroupNormalizationArgs extends LayerArgs {
  /** Number of groups; must divide the channel count. Default 32, as in Wu & He 2018. */
  groups?: number;
  /** The channel axis. Default -1 (channels last, NHWC, as tfjs convolutions produce). */
  axis?: number;
  /** Added to the variance before the square root. Default 1e-5 (PyTorch's and Keras 3's). */
  epsilon?: number;
  /** Learn a per-channel offset `beta`. Default true. */
  center?: boolean;
  /** Learn a per-channel scale `gamma`. Default true. */
  scale?: boolean;
}

/**
 * Group normalization layer (Wu & He 2018) for 2-D dense features `[batch, channels]` and 4-D
 * convolution features `[batch, height, width, channels]` (any rank >= 2 works).
 *
 * It behaves the same in training and inference and keeps no moving statistics, so gradient
 * accumulation over micro-batches of any size gives exactly the large-batch gradient.
 *
 * ```ts
 * model.add(tf.layers.conv2d({ filters: 32, kernelSize: 3, useBias: false }));
 * model.add(new GroupNormalization({ groups: 8 }));
 * ```
 */
export class GroupNormalization extends tf.layers.Layer {
  /** Registered name for tfjs serialization. */
  static className = 'GroupNormalization';
  readonly groups: number;
  readonly axis: number;
  readonly epsilon: number;
  readonly center: boolean;
  readonly scale: boolean;
  private gamma: tf.LayerVariable | null = null;
  private beta: tf.LayerVariable | null = null;

  constructor(args: GroupNormalizationArgs = {}) {
    super(args);
    const owner = 'GroupNormalization';
    const groups = args.groups ?? 32;
    if (!isPositiveInteger(groups)) {
      throw argumentError(owner, 'groups', 'a positive integer that divides the number of channels', groups);
    }
    this.groups = groups;
    this.axis = checkAxisArgument(owner, args.axis ?? -1);
    this.epsilon = checkEpsilon(owner, args.epsilon ?? 1e-5);
    this.center = checkBoolean(owner, 'center', args.center, true);
    this.scale = checkBoolean(owner, 'scale', args.scale, true);
    this.supportsMasking = true;
  }

  override build(inputShape: tf.Shape | tf.Shape[]): void {
    const channels = channelsOfInput('GroupNormalization', this.axis, inputShape);
    checkGroups('GroupNormalization', this.groups, channels);
    if (this.scale) this.gamma = this.addWeight('gamma', [channels], 'float32', tf.initializers.ones(), undefined, true);
    if (this.center) this.beta = this.addWeight('beta', [channels], 'float32', tf.initializers.zeros(), undefined, true);
    this.built = true;
  }

  override call(inputs: tf.Tensor | tf.Tensor[]): tf.Tensor {
    const x = Array.isArray(inputs) ? inputs[0] : inputs;
    return groupNorm(x, this.gamma?.read() ?? null, this.beta?.read() ?? null, this.groups, this.epsilon, this.axis);
  }

  override computeOutputShape(inputShape: tf.Shape | tf.Shape[]): tf.Shape | tf.Shape[] {
    return inputShape;
  }

  override getConfig(): tf.serialization.ConfigDict {
    return {
      ...super.getConfig(),
      groups: this.groups,
      axis: this.axis,
      epsilon: this.epsilon,
      center: this.center,
      scale: this.scale,
    };
  }
}
tf.serialization.registerClass(GroupNormalization);

/** Factory in the `tf.layers` style: `groupNormalization({ groups: 8 })`. */
export function groupNormalization(args: GroupNormalizationArgs = {}): GroupNormalization {
  return new GroupNormalization(args);
}
