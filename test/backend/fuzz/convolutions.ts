import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family, Outputs, valuesTensor } from './harness';
import { conv2dReference } from './reference';

/**
 * Convolution families: `Conv2D`, `FusedConv2D`, `DepthwiseConv2dNative` forward; the gradients
 * of `tf.conv2d` (`Conv2DBackpropInput`, `Conv2DBackpropFilter`), of `tf.fused.conv2d` and of
 * `tf.depthwiseConv2d`; and a filter that is a trainable variable (the wasm input gradient caches
 * its flipped copy). Geometries: batch 0-3, sizes 0-7 (sometimes up to 30), 0-5 channels,
 * rectangular filters 1-4, strides 1-3 or dilations 1-3, `same`, `valid`, numeric and explicit
 * padding, `floor`/`round`/`ceil` rounding with a numeric pad.
 */

type Pad = 'same' | 'valid' | number | [[0, 0], [number, number], [number, number], [0, 0]];
type Rounding = 'floor' | 'round' | 'ceil' | undefined;

export interface ConvCase {
  x: [number, number, number, number];
  /** `[kh, kw, ci, co]`, or `[kh, kw, ci, multiplier]` for a depthwise case. */
  filter: [number, number, number, number];
  strides: [number, number];
  dilations: [number, number];
  pad: Pad;
  rounding: Rounding;
  seed: number;
}

const spatial = fc.oneof({ weight: 6, arbitrary: dim(7, true) }, { weight: 1, arbitrary: fc.integer({ min: 8, max: 30 }) });

/** tfjs's geometry of a case, or null when tfjs would reject it (an output size below 0). */
function geometryOf(c: ConvCase, depthwise: boolean): tf.backend_util.Conv2DInfo | null {
  try {
    const g = tf.backend_util.computeConv2DInfo(c.x, c.filter, c.strides, c.dilations, c.pad, c.rounding, depthwise);
    return g.outHeight >= 0 && g.outWidth >= 0 ? g : null;
  } catch {
    return null;
  }
}

/**
 * Convolution cases. `dilations`: whether dilation rates above 1 may be drawn (tfjs's gradients
 * take none); `explicit`: whether explicit padding may be drawn.
 */
export function convCases(o: { depthwise: boolean; dilations: boolean; explicit: boolean }): fc.Arbitrary<ConvCase> {
  const pad: fc.Arbitrary<Pad> = fc.oneof(
    fc.constantFrom<Pad>('same', 'valid'),
    fc.integer({ min: 0, max: 3 }),
    ...(o.explicit
      ? [fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 })).map(([t, b, l, r]): Pad => [[0, 0], [t, b], [l, r], [0, 0]])]
      : []),
  );
  return fc
    .record({
      n: dim(3, true),
      h: spatial,
      w: spatial,
      ci: dim(5, true),
      co: o.depthwise ? dim(3) : dim(5, true),
      kh: dim(4),
      kw: dim(4),
      sh: dim(3),
      sw: dim(3),
      dh: dim(3),
      dw: dim(3),
      dilate: o.dilations ? fc.boolean() : fc.constant(false),
      pad,
      rounding: fc.constantFrom<Rounding>(undefined, 'floor', 'round', 'ceil'),
      seed: fc.integer({ min: 1, max: 1e6 }),
    })
    .map(
      (r): ConvCase => ({
        x: [r.n, r.h, r.w, r.ci],
        filter: [r.kh, r.kw, r.ci, r.co],
        // tfjs takes strides or dilations above 1, never both.
        strides: r.dilate ? [1, 1] : [r.sh, r.sw],
        dilations: r.dilate ? [r.dh, r.dw] : [1, 1],
        pad: r.pad,
        rounding: typeof r.pad === 'number' ? r.rounding : undefined,
        seed: r.seed,
      }),
    )
    .filter((c) => geometryOf(c, o.depthwise) !== null);
}

export function describeConv(c: ConvCase): string {
  const pad = typeof c.pad === 'string' || typeof c.pad === 'number' ? JSON.stringify(c.pad) : `[[${c.pad[1]}],[${c.pad[2]}]]`;
  return `x ${dims(c.x)} filter ${dims(c.filter)} strides ${dims(c.strides)} dilations ${dims(c.dilations)} pad ${pad}${c.rounding ? ` dimRoundingMode ${c.rounding}` : ''}`;
}

const x4 = (c: ConvCase) => valuesTensor(c.x, c.seed) as tf.Tensor4D;
const f4 = (c: ConvCase) => valuesTensor(c.filter, c.seed + 1) as tf.Tensor4D;
const values = (shape: number[], seed: number) => randomValues(shape.reduce((a, b) => a * b, 1), seed);

export const conv2d: Family<ConvCase> = {
  name: 'Conv2D (tf.conv2d)',
  kernels: ['Conv2D'],
  cases: convCases({ depthwise: false, dilations: true, explicit: true }),
  describe: describeConv,
  run: (c) => tf.conv2d(x4(c), f4(c), c.strides, c.pad, 'NHWC', c.dilations, c.rounding),
};

