import * as tf from '@tensorflow/tfjs';

/**
 * The one plain reference the model-based tests compare every trainer with: the big-batch math on
 * the samples seen, in float64 plain JS. The model is a two-layer linear net (INPUTS → HIDDEN → 1,
 * no activation) trained on the per-sample squared error, whose gradient is written out by hand;
 * its variables are numbered in `model.trainableWeights` order (kernel 0, bias 0, kernel 1,
 * bias 1), and layer l owns variables 2l and 2l + 1.
 *
 * A window holds each variable's sum over the samples since the variable was last handed over
 * (a variable frozen mid-window leaves it), and its count; when it ends it is divided once, its
 * norm skipped or clipped, applied with SGD or momentum, and the averages follow (Keras's EMA).
 * This is what the trainers promise (docs/guarantees.md), not how they compute it.
 */

export const INPUTS = 3;
export const HIDDEN = 2;
const SIZES = [INPUTS * HIDDEN, HIDDEN, HIDDEN, 1];

/** One sample: its features, its target, and whether it counts (a masked token does not). */
export interface Sample {
  x: number[];
  y: number;
  counted: boolean;
}

/** The net as a tfjs model, its weights seeded, built. */
export function linearNet(seed: number): tf.Sequential {
  const model = tf.sequential({
    layers: [
      tf.layers.dense({ units: HIDDEN, inputShape: [INPUTS], kernelInitializer: tf.initializers.glorotUniform({ seed }), biasInitializer: tf.initializers.randomUniform({ minval: -0.1, maxval: 0.1, seed: seed + 1 }) }),
      tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 2 }), biasInitializer: 'zeros' }),
    ],
  });
  // Note: a Sequential builds its inner model on first use and then sets every layer's
  // trainable from its own, undoing a freeze made before (tfjs-layers); build it now.
  tf.tidy(() => model.predict(tf.zeros([1, INPUTS])));
  return model;
}

/**
 * `n` samples from a seeded generator, float32 values. A `spike` other than 1 sets every target
 * to ±spike: a gradient whose norm is far above the others' (a few units) whatever the features.
 */
export function makeSamples(n: number, seed: number, spike = 1, masked: boolean[] = []): Sample[] {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.fround(((t ^ (t >>> 14)) >>> 0) / 4294967296 * 2 - 1);
  };
  return Array.from({ length: n }, (_, i) => {
    const x = Array.from({ length: INPUTS }, next);
    const y = next();
    return { x, y: spike === 1 ? y : Math.fround(y < 0 ? -spike : spike), counted: masked[i] !== true };
  });
}

/** Samples as tensors `xs` [n, INPUTS], `ys` [n, 1] and the mask [n] (1 counted, 0 masked). */
export function tensorsOf(samples: Sample[]): { xs: tf.Tensor2D; ys: tf.Tensor2D; mask: tf.Tensor1D } {
  return {
    xs: tf.tensor2d(samples.map((s) => s.x), [samples.length, INPUTS]),
    ys: tf.tensor2d(samples.map((s) => [s.y]), [samples.length, 1]),
    mask: tf.tensor1d(samples.map((s) => (s.counted ? 1 : 0))),
  };
}

/** Per-variable gradient of one sample's squared error, (ŷ − y)², at `p`. */
function sampleGradient(p: number[][], s: Sample): number[][] {
  const [w1, b1, w2, b2] = p;
  const h = Array.from({ length: HIDDEN }, (_, j) => b1[j] + s.x.reduce((a, xi, i) => a + xi * w1[i * HIDDEN + j], 0));
  const e = 2 * (h.reduce((a, hj, j) => a + hj * w2[j], b2[0]) - s.y);
  const dh = w2.map((w) => e * w);
  return [s.x.flatMap((xi) => dh.map((d) => xi * d)), dh, h.map((hj) => e * hj), [e]];
}

/** What the trainers are built with, as the reference reads it. */
export interface ReferenceOptions {
  learningRate: number;
  /** 0 for SGD. */
  momentum: number;
  /** `epochSchedule` table (keys are epochs). */
  schedule: Record<number, number>;
  clipNorm: number | null;
  maxNorm: number | null;
  emaDecay: number | null;
  nonFinite: 'error' | 'skip-micro-batch' | 'skip-window';
}

export interface ReferenceCounters {
  microStep: number;
  updateStep: number;
  epoch: number;
  skippedMicroBatches: number;
  skippedWindows: number;
  skippedLargeUpdates: number;
}

/** The reference's whole state, a plain value (copy it with structuredClone to keep one). */
export interface ReferenceState {
  params: number[][];
  velocity: (number[] | null)[];
  ema: (number[] | null)[];
  known: boolean[];
  counters: ReferenceCounters;
  window: { size: number | null; microBatches: number; weight: number; poisoned: boolean; sums: (number[] | null)[] };
}

const zeros = (n: number) => new Array<number>(n).fill(0);

/** The reference trainer. */
export class Reference {
  state: ReferenceState;

  constructor(readonly options: ReferenceOptions, params: number[][]) {
    this.state = {
      params: params.map((p) => [...p]),
      velocity: SIZES.map(() => null),
      ema: SIZES.map(() => null),
      known: SIZES.map(() => false),
      counters: { microStep: 0, updateStep: 0, epoch: 0, skippedMicroBatches: 0, skippedWindows: 0, skippedLargeUpdates: 0 },
      window: { size: null, microBatches: 0, weight: 0, poisoned: false, sums: SIZES.map(() => null) },
    };
  }

