import * as tf from '@tensorflow/tfjs';
import fc from 'fast-check';
import { addChecked, addCheckedAll, addCheckedAllRead } from '../../../src/core/addChecked';
import { randomValues } from '../../helpers/kernelParity';
import { dim, dims, Family } from './harness';

/**
 * Elementwise and copy families: `Tile` (and `tf.broadcastTo`), the broadcasting `Add`, `Sub`,
 * `Multiply`, `RealDiv`, `Relu` and its gradient's `Step`, `Identity` and a same-dtype `Cast`
 * (which share data on wasm), and the accumulator's `addChecked` kernel. Ranks 1-5, zero-size
 * axes, and values that include ±Infinity, NaN and −0 where the kernel must pass them through.
 */

type Values = 'random' | 'specials';

/** Values for `size` elements: floats in [-1, 1), or with ±Infinity, NaN, 0, −0 and 1e38 mixed in. */
function valuesOf(size: number, seed: number, kind: Values): Float32Array {
  const v = randomValues(size, seed);
  if (kind === 'random') return v;
  const specials = [Infinity, -Infinity, NaN, 0, -0, 1e38, -1e38];
  return v.map((u, i) => (i % 3 === 1 ? specials[Math.floor((u + 1) * 3.5) % specials.length] : u));
}

function tensorOf(shape: number[], seed: number, kind: Values = 'random', dtype: 'float32' | 'int32' | 'bool' = 'float32'): tf.Tensor {
  const v = valuesOf(shape.reduce((a, b) => a * b, 1), seed, kind);
  if (dtype === 'float32') return tf.tensor(v, shape);
  return tf.tensor(Int32Array.from(v, (u) => (dtype === 'bool' ? (u > 0 ? 1 : 0) : Math.round(u * 100))), shape, dtype);
}

const shapeArb = (maxRank: number, maxDim: number) => fc.array(dim(maxDim, true), { minLength: 1, maxLength: maxRank });

interface TileCase {
  x: number[];
  reps: number[];
  dtype: 'float32' | 'int32' | 'bool';
  seed: number;
}

export const tile: Family<TileCase> = {
  name: 'Tile (tf.tile, tf.broadcastTo)',
  kernels: ['Tile'],
  cases: fc
    .record({ x: shapeArb(5, 3), reps: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 5, maxLength: 5 }), dtype: fc.constantFrom<TileCase['dtype']>('float32', 'int32', 'bool'), seed: fc.integer({ min: 1, max: 1e6 }) })
    .map((r) => ({ x: r.x, reps: r.reps.slice(0, r.x.length), dtype: r.dtype, seed: r.seed })),
  describe: (c) => `x ${dims(c.x)} ${c.dtype} reps ${dims(c.reps)}`,
  run: (c) => {
    const x = tensorOf(c.x, c.seed, 'random', c.dtype);
    const tiled = tf.tile(x, c.reps);
    // broadcastTo tiles the unit axes of x (axes of 0 and 1 only).
    const target = c.x.map((d, i) => (d === 1 ? c.reps[i] : d));
    return [tf.cast(tiled, 'float32'), tf.cast(tf.broadcastTo(x, target), 'float32')];
  },
};

const BINARY = ['add', 'sub', 'mul', 'div'] as const;

interface BinaryCase {
  op: (typeof BINARY)[number];
  a: number[];
  b: number[];
  values: Values;
  seed: number;
}

/** Two shapes that broadcast: the output's axes, each operand dropping leading axes and keeping some at 1. */
const broadcastPair = fc
  .record({
    out: shapeArb(5, 4),
    dropA: fc.integer({ min: 0, max: 4 }),
    dropB: fc.integer({ min: 0, max: 4 }),
    onesA: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    onesB: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  })
  .map(({ out, dropA, dropB, onesA, onesB }) => {
    const side = (drop: number, ones: boolean[]) => out.slice(Math.min(drop, out.length - 1)).map((d, i) => (ones[i] ? 1 : d));
    return { a: side(dropA, onesA), b: side(dropB, onesB) };
  });

export const binary: Family<BinaryCase> = {
  name: 'Add, Sub, Multiply, RealDiv with broadcasting',
  kernels: ['Add', 'Sub', 'Multiply', 'RealDiv'],
  cases: fc
    .record({ op: fc.constantFrom(...BINARY), shapes: broadcastPair, values: fc.constantFrom<Values>('random', 'specials'), seed: fc.integer({ min: 1, max: 1e6 }) })
    .map((r) => ({ op: r.op, a: r.shapes.a, b: r.shapes.b, values: r.values, seed: r.seed })),
  describe: (c) => `${c.op} a ${dims(c.a)} b ${dims(c.b)} (${c.values} values)`,
  run: (c) => tf[c.op](tensorOf(c.a, c.seed, c.values), tensorOf(c.b, c.seed + 1, c.values)),
};

interface UnaryCase {
  x: number[];
  values: Values;
  seed: number;
}