const ACTIVATIONS = ['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'] as const;

interface FusedConvCase extends ConvCase {
  bias: boolean;
  activation: (typeof ACTIVATIONS)[number];
}

export const fusedConv2d: Family<FusedConvCase> = {
  name: 'FusedConv2D (tf.fused.conv2d)',
  kernels: ['FusedConv2D'],
  cases: fc
    .tuple(convCases({ depthwise: false, dilations: true, explicit: false }), fc.boolean(), fc.constantFrom(...ACTIVATIONS))
    .map(([c, bias, activation]) => ({ ...c, bias, activation })),
  describe: (c) => `${describeConv(c)} bias ${c.bias ? `[${c.filter[3]}]` : 'none'} activation ${c.activation}`,
  run: (c) =>
    tf.fused.conv2d({
      x: x4(c),
      filter: f4(c),
      strides: c.strides,
      pad: c.pad as 'same' | 'valid' | number,
      dilations: c.dilations,
      dimRoundingMode: c.rounding,
      bias: c.bias ? valuesTensor([c.filter[3]], c.seed + 2) : undefined,
      activation: c.activation,
      preluActivationWeights: c.activation === 'prelu' ? valuesTensor([c.filter[3]], c.seed + 3) : undefined,
      leakyreluAlpha: 0.3,
    }),
  tolerance: 2e-5,
};

/** The loss `Σ conv(x, W) · R` whose gradients the gradient families compare. */
function convGradients(c: ConvCase, conv: (x: tf.Tensor4D, f: tf.Tensor4D) => tf.Tensor4D): tf.Tensor[] {
  return tf.grads((x: tf.Tensor, f: tf.Tensor) => {
    const y = conv(x as tf.Tensor4D, f as tf.Tensor4D);
    return tf.sum(tf.mul(y, valuesTensor(y.shape, c.seed + 5)));
  })([x4(c), f4(c)]);
}

/** dx and dW from plain loops, with R drawn as `run` draws it. */
function plainConvGradients(c: ConvCase): Outputs {
  const g = geometryOf(c, false) as tf.backend_util.Conv2DInfo;
  const r = conv2dReference(values(c.x, c.seed), values(c.filter, c.seed + 1), g, values(g.outShape, c.seed + 5));
  return [
    { data: r.dx, shape: c.x },
    { data: r.dW, shape: c.filter },
  ];
}

export const conv2dGradients: Family<ConvCase> = {
  name: 'Conv2DBackpropInput and Conv2DBackpropFilter (the gradients of tf.conv2d)',
  kernels: ['Conv2DBackpropInput', 'Conv2DBackpropFilter'],
  cases: convCases({ depthwise: false, dilations: false, explicit: true }),
  describe: describeConv,
  run: (c) => convGradients(c, (x, f) => tf.conv2d(x, f, c.strides, c.pad, 'NHWC', 1, c.rounding)),
  // tfjs's gradient drops dimRoundingMode, so its own kernels are wrong with "ceil": plain loops.
  reference: plainConvGradients,
};

export const fusedConv2dGradients: Family<ConvCase & { bias: boolean }> = {
  name: 'gradient of tf.fused.conv2d',
  kernels: ['gradient of fusedConv2d__op', 'Conv2DBackpropInput', 'Conv2DBackpropFilter'],
  cases: fc.tuple(convCases({ depthwise: false, dilations: false, explicit: false }), fc.boolean()).map(([c, bias]) => ({ ...c, bias })),
  describe: (c) => `${describeConv(c)} bias ${c.bias ? `[${c.filter[3]}]` : 'none'}`,
  run: (c) => {
    const bias = valuesTensor([c.filter[3]], c.seed + 2);
    return tf.grads((...t: tf.Tensor[]) => {
      const y = tf.fused.conv2d({ x: t[0] as tf.Tensor4D, filter: t[1] as tf.Tensor4D, strides: c.strides, pad: c.pad as number, dimRoundingMode: c.rounding, bias: c.bias ? t[2] : undefined });
      return tf.sum(tf.mul(y, valuesTensor(y.shape, c.seed + 5)));
    })(c.bias ? [x4(c), f4(c), bias] : [x4(c), f4(c)]);
  },
  reference: (c) => {
    const out = plainConvGradients(c);
    if (!c.bias) return out;
    const g = geometryOf(c, false) as tf.backend_util.Conv2DInfo;
    const dy = values(g.outShape, c.seed + 5);
    const co = c.filter[3];
    const sum = new Float64Array(co);
    for (let i = 0; i < dy.length; i++) sum[i % co] += dy[i];
    return [...out, { data: Float32Array.from(sum), shape: [co] }];
  },
};

export const depthwiseConv2d: Family<ConvCase> = {
  name: 'DepthwiseConv2dNative (tf.depthwiseConv2d)',
  kernels: ['DepthwiseConv2dNative'],
  cases: convCases({ depthwise: true, dilations: true, explicit: true }),
  describe: describeConv,
  run: (c) => tf.depthwiseConv2d(x4(c), f4(c), c.strides, c.pad, 'NHWC', c.dilations, c.rounding),
};

