import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import assert from 'node:assert/strict';
import { installFastKernels, loadNativeBlas, tfjsBackendOf, uninstallFastKernels } from '../../src/backend/kernels';

/**
 * Shared test machinery for the kernel tests: run the same computation on stock cpu (the
 * reference) and on wasm and cpu with this project's kernels, and compare.
 */

/** The tolerance of the issue: at most 1e-5 relative to the reference's largest magnitude. */
export const TOLERANCE = 1e-5;

/** The backends under test, each with the project's kernels installed. */
export const FAST_BACKENDS = ['wasm', 'cpu'] as const;

/** A kernel set under test: a backend with the project's kernels, or `"native"` / `"native-cpu"` (wasm / cpu + CBLAS). */
export type ParityBackend = 'wasm' | 'cpu' | 'native' | 'native-cpu';

/**
 * Set where the native path must be tested (CI, `npm test`): then an unbuilt addon fails the
 * tests instead of leaving the native path untested.
 */
export const REQUIRE_NATIVE_ENV_VAR = 'TFJS_ACCUMULATE_REQUIRE_NATIVE';

/**
 * Whether the native addon is built here. Without it the native cases are skipped (a machine
 * without a compiler or a BLAS), unless {@link REQUIRE_NATIVE_ENV_VAR} is `1`.
 */
export function nativeAvailable(): boolean {
  const status = loadNativeBlas();
  if (!status.available && process.env[REQUIRE_NATIVE_ENV_VAR] === '1') {
    throw new Error(`${REQUIRE_NATIVE_ENV_VAR}=1 but the native addon ${status.reason}`);
  }
  return status.available;
}

/** What {@link expectParity} compares against stock cpu by default: wasm, cpu, and native when built. */
export const PARITY_BACKENDS: readonly ParityBackend[] = [...FAST_BACKENDS, ...(nativeAvailable() ? (['native', 'native-cpu'] as const) : [])];

/** Deterministic pseudo-random floats in [-1, 1) (mulberry32), independent of any backend. */
export function randomValues(size: number, seed: number): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

/** Switches to a backend with the project's kernels (fast) or tfjs's own (stock). */
export async function useBackend(name: ParityBackend, fast: boolean): Promise<void> {
  const backend = tfjsBackendOf(name);
  assert.ok(await tf.setBackend(backend), `backend ${backend} must start`);
  if (fast) installFastKernels(name);
  else uninstallFastKernels(name);
}

/** Runs `fn` and reads every returned tensor (disposing them). */
export async function values(fn: () => tf.Tensor | tf.Tensor[]): Promise<{ data: Float32Array; shape: number[] }[]> {
  const out = tf.tidy(fn);
  const list = Array.isArray(out) ? out : [out];
  const result = [];
  for (const t of list) result.push({ data: Float32Array.from(await t.data()), shape: t.shape });
  tf.dispose(list);
  return result;
}

/**
 * Largest absolute difference divided by the reference's largest finite magnitude (or by
 * `scaleFloor` when that is larger: the inputs' magnitude, for a sum that cancels). Values that
 * are not finite must match exactly, position by position: a NaN where the reference has a NaN,
 * the same infinity where it has one; anything else there, or a length that differs, is
 * Infinity. (A NaN shared at one position says nothing about the others.)
 */
export function relativeError(actual: Float32Array, expected: Float32Array, scaleFloor = 0): number {
  if (actual.length !== expected.length) return Infinity;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (!Number.isFinite(e) || !Number.isFinite(a)) {
      if (Number.isNaN(e) ? Number.isNaN(a) : a === e) continue;
      return Infinity;
    }
    diff = Math.max(diff, Math.abs(a - e));
    scale = Math.max(scale, Math.abs(e));
  }
  scale = Math.max(scale, scaleFloor);
  return scale === 0 ? diff : diff / scale;
}

