import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family, valuesTensor } from './harness';
import { activationReference, addBroadcast, matMulReference } from './reference';

/**
 * Matrix-product families: `BatchMatMul` (with every numpy broadcast of the batch axes at ranks
 * 2-5), `_FusedMatMul` (bias shapes and every fused activation), a weight that is a trainable
 * variable (the wasm kernels cache its transpose), and the fused product's gradient.
 */

/** A matrix size: mostly small and odd, sometimes big enough for the XNNPACK path (16 Ki multiply-adds). */
const size = fc.oneof({ weight: 4, arbitrary: dim(7, true) }, { weight: 1, arbitrary: fc.integer({ min: 17, max: 40 }) });

/** Batch axes that broadcast: the output's, and for each operand how many leading axes it drops and which it keeps at 1. */
const batchAxes = fc
  .record({
    outer: fc.array(dim(3, true), { maxLength: 3 }),
    dropA: fc.integer({ min: 0, max: 3 }),
    dropB: fc.integer({ min: 0, max: 3 }),
    onesA: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    onesB: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  })
  .map(({ outer, dropA, dropB, onesA, onesB }) => {
    const side = (drop: number, ones: boolean[]) => outer.slice(Math.min(drop, outer.length)).map((d, i) => (ones[i] ? 1 : d));
    return { outerA: side(dropA, onesA), outerB: side(dropB, onesB) };
  });

/** Shapes of the stored operands for `op(a)` m x k and `op(b)` k x n. */
function operandShapes(outerA: number[], outerB: number[], m: number, k: number, n: number, transposeA: boolean, transposeB: boolean): { a: number[]; b: number[] } {
  return { a: [...outerA, ...(transposeA ? [k, m] : [m, k])], b: [...outerB, ...(transposeB ? [n, k] : [k, n])] };
}

interface ProductCase {
  a: number[];
  b: number[];
  transposeA: boolean;
  transposeB: boolean;
  seed: number;
}

const productCases: fc.Arbitrary<ProductCase> = fc
  .record({ axes: batchAxes, m: size, k: size, n: size, transposeA: fc.boolean(), transposeB: fc.boolean(), seed: fc.integer({ min: 1, max: 1e6 }) })
  .map(({ axes, m, k, n, transposeA, transposeB, seed }) => ({ ...operandShapes(axes.outerA, axes.outerB, m, k, n, transposeA, transposeB), transposeA, transposeB, seed }));

export const batchMatMul: Family<ProductCase> = {
  name: 'BatchMatMul (tf.matMul)',
  kernels: ['BatchMatMul'],
  cases: productCases,
  describe: (c) => `a ${dims(c.a)} b ${dims(c.b)} transposeA ${c.transposeA} transposeB ${c.transposeB}`,
  run: (c) => tf.matMul(valuesTensor(c.a, c.seed), valuesTensor(c.b, c.seed + 1), c.transposeA, c.transposeB),
  // Stock tfjs multiplies only max(batchA, batchB) matrices: [1,3] against [3,1] is wrong there.
  reference: (c) => [matMulReference(values(c.a, c.seed), c.a, values(c.b, c.seed + 1), c.b, c.transposeA, c.transposeB)],
};

function values(shape: number[], seed: number): Float32Array {
  return randomValues(shape.reduce((x, y) => x * y, 1), seed);
}

const ACTIVATIONS = ['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'] as const;

interface FusedCase extends ProductCase {
  /** Shape of the bias, or null for none. */
  bias: number[] | null;
  activation: (typeof ACTIVATIONS)[number];
  /** Shape of prelu's weights (with activation "prelu"). */
  alpha: number[];
  leakyreluAlpha: number;
}

/**
 * Batch axes tf.fused.matMul accepts: it flattens each operand's batch axes before the kernel,
 * so they must be equal or one side a single matrix.
 */