export const fusedDepthwiseConv2d: Family<FusedConvCase> = {
  name: 'FusedDepthwiseConv2D (tf.fused.depthwiseConv2d)',
  kernels: ['FusedDepthwiseConv2D'],
  cases: fc
    .tuple(convCases({ depthwise: true, dilations: true, explicit: false }), fc.boolean(), fc.constantFrom(...ACTIVATIONS))
    .map(([c, bias, activation]) => ({ ...c, bias, activation })),
  describe: (c) => `${describeConv(c)} bias ${c.bias ? `[${c.filter[2] * c.filter[3]}]` : 'none'} activation ${c.activation}`,
  run: (c) => {
    const channels = c.filter[2] * c.filter[3];
    return tf.fused.depthwiseConv2d({
      x: x4(c),
      filter: f4(c),
      strides: c.strides,
      pad: c.pad as 'same' | 'valid' | number,
      dilations: c.dilations,
      dimRoundingMode: c.rounding,
      bias: c.bias ? valuesTensor([channels], c.seed + 2) : undefined,
      activation: c.activation,
      preluActivationWeights: c.activation === 'prelu' ? valuesTensor([channels], c.seed + 3) : undefined,
      leakyreluAlpha: 0.3,
    });
  },
  tolerance: 2e-5,
};

export const depthwiseGradients: Family<ConvCase> = {
  name: 'DepthwiseConv2dNativeBackpropInput and ...BackpropFilter (the gradients of tf.depthwiseConv2d)',
  kernels: ['DepthwiseConv2dNativeBackpropInput', 'DepthwiseConv2dNativeBackpropFilter'],
  cases: convCases({ depthwise: true, dilations: false, explicit: true }),
  describe: describeConv,
  run: (c) => convGradients(c, (x, f) => tf.depthwiseConv2d(x, f, c.strides, c.pad, 'NHWC', 1, c.rounding)),
};

interface WeightCase {
  x: [number, number, number, number];
  /** The variable's shape, and another `[kh, kw, ci, co]` of the same size it is then seen as. */
  filter: [number, number, number, number];
  view: [number, number, number, number];
  strides: number;
  pad: 'same' | 'valid';
  seed: number;
}

/**
 * The input gradient with the filter a trainable variable (the wasm kernel caches its flipped or
 * transposed copy while the variable's data lives): gradient, assign, gradient again, then the
 * same data seen under another `[ci, co]` split. A copy kept for other data or another shape
 * shows as a wrong second or third gradient.
 */
export const convWeightGradients: Family<WeightCase> = {
  name: 'Conv2DBackpropInput with a trainable filter (cached flipped copies)',
  kernels: ['Conv2DBackpropInput'],
  cases: fc
    .record({ n: dim(2), h: dim(7), w: dim(7), k: dim(3), a: dim(4), b: dim(4), swap: fc.boolean(), strides: dim(2), pad: fc.constantFrom<'same' | 'valid'>('same', 'valid'), seed: fc.integer({ min: 1, max: 1e6 }) })
    .map((r): WeightCase => {
      // ci·co = a·b·2 under both splits: [a, 2b] then [2a, b] (or the other way round).
      const first: [number, number] = r.swap ? [2 * r.a, r.b] : [r.a, 2 * r.b];
      const second: [number, number] = r.swap ? [r.a, 2 * r.b] : [2 * r.a, r.b];
      return { x: [r.n, r.h + r.k, r.w + r.k, first[0]], filter: [r.k, r.k, ...first], view: [r.k, r.k, ...second], strides: r.strides, pad: r.pad, seed: r.seed };
    }),
  describe: (c) => `x ${dims(c.x)} filter ${dims(c.filter)} (a trainable variable, assigned between gradients, then seen as ${dims(c.view)}) strides ${c.strides} pad ${c.pad}`,
  run: (c) => {
    const w = tf.variable(valuesTensor(c.filter, c.seed + 1), true);
    try {
      const gradOfX = (x: tf.Tensor4D, f: tf.Tensor4D) =>
        tf.grad((t: tf.Tensor) => {
          const y = tf.conv2d(t as tf.Tensor4D, f, c.strides, c.pad);
          return tf.sum(tf.mul(y, valuesTensor(y.shape, c.seed + 5)));
        })(x);
      const x = valuesTensor(c.x, c.seed) as tf.Tensor4D;
      const first = gradOfX(x, w as tf.Tensor4D);
      w.assign(valuesTensor(c.filter, c.seed + 2));
      const second = gradOfX(x, w as tf.Tensor4D);
      const x2 = valuesTensor([c.x[0], c.x[1], c.x[2], c.view[2]], c.seed + 3) as tf.Tensor4D;
      const third = gradOfX(x2, tf.reshape(w, c.view) as tf.Tensor4D);
      return [first, second, third];
    } finally {
      w.dispose();
    }
  },
  keepsDerivedWeights: true,
};

