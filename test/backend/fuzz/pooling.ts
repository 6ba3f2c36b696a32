import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { dim, dims, Family, Outputs } from './harness';
import { maxPoolReference, poolGeometry } from './reference';
import { randomValues } from '../../helpers/kernelParity';

/**
 * Max pooling, forward and gradient (`MaxPool`, `MaxPoolGrad`): rectangular windows, strides,
 * `same`/`valid`/numeric padding with `floor`/`round`/`ceil` rounding, values with ties (whole
 * numbers), −Infinity and NaN. Against plain loops: with a numeric pad and `ceil`, stock tfjs's
 * own gradient is wrong (it recomputes the output size without the rounding).
 *
 * With NaN in the input only the gradient (the project's kernel) is compared: the stock wasm
 * forward pass (XNNPACK) gives −Infinity for a window that starts with a NaN, where stock cpu
 * skips the NaN, and making it skip them would cost a scan of every input (docs/backends.md).
 */

type Rounding = 'floor' | 'round' | 'ceil' | undefined;

interface PoolCase {
  x: [number, number, number, number];
  filterSize: [number, number];
  strides: [number, number];
  pad: 'same' | 'valid' | number;
  rounding: Rounding;
  /** `random`: floats in [-1, 1); `ties`: whole numbers 0-2; `specials`: ties with −Infinity and NaN. */
  values: 'random' | 'ties' | 'specials';
  seed: number;
}

/** The input values of a case, as `run` and the reference both draw them. */
function inputValues(c: PoolCase): Float32Array {
  const v = randomValues(c.x.reduce((a, b) => a * b, 1), c.seed);
  if (c.values === 'random') return v;
  return v.map((u, i) => {
    if (c.values === 'specials' && i % 7 === 3) return u < 0 ? -Infinity : NaN;
    return Math.floor((u + 1) * 1.5);
  });
}

function geometryOf(c: PoolCase): tf.backend_util.Conv2DInfo | null {
  try {
    const g = poolGeometry(c.x, c.filterSize, c.strides, c.pad, c.rounding);
    return g.outHeight >= 0 && g.outWidth >= 0 ? g : null;
  } catch {
    return null;
  }
}

const cases: fc.Arbitrary<PoolCase> = fc
  .record({
    n: dim(3, true),
    h: fc.oneof({ weight: 6, arbitrary: dim(8, true) }, { weight: 1, arbitrary: fc.integer({ min: 9, max: 30 }) }),
    w: fc.oneof({ weight: 6, arbitrary: dim(8, true) }, { weight: 1, arbitrary: fc.integer({ min: 9, max: 30 }) }),
    c: fc.oneof(dim(5, true), fc.constantFrom(4, 8, 12)),
    fh: dim(4),
    fw: dim(4),
    sh: dim(3),
    sw: dim(3),
    pad: fc.oneof(fc.constantFrom<'same' | 'valid'>('same', 'valid'), fc.integer({ min: 0, max: 2 })),
    rounding: fc.constantFrom<Rounding>(undefined, 'floor', 'round', 'ceil'),
    values: fc.constantFrom<PoolCase['values']>('random', 'ties', 'specials'),
    seed: fc.integer({ min: 1, max: 1e6 }),
  })
  .map(
    (r): PoolCase => ({
      x: [r.n, r.h, r.w, r.c],
      filterSize: [r.fh, r.fw],
      strides: [r.sh, r.sw],
      pad: r.pad,
      rounding: typeof r.pad === 'number' ? r.rounding : undefined,
      values: r.values,
      seed: r.seed,
    }),
  )
  .filter((c) => geometryOf(c) !== null);

export const maxPool: Family<PoolCase> = {
  name: 'MaxPool and MaxPoolGrad (tf.maxPool and its gradient)',
  kernels: ['MaxPool', 'MaxPoolGrad'],
  cases,
  describe: (c) => `x ${dims(c.x)} (${c.values} values) filterSize ${dims(c.filterSize)} strides ${dims(c.strides)} pad ${JSON.stringify(c.pad)}${c.rounding ? ` dimRoundingMode ${c.rounding}` : ''}`,
  run: (c) => {
    const x = tf.tensor4d(inputValues(c), c.x);
    const pool = (t: tf.Tensor) => tf.maxPool(t as tf.Tensor4D, c.filterSize, c.strides, c.pad, c.rounding);
    const y = pool(x);
    const dx = tf.grad((t: tf.Tensor) => tf.sum(tf.mul(pool(t), tf.tensor(randomValues(y.size, c.seed + 1), y.shape))))(x);
    return c.values === 'specials' ? [dx] : [y, dx];
  },
  reference: (c): Outputs => {
    const g = geometryOf(c) as tf.backend_util.Conv2DInfo;
    const { y, dx } = maxPoolReference(inputValues(c), g, randomValues(g.outShape.reduce((a, b) => a * b, 1), c.seed + 1));
    const gradient = { data: dx, shape: c.x };
    return c.values === 'specials' ? [gradient] : [{ data: y, shape: g.outShape }, gradient];
  },
};