const fusedCases: fc.Arbitrary<FusedCase> = fc
  .record({
    outer: fc.array(dim(3, true), { maxLength: 3 }),
    shared: fc.constantFrom('none', 'a', 'b'),
    m: size,
    k: size,
    n: size,
    transposeA: fc.boolean(),
    transposeB: fc.boolean(),
    bias: fc.constantFrom('none', 'n', '1', '1xn', 'mxn'),
    activation: fc.constantFrom(...ACTIVATIONS),
    alpha: fc.constantFrom('n', '1', 'mxn'),
    leakyreluAlpha: fc.double({ min: 0, max: 1, noNaN: true }),
    seed: fc.integer({ min: 1, max: 1e6 }),
  })
  .map((r) => {
    const outerA = r.shared === 'a' ? [] : r.outer;
    const outerB = r.shared === 'b' ? [] : r.outer;
    const by = (s: string): number[] => ({ n: [r.n], '1': [1], '1xn': [1, r.n], mxn: [r.m, r.n] })[s] as number[];
    return {
      ...operandShapes(outerA, outerB, r.m, r.k, r.n, r.transposeA, r.transposeB),
      transposeA: r.transposeA,
      transposeB: r.transposeB,
      bias: r.bias === 'none' ? null : by(r.bias),
      activation: r.activation,
      alpha: by(r.alpha),
      leakyreluAlpha: Math.fround(r.leakyreluAlpha),
      seed: r.seed,
    };
  });

function describeFused(c: FusedCase): string {
  const act = c.activation === 'prelu' ? `prelu weights ${dims(c.alpha)}` : c.activation === 'leakyrelu' ? `leakyrelu alpha ${c.leakyreluAlpha}` : c.activation;
  return `a ${dims(c.a)} b ${dims(c.b)} transposeA ${c.transposeA} transposeB ${c.transposeB} bias ${c.bias ? dims(c.bias) : 'none'} activation ${act}`;
}

export const fusedMatMul: Family<FusedCase> = {
  name: '_FusedMatMul (tf.fused.matMul)',
  kernels: ['_FusedMatMul'],
  cases: fusedCases,
  describe: describeFused,
  run: (c) =>
    tf.fused.matMul({
      a: valuesTensor(c.a, c.seed) as tf.Tensor3D,
      b: valuesTensor(c.b, c.seed + 1) as tf.Tensor3D,
      transposeA: c.transposeA,
      transposeB: c.transposeB,
      bias: c.bias ? valuesTensor(c.bias, c.seed + 2) : undefined,
      activation: c.activation,
      preluActivationWeights: c.activation === 'prelu' ? valuesTensor(c.alpha, c.seed + 3) : undefined,
      leakyreluAlpha: c.leakyreluAlpha,
    }),
  // Plain loops: stock tfjs is the oracle of the activations' definitions, not of its kernels.
  reference: (c) => {
    let y = matMulReference(values(c.a, c.seed), c.a, values(c.b, c.seed + 1), c.b, c.transposeA, c.transposeB);
    if (c.bias) y = addBroadcast(y, values(c.bias, c.seed + 2), c.bias);
    return [activationReference(c.activation, y, c.leakyreluAlpha, c.activation === 'prelu' ? { data: values(c.alpha, c.seed + 3), shape: c.alpha } : null)];
  },
  tolerance: 2e-5,
};

interface WeightCase {
  x: number[];
  units: number;
  /** A second view of the weight's data with another shape (same size), or null. */
  view: [number, number] | null;
  seed: number;
}

/**
 * `x · Wᵀ` and `dy · W` with W a trainable variable: the wasm kernels keep a transposed copy of a
 * weight while its data lives (and XNNPACK an operator per right-hand tensor). A case
 * multiplies, assigns new values, multiplies again, and multiplies with the same data seen
 * under another shape: a copy kept for the wrong data or shape shows as a wrong later product.
 */