const unaryCases = fc.record({ x: shapeArb(5, 5), values: fc.constantFrom<Values>('random', 'specials'), seed: fc.integer({ min: 1, max: 1e6 }) });

export const relu: Family<UnaryCase> = {
  name: 'Relu and Step (tf.relu and its gradient)',
  kernels: ['Relu', 'Step'],
  cases: unaryCases,
  describe: (c) => `x ${dims(c.x)} (${c.values} values)`,
  run: (c) => {
    const x = tensorOf(c.x, c.seed, c.values);
    return [tf.relu(x), tf.grad((t: tf.Tensor) => tf.sum(tf.mul(tf.relu(t), tensorOf(c.x, c.seed + 1))))(x), tf.step(x, 0.25)];
  },
};

interface CopyCase extends UnaryCase {
  dtype: 'float32' | 'int32' | 'bool';
}

export const identity: Family<CopyCase> = {
  name: 'Identity and Cast to the same dtype (tf.clone, tf.cast), read after the input is disposed',
  kernels: ['Identity', 'Cast'],
  cases: fc.tuple(unaryCases, fc.constantFrom<CopyCase['dtype']>('float32', 'int32', 'bool')).map(([c, dtype]) => ({ ...c, dtype })),
  describe: (c) => `x ${dims(c.x)} ${c.dtype}`,
  run: (c) => {
    const x = tensorOf(c.x, c.seed, c.values, c.dtype);
    const copies = [tf.clone(x), tf.cast(x, c.dtype), tf.cast(tf.cast(x, 'float32'), 'int32')];
    x.dispose();
    return copies.map((t) => tf.cast(t, 'float32'));
  },
};

interface AddCheckedCase extends UnaryCase {
  withSum: boolean;
  weight: number;
  /**
   * One non-finite value among finite ones, at `at` modulo the size: the SIMD loop keeps a
   * separate check per vector of an iteration, and a lone value shows whether each one reaches
   * the result (`specials` put one in every third element, so one lane alone never decides).
   */
  lone: { at: number; value: number } | null;
}

export const addCheckedFamily: Family<AddCheckedCase> = {
  name: 'addChecked (the accumulator kernel TfjsAccumulateAddChecked)',
  kernels: ['TfjsAccumulateAddChecked'],
  cases: fc
    .record({
      x: shapeArb(4, 9),
      values: fc.constantFrom<Values>('random', 'specials'),
      withSum: fc.boolean(),
      weight: fc.oneof(fc.constant(1), fc.double({ min: -4, max: 4, noNaN: true })),
      seed: fc.integer({ min: 1, max: 1e6 }),
      lone: fc.option(fc.record({ at: fc.nat(), value: fc.constantFrom(Infinity, -Infinity, NaN) }), { nil: null }),
    }),
  describe: (c) => `gradient ${dims(c.x)} (${c.values} values${c.lone ? `, ${c.lone.value} at ${c.lone.at}` : ''}) ${c.withSum ? 'onto a sum' : 'no sum'} weight ${c.weight}`,
  run: (c) => {
    const size = c.x.reduce((a, b) => a * b, 1);
    const values = valuesOf(size, c.seed, c.values);
    if (c.lone && size > 0) values[c.lone.at % size] = c.lone.value;
    const { sum, check } = addChecked(c.withSum ? tensorOf(c.x, c.seed + 1) : null, tf.tensor(values, c.x), c.weight);
    // The check is 0 or NaN; its sign is not part of the contract.
    return [sum, tf.abs(check)];
  },
  tolerance: 0,
};

interface AddCheckedAllCase {
  /** One entry per variable of the micro-step: its gradient's shape, whether it has a running sum, a lone non-finite value. */
  parts: { x: number[]; withSum: boolean; lone: { at: number; value: number } | null }[];
  values: Values;
  weight: number;
  /** The window's divisor on its last micro-step (sums come back divided), or null. */
  divisor: number | null;
  /** Scalars read back with the check (a micro-batch's loss and count, addCheckedAllRead); none: addCheckedAll. */
  carry: number[];
  seed: number;
}

/** Values a micro-step reads back beside its check: losses, counts, and what a bad loss gives. */
const carryArb = fc.array(fc.oneof(fc.constantFrom(0, -0, 16, 3e38, Infinity, -Infinity, NaN), fc.double({ min: -1e6, max: 1e6, noNaN: true })), { maxLength: 2 });

/**
 * The new sums, then the carried values and the check's magnitude: the check is 0 or NaN and
 * its sign is not part of the contract; the carried values must come back bit for bit.
 */
function addedOutputs(sums: readonly (tf.Tensor | null)[], gradients: readonly tf.Tensor[], weight: number, divisor: number | null, carry: number[]): tf.Tensor[] {
  if (carry.length === 0) {
    const { sums: out, check } = addCheckedAll(sums, gradients, weight, divisor);
    return [...out, tf.abs(check)];
  }
  const scalars = carry.map((v) => tf.scalar(v));
  const { sums: out, read } = addCheckedAllRead(sums, gradients, weight, divisor, scalars);
  tf.dispose(scalars);
  return [...out, tf.slice(read, 0, carry.length), tf.abs(tf.slice(read, carry.length, 1))];
}