  /** The window size the schedule gives now (factor 1 before its first key, as `epochSchedule`). */
  scheduled(): number {
    let steps = 1;
    for (const [epoch, value] of Object.entries(this.options.schedule).sort((a, b) => Number(a[0]) - Number(b[0]))) if (this.state.counters.epoch >= Number(epoch)) steps = value;
    return steps;
  }

  /** Opens a window if none is open: its size read now. */
  open(): number {
    const w = this.state.window;
    w.size ??= this.scheduled();
    return w.size;
  }

  /**
   * One micro-batch (or a round of them, in order): finite ones join the window and may close it;
   * `finite: false` follows the non-finite policy (the caller checked "error" throws). `trainable`
   * says which variables are handed over. Returns whether it closed a window with an update.
   */
  microBatch(samples: Sample[], trainable: boolean[], finite = true, hint?: boolean): boolean {
    const size = this.open();
    const { counters, window: w } = this.state;
    counters.microStep += 1;
    if (!finite) {
      counters.skippedMicroBatches += 1;
      if (this.options.nonFinite === 'skip-micro-batch') return false;
      w.microBatches += 1;
      w.poisoned = true;
      return w.microBatches >= size ? this.close(hint) : false;
    }
    const counted = samples.filter((s) => s.counted);
    const gradient = SIZES.map(zeros);
    for (const s of counted) sampleGradient(this.state.params, s).forEach((g, v) => g.forEach((x, k) => (gradient[v][k] += x)));
    SIZES.forEach((_, v) => {
      if (!trainable[v]) w.sums[v] = null;
      else w.sums[v] = (w.sums[v] ?? zeros(SIZES[v])).map((x, k) => x + gradient[v][k]);
      if (trainable[v]) this.state.known[v] = true;
    });
    w.microBatches += 1;
    w.weight += counted.length;
    return w.microBatches >= size ? this.close(hint) : false;
  }

  /** Ends the window now (flush): applies what it holds; a window opened but empty just closes. */
  flush(hint?: boolean): boolean {
    if (this.state.window.microBatches === 0) {
      this.state.window.size = null;
      return false;
    }
    return this.close(hint);
  }

  endEpoch(flush = true, hint?: boolean): boolean {
    const applied = flush ? this.flush(hint) : false;
    this.state.counters.epoch += 1;
    return applied;
  }

  /**
   * The window's end: dropped (poisoned or counting 0), skipped above `maxNorm` (within 1e-3 of it
   * the trainer's own decision, `hint`, is followed: float32 may round either way), or applied.
   */
  private close(hint?: boolean): boolean {
    const { counters, window: w, params } = this.state;
    const end = () => {
      this.state.window = { size: null, microBatches: 0, weight: 0, poisoned: false, sums: SIZES.map(() => null) };
    };
    if (w.poisoned || w.weight === 0) {
      counters.skippedWindows += 1;
      end();
      return false;
    }
    const mean = w.sums.map((s) => (s === null ? null : s.map((x) => x / w.weight)));
    const norm = Math.sqrt(mean.reduce((a, m) => a + (m ?? []).reduce((b, x) => b + x * x, 0), 0));
    const { maxNorm, clipNorm, learningRate, momentum, emaDecay } = this.options;
    const tie = maxNorm !== null && Math.abs(norm - maxNorm) <= 1e-3 * maxNorm;
    if (maxNorm !== null && (tie && hint !== undefined ? !hint : norm > maxNorm)) {
      counters.skippedLargeUpdates += 1;
      end();
      return false;
    }
    const factor = clipNorm !== null && norm > clipNorm ? clipNorm / norm : 1;
    mean.forEach((m, v) => {
      // The optimizer keeps a slot for every known variable, and moves only those with a gradient.
      if (this.state.known[v] && momentum > 0) this.state.velocity[v] ??= zeros(SIZES[v]);
      if (m === null) return;
      const g = m.map((x) => x * factor);
      const step = momentum > 0 ? (this.state.velocity[v] = (this.state.velocity[v] as number[]).map((u, k) => momentum * u + g[k])) : g;
      params[v] = params[v].map((p, k) => p - learningRate * step[k]);
    });
    if (emaDecay !== null) {
      this.state.ema = this.state.ema.map((e, v) => (!this.state.known[v] ? e : e === null ? [...params[v]] : e.map((x, k) => emaDecay * x + (1 - emaDecay) * params[v][k])));
    }
    counters.updateStep += 1;
    end();
    return true;
  }
}

/** The largest difference between the trainer's weights and the reference's, relative to the largest reference weight. */
export function relativeDifference(actual: ArrayLike<number>[], expected: number[][]): number {
  const scale = Math.max(1e-3, ...expected.flat().map(Math.abs));
  let worst = 0;
  expected.forEach((e, v) => e.forEach((x, k) => (worst = Math.max(worst, Math.abs(actual[v][k] - x) / scale))));
  return worst;
}

/** Tensors that are not Variables: constant while a trainer only grows its state (accumulators, averages, optimizer slots are Variables). */
export function looseTensors(): number {
  return tf.memory().numTensors - Object.keys(tf.engine().registeredVariables).length;
}