export const weightProducts: Family<WeightCase> = {
  name: 'BatchMatMul and _FusedMatMul with a trainable weight (cached transposes)',
  kernels: ['BatchMatMul', '_FusedMatMul'],
  cases: fc
    // Products of at least 16 Ki multiply-adds: the wasm kernels transpose (and cache) only those.
    .record({ rows: fc.integer({ min: 16, max: 40 }), inputs: fc.integer({ min: 32, max: 64 }), units: fc.integer({ min: 32, max: 64 }), reshape: fc.boolean(), seed: fc.integer({ min: 1, max: 1e6 }) })
    .map((r) => {
      // Another factorization of units x inputs, when there is one.
      const total = r.units * r.inputs;
      const other = [...Array(total).keys()].map((d) => d + 1).find((d) => total % d === 0 && d !== r.units && d > 1) ?? null;
      return { x: [r.rows, r.inputs], units: r.units, view: r.reshape && other !== null ? ([other, total / other] as [number, number]) : null, seed: r.seed };
    }),
  describe: (c) => `x ${dims(c.x)} W [${c.units},${c.x[1]}] (transposed, a trainable variable, assigned between products)${c.view ? ` then seen as ${dims(c.view)}` : ''}`,
  run: (c) => {
    const w = tf.variable(valuesTensor([c.units, c.x[1]], c.seed + 1), true);
    try {
      const x = valuesTensor(c.x, c.seed);
      const first = tf.matMul(x, w, false, true);
      const fused = tf.fused.matMul({ a: x as tf.Tensor2D, b: w as tf.Tensor2D, transposeB: true, bias: valuesTensor([c.units], c.seed + 2), activation: 'relu' });
      w.assign(valuesTensor([c.units, c.x[1]], c.seed + 3));
      const second = tf.matMul(x, w, false, true);
      // W itself (no transpose): XNNPACK keeps an operator per right-hand tensor.
      const plain = tf.matMul(valuesTensor([16, c.units], c.seed + 4), w);
      const out = [first, fused, second, plain];
      if (c.view) {
        const seen = tf.reshape(w, c.view);
        out.push(tf.matMul(valuesTensor([16, c.view[1]], c.seed + 5), seen, false, true), tf.matMul(valuesTensor([16, c.view[0]], c.seed + 6), seen));
      }
      return out;
    } finally {
      w.dispose();
    }
  },
  keepsDerivedWeights: true,
};

interface FusedGradCase {
  a: number[];
  b: number[];
  transposeA: boolean;
  transposeB: boolean;
  bias: number[] | null;
  seed: number;
}

/** The fused product's gradient (the project's, per input on demand) against tfjs's own. */
export const fusedMatMulGradient: Family<FusedGradCase> = {
  name: 'gradient of tf.fused.matMul',
  kernels: ['gradient of fusedMatMul__op'],
  cases: fc
    .record({ batch: fc.array(dim(3), { maxLength: 2 }), m: size, k: size, n: size, transposeA: fc.boolean(), transposeB: fc.boolean(), bias: fc.constantFrom('none', 'n', '1xn'), seed: fc.integer({ min: 1, max: 1e6 }) })
    .map((r) => ({
      ...operandShapes(r.batch, r.batch, r.m, r.k, r.n, r.transposeA, r.transposeB),
      transposeA: r.transposeA,
      transposeB: r.transposeB,
      // tfjs's own gradient cannot reduce a [1, n] bias's gradient over zero rows (its reshape throws).
      bias: r.bias === 'none' || (r.bias === '1xn' && r.m === 0) ? null : r.bias === 'n' ? [r.n] : [1, r.n],
      seed: r.seed,
    })),
  describe: (c) => `a ${dims(c.a)} b ${dims(c.b)} transposeA ${c.transposeA} transposeB ${c.transposeB} bias ${c.bias ? dims(c.bias) : 'none'}`,
  run: (c) => {
    const a = valuesTensor(c.a, c.seed);
    const b = valuesTensor(c.b, c.seed + 1);
    const bias = c.bias ? valuesTensor(c.bias, c.seed + 2) : null;
    const loss = (...t: tf.Tensor[]) => {
      const y = tf.fused.matMul({ a: t[0] as tf.Tensor3D, b: t[1] as tf.Tensor3D, transposeA: c.transposeA, transposeB: c.transposeB, bias: t[2] });
      return tf.sum(tf.mul(y, valuesTensor(y.shape, c.seed + 3)));
    };
    return tf.grads(loss)(bias ? [a, b, bias] : [a, b]);
  },
};