export const addCheckedAllFamily: Family<AddCheckedAllCase> = {
  name: "addCheckedAll (a micro-step's every variable in one kernel, TfjsAccumulateAddCheckedAll)",
  kernels: ['TfjsAccumulateAddCheckedAll'],
  cases: fc.record({
    parts: fc.array(
      fc.record({ x: shapeArb(3, 40), withSum: fc.boolean(), lone: fc.option(fc.record({ at: fc.nat(), value: fc.constantFrom(Infinity, -Infinity, NaN) }), { nil: null, freq: 4 }) }),
      { minLength: 1, maxLength: 6 },
    ),
    values: fc.constantFrom<Values>('random', 'specials'),
    weight: fc.oneof(fc.constant(1), fc.constant(0.25), fc.double({ min: -4, max: 4, noNaN: true })),
    divisor: fc.option(fc.oneof(fc.constant(16), fc.constant(3), fc.double({ min: 1e-3, max: 1e4, noNaN: true })), { nil: null }),
    carry: carryArb,
    seed: fc.integer({ min: 1, max: 1e6 }),
  }),
  describe: (c) =>
    `${c.parts.map((p) => `${dims(p.x)}${p.withSum ? ' onto a sum' : ''}${p.lone ? ` (${p.lone.value} at ${p.lone.at})` : ''}`).join(', ')} (${c.values} values) weight ${c.weight}${c.divisor === null ? '' : ` divided by ${c.divisor}`}${c.carry.length === 0 ? '' : `, carrying ${c.carry.join(', ')}`}`,
  run: (c) => {
    const gradients = gradientsOf(c.parts, c.seed, c.values);
    const sums = c.parts.map((p, i) => (p.withSum ? tensorOf(p.x, c.seed + 7 * i + 1) : null));
    return addedOutputs(sums, gradients, c.weight, c.divisor, c.carry);
  },
  tolerance: 0,
};

/** Each part's gradient: seeded values of its kind, with its lone non-finite value put in. */
function gradientsOf(parts: { x: number[]; lone: { at: number; value: number } | null }[], seed: number, kind: Values): tf.Tensor[] {
  return parts.map((p, i) => {
    const size = p.x.reduce((a, b) => a * b, 1);
    const values = valuesOf(size, seed + 7 * i, kind);
    if (p.lone && size > 0) values[p.lone.at % size] = p.lone.value;
    return tf.tensor(values, p.x);
  });
}

interface FirstMicroStepCase {
  /** Each variable's gradient shape and a lone non-finite value (or none). */
  parts: { x: number[]; lone: { at: number; value: number } | null }[];
  values: Values;
  /** The micro-batch's loss (and count) read back with the check, as `step` reads them. */
  carry: number[];
  seed: number;
}

/**
 * addCheckedAll as every window's first micro-step of `GradientAccumulator.step` calls it: no
 * running sums, weight 1, no divisor. The kernel shares each gradient's data as its new sum and
 * only checks it (a read-only pass, `checkFinite` on wasm). The family above reaches this case
 * in about one case of twenty; here every case is one, with sizes past several SIMD iterations
 * and a lone non-finite value in most variables, so that a check that skips a vector of an
 * iteration, the tail, or a variable is caught.
 */
export const addCheckedAllFirstFamily: Family<FirstMicroStepCase> = {
  name: "addCheckedAll on a window's first micro-step (no sums, weight 1: the gradient shared and checked)",
  kernels: ['TfjsAccumulateAddCheckedAll'],
  cases: fc.record({
    parts: fc.array(fc.record({ x: shapeArb(2, 90), lone: fc.option(fc.record({ at: fc.nat(), value: fc.constantFrom(Infinity, -Infinity, NaN) }), { nil: null, freq: 3 }) }), { minLength: 2, maxLength: 6 }),
    values: fc.constantFrom<Values>('random', 'random', 'specials'),
    carry: carryArb,
    seed: fc.integer({ min: 1, max: 1e6 }),
  }),
  describe: (c) => `${c.parts.map((p) => `${dims(p.x)}${p.lone ? ` (${p.lone.value} at ${p.lone.at})` : ''}`).join(', ')} (${c.values} values)${c.carry.length === 0 ? '' : `, carrying ${c.carry.join(', ')}`}`,
  run: (c) => {
    const gradients = gradientsOf(c.parts, c.seed, c.values);
    const out = addedOutputs(gradients.map(() => null), gradients, 1, null, c.carry);
    // Read after the gradients are gone: a shared sum must hold its own reference to the data.
    tf.dispose(gradients);
    return out;
  },
  tolerance: 0,
};