/**
 * Computes `fn` on stock cpu, then on every fast backend, and asserts shapes match and values
 * agree within {@link TOLERANCE}. Returns the largest error seen.
 */
export async function expectParity(label: string, fn: () => tf.Tensor | tf.Tensor[], backends: readonly ParityBackend[] = PARITY_BACKENDS): Promise<number> {
  await useBackend('cpu', false);
  const expected = await values(fn);
  let worst = 0;
  for (const name of backends) {
    await useBackend(name, true);
    const actual = await values(fn);
    assert.equal(actual.length, expected.length, `${label} on ${name}: number of outputs`);
    actual.forEach((a, i) => {
      assert.deepEqual(a.shape, expected[i].shape, `${label} on ${name}: shape of output ${i}`);
      const err = relativeError(a.data, expected[i].data);
      worst = Math.max(worst, err);
      assert.ok(err <= TOLERANCE, `${label} on ${name}: output ${i} differs from stock cpu by ${err.toExponential(2)} (relative)`);
    });
  }
  return worst;
}

/** Tensor count and backend buffer count, to catch leaks of engine tensors and of kernel intermediates. */
export function memoryCounts(): { tensors: number; buffers: number } {
  const backend = tf.backend() as unknown as { numDataIds(): number };
  return { tensors: tf.memory().numTensors, buffers: backend.numDataIds() };
}

/** Runs `fn` (which must dispose what it makes) twice to warm up, then checks it leaks nothing. */
export async function expectNoLeak(label: string, fn: () => void | Promise<void>): Promise<void> {
  await fn();
  await fn();
  const before = memoryCounts();
  await fn();
  await fn();
  assert.deepEqual(memoryCounts(), before, `${label} on ${tf.getBackend()} leaks`);
}

/** A tensor from deterministic values. */
export function randomTensor(shape: number[], seed: number): tf.Tensor {
  return tf.tensor(randomValues(shape.reduce((a, b) => a * b, 1), seed), shape);
}

/**
 * Leaves freed tensors full of `value` on the wasm heap (sizes 1 to 4 Ki floats), so that a kernel
 * that returns an output it never wrote shows `value` instead of the zeros a fresh heap often
 * holds. Switches to wasm with the project's kernels for `set`.
 */
export async function dirtyWasmHeap(set: 'wasm' | 'native', value = 7.25): Promise<void> {
  await useBackend(set, true);
  const garbage: tf.Tensor[] = [];
  for (let size = 1; size <= 4096; size *= 2) garbage.push(tf.fill([size + 3], value), tf.fill([size], value));
  tf.dispose(garbage);
}

/** Runs `fn` with tfjs's own gradient for `op` (ours taken out of the registry for the call). */
export async function withStockGradient<T>(op: string, fn: () => Promise<T>): Promise<T> {
  const ours = tf.getGradient(op);
  assert.ok(ours, `our gradient of ${op} is registered`);
  tf.unregisterGradient(op);
  try {
    return await fn();
  } finally {
    tf.registerGradient(ours);
  }
}

/** Every output's shape and float32 values as text: equal texts mean equal bits (NaN payloads aside, −0 kept). */
export function bitsOf(outs: { data: Float32Array; shape: number[] }[]): string[] {
  return outs.map((o) => `[${o.shape}]: ` + Array.from(o.data, (v) => (Object.is(v, -0) ? '-0' : String(v))).join(','));
}

/**
 * Checks, on every kernel set with the project's kernels, that `fn` gives the same bits with our
 * gradient of `op` as with tfjs's own (the same kernels otherwise).
 */
export async function expectStockGradientBits(op: string, label: string, fn: () => tf.Tensor | tf.Tensor[]): Promise<void> {
  for (const set of PARITY_BACKENDS) {
    await useBackend(set, true);
    const ours = bitsOf(await values(fn));
    const stock = bitsOf(await withStockGradient(op, () => values(fn)));
    assert.deepEqual(ours, stock, `${label} on ${set}`);
  }
}
