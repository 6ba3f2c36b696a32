import {
  ADD,
  EXTRACT_LANE,
  F32,
  F32_SCALAR_ADD,
  F32X4_SPLAT,
  AND,
  ANDNOT,
  BITSELECT,
  BLOCK,
  END,
  F32_ADD,
  F32_GT,
  F32_MUL,
  F32_DIV,
  F32_SUB,
  F64_ADD,
  F64_MUL,
  F64_SUB,
  GE_U,
  HIGH_HALF,
  I32,
  LOOP,
  LT_U,
  MUL,
  NE,
  OR,
  PROMOTE_LOW,
  SUB,
  V128,
  brIf,
  f32x4,
  get,
  i32,
  load,
  set,
  store,
  tee,
  Fn,
  moduleBytes,
} from './wasmAssembler';
import { WasmBackend } from './wasmHeap';

/**
 * A few memory-bound loops in WebAssembly SIMD, run directly on the wasm backend's heap.
 *
 * Why: the per-channel loops of BatchNorm (forward and backward) and the max-pool gradient run
 * at 4-5 ns per element in JS (the max-pool one mostly in mispredicted branches) and in the
 * stock wasm `FusedBatchNorm`, against ~0.3 ns for XNNPACK's elementwise kernels: together about
 * a fifth of a small CNN's training step. tfjs-backend-wasm exports its `WebAssembly.Memory`, so
 * a small module that imports it can read and write tensors in place, with no copy. The module is
 * assembled here from its instructions (a few hundred bytes; no toolchain, nothing to download).
 *
 * Every loop works on channels-last data with the channel count a multiple of 4 (one SIMD
 * vector per 4 channels); callers keep their JS loops for other shapes. Addresses and sizes are
 * in bytes.
 */
export interface SimdKernels {
  /**
   * `y[r, c] = (x[r, c] − p[c]) · p[C + c] + p[2C + c]` for `rows` rows of `C = channelBytes / 4`
   * floats: BatchNorm's forward pass, and (with zero shift and offset) a per-channel scale.
   */
  affine(x: number, y: number, params: number, rows: number, channelBytes: number): void;
  /**
   * `dx[r, c] = (x[r, c] − p[c]) · p[C + c] + dy[r, c] · p[2C + c] + p[3C + c]` for `rows` rows of
   * `C = channelBytes / 4` floats: BatchNorm's input gradient in training, where the batch's
   * moments depend on `x` too (see batchNormGrad.ts).
   */
  affine2(x: number, dy: number, dx: number, params: number, rows: number, channelBytes: number): void;
  /**
   * The max-pool gradient for 2x2 windows with stride 2 that tile the input exactly
   * (`inHeight = 2·outHeight`, `inWidth = 2·outWidth`): writes every element of `dx`, the window's
   * first strict maximum (row-major) gets `dy`, the rest 0; windows of NaN/−Infinity get nothing.
   * `outRows` is batch·outHeight, `rowBytes` one input row (inWidth·C·4).
   */
  maxPoolGrad2x2(x: number, dy: number, dx: number, outWidth: number, outRows: number, channelBytes: number, rowBytes: number): void;
  /**
   * Per-channel `Σ dy` and `Σ dy·(x − mean)` in float64 over `rows` rows, added into
   * `scratch` (float64: sums of dy at 0, sums of dy·(x−mean) at 2·channelBytes, and the means,
   * read, at 4·channelBytes).
   */
  batchNormGradSums(x: number, dy: number, scratch: number, rows: number, channelBytes: number): void;
  /**
   * `out[i] = sum[i] + gradient[i]·weight` over `bytes` (a multiple of 64), rounding as a float32
   * multiply then add; returns Σ (out[i] − out[i]), which is 0 when every `out[i]` is finite and
   * NaN otherwise (∞ − ∞ and NaN − NaN are NaN, x − x is exactly 0 for finite x).
   */
  addChecked(sum: number, gradient: number, out: number, bytes: number, weight: number): number;
  /** The same without a running sum: `out[i] = gradient[i]·weight`, and its finiteness check. */
  scaleChecked(gradient: number, out: number, bytes: number, weight: number): number;
  /** `addChecked` writing each new sum divided by `divisor` (a float32 division); the check is of the undivided sums. */
  addCheckedDiv(sum: number, gradient: number, out: number, bytes: number, weight: number, divisor: number): number;
  /** `scaleChecked` writing each value divided by `divisor`; the check is of the undivided values. */
  scaleCheckedDiv(gradient: number, out: number, bytes: number, weight: number, divisor: number): number;
  /** The check alone, reading `x` and writing nothing: Σ (x[i] − x[i]) over `bytes` (a multiple of 64). */
  checkFinite(x: number, bytes: number): number;
}

/**
 * affine(x, y, params, rows, cb), or with `second` affine2(x, dy, y, params, rows, cb): after the
 * parameters, i32 locals end, j and the per-channel parameter pointers p1, p2 (and p3).
 */
function affineFn(second: boolean): Fn {
  const count = second ? 6 : 5;
  const [x, dy] = [0, 1];
  const y = second ? 2 : 1;
  const [p, rows, cb] = [y + 1, y + 2, y + 3];
  const [end, j, p1, p2, p3] = [count, count + 1, count + 2, count + 3, count + 4];
  const at = (base: number) => [...get(base), ...get(j), ADD, ...load()];
  return {
    name: second ? 'affine2' : 'affine',
    params: count,
    locals: [[second ? 5 : 4, I32]],
    body: [
      ...get(x), ...get(rows), ...get(cb), MUL, ADD, ...set(end),
      ...get(p), ...get(cb), ADD, ...set(p1),
      ...get(p1), ...get(cb), ADD, ...set(p2),
      ...(second ? [...get(p2), ...get(cb), ADD, ...set(p3)] : []),
      ...BLOCK,
      ...get(x), ...get(end), GE_U, ...brIf(0),
      ...LOOP,
      ...i32(0), ...set(j),
      ...LOOP,
      ...get(y), ...get(j), ADD,
      ...at(x), ...at(p), ...F32_SUB, ...at(p1), ...F32_MUL,
      ...(second ? [...at(dy), ...at(p2), ...F32_MUL, ...F32_ADD, ...at(p3), ...F32_ADD] : [...at(p2), ...F32_ADD]),
      ...store(),
      ...get(j), ...i32(16), ADD, ...tee(j), ...get(cb), LT_U, ...brIf(0),
      END,
      ...get(y), ...get(cb), ADD, ...set(y),
      ...(second ? [...get(dy), ...get(cb), ADD, ...set(dy)] : []),
      ...get(x), ...get(cb), ADD, ...tee(x), ...get(end), LT_U, ...brIf(0),
      END,
      END,
    ],
  };
}

/**
 * maxPoolGrad2x2(x, dy, dx, outWidth, outRows, cb, rowBytes).
 * i32 locals: delta=7, j=8, col=9, q=10, qd=11; v128 locals: g=12, best=13, ma=14, mb=15, me=16, mf=17, later=18.
 */
function maxPoolGradFn(): Fn {
  const [x, dy, dx, outWidth, outRows, cb, rowBytes] = [0, 1, 2, 3, 4, 5, 6];
  const [delta, j, col, q, qd] = [7, 8, 9, 10, 11];
  const [g, best, ma, mb, me, mf, later] = [12, 13, 14, 15, 16, 17, 18];
  const NEG_INF = f32x4(-Infinity);
  // best = bitselect(v, best, v > best): the strict maximum so far, in window order.
  const step = (address: number[], mask: number) => [
    ...address, ...load(), ...get(best), ...F32_GT, ...set(mask),
    ...address, ...load(), ...get(best), ...get(mask), ...BITSELECT, ...set(best),
  ];
  const qPlus = (...offsets: number[]) => [...get(q), ...offsets.flatMap((o) => [...get(o), ADD])];
  const qdPlus = (...offsets: number[]) => [...get(qd), ...offsets.flatMap((o) => [...get(o), ADD])];
  return {
    name: 'maxPoolGrad2x2',
    params: 7,
    locals: [[5, I32], [7, V128]],
    body: [
      ...get(dx), ...get(x), SUB, ...set(delta),
      ...BLOCK,
      ...get(outRows), 0x45 /* i32.eqz */, ...brIf(0),
      ...LOOP, // output rows
      ...get(outWidth), ...set(col),
      ...LOOP, // output columns
      ...i32(0), ...set(j),
      ...LOOP, // channel groups
      ...get(x), ...get(j), ADD, ...tee(q), ...get(delta), ADD, ...set(qd),
      ...get(dy), ...get(j), ADD, ...load(), ...set(g),
      // a: best = a where a > −∞.
      ...get(q), ...load(), ...NEG_INF, ...F32_GT, ...set(ma),
      ...get(q), ...load(), ...NEG_INF, ...get(ma), ...BITSELECT, ...set(best),
      ...step(qPlus(cb), mb),
      ...step(qPlus(rowBytes), me),
      // f only needs its mask.
      ...qPlus(rowBytes, cb), ...load(), ...get(best), ...F32_GT, ...set(mf),
      // The last strict maximum in order wins: f, then e unless f, then b unless e or f, ...
      ...qdPlus(rowBytes, cb), ...get(g), ...get(mf), ...AND, ...store(),
      ...qdPlus(rowBytes), ...get(g), ...get(me), ...AND, ...get(mf), ...ANDNOT, ...store(),
      ...get(me), ...get(mf), ...OR, ...set(later),
      ...qdPlus(cb), ...get(g), ...get(mb), ...AND, ...get(later), ...ANDNOT, ...store(),
      ...get(later), ...get(mb), ...OR, ...set(later),
      ...get(qd), ...get(g), ...get(ma), ...AND, ...get(later), ...ANDNOT, ...store(),
      ...get(j), ...i32(16), ADD, ...tee(j), ...get(cb), LT_U, ...brIf(0),
      END,
      ...get(x), ...get(cb), ...get(cb), ADD, ADD, ...set(x),
      ...get(dy), ...get(cb), ADD, ...set(dy),
      ...get(col), ...i32(1), SUB, ...tee(col), ...i32(0), NE, ...brIf(0),
      END,
      // x now points at the second input row of the pair: skip it.
      ...get(x), ...get(rowBytes), ADD, ...set(x),
      ...get(outRows), ...i32(1), SUB, ...tee(outRows), ...i32(0), NE, ...brIf(0),
      END,
      END,
    ],
  };
}

/**
 * batchNormGradSums(x, dy, scratch, rows, cb).
 * i32 locals: j=5, s2=6, s4=7, k=8; v128 locals: d=9, xv=10, lo=11.
 */
function batchNormGradSumsFn(): Fn {
  const [x, dy, scratch, rows, cb] = [0, 1, 2, 3, 4];
  const [j, s2, s4, k] = [5, 6, 7, 8];
  const [d, xv, lo] = [9, 10, 11];
  // One half (lanes 0-1 or 2-3) of the channel group, promoted to float64, at f64 offset `off`.
  const half = (pick: (local: number) => number[], off: number) => [
    ...pick(d), ...PROMOTE_LOW, ...set(lo),
    // Σ dy
    ...get(k), ...get(k), ...load(off), ...get(lo), ...F64_ADD, ...store(off),
    // Σ dy·(x − mean)
    ...get(k), ...get(s2), ADD,
    ...get(k), ...get(s2), ADD, ...load(off),
    ...pick(xv), ...PROMOTE_LOW, ...get(k), ...get(s4), ADD, ...load(off), ...F64_SUB,
    ...get(lo), ...F64_MUL, ...F64_ADD, ...store(off),
  ];
  return {
    name: 'batchNormGradSums',
    params: 5,
    locals: [[4, I32], [3, V128]],
    body: [
      ...get(cb), ...get(cb), ADD, ...set(s2),
      ...get(s2), ...get(s2), ADD, ...set(s4),
      ...BLOCK,
      ...get(rows), 0x45 /* i32.eqz */, ...brIf(0),
      ...LOOP,
      ...i32(0), ...set(j),
      ...LOOP,
      ...get(dy), ...get(j), ADD, ...load(), ...set(d),
      ...get(x), ...get(j), ADD, ...load(), ...set(xv),
      ...get(scratch), ...get(j), ...get(j), ADD, ADD, ...set(k),
      ...half(get, 0),
      ...half((local) => [...get(local), ...get(local), ...HIGH_HALF], 16),
      ...get(j), ...i32(16), ADD, ...tee(j), ...get(cb), LT_U, ...brIf(0),
      END,
      ...get(x), ...get(cb), ADD, ...set(x),
      ...get(dy), ...get(cb), ADD, ...set(dy),
      ...get(rows), ...i32(1), SUB, ...tee(rows), ...i32(0), NE, ...brIf(0),
      END,
      END,
    ],
  };
}

/**
 * The loop of the checked kernels, over `bytes` (a multiple of 64) four vectors at a time, then
 * the four check registers summed into one f32: 0, or NaN when any value was not finite.
 */
function checkedLoop(vector: (k: number) => number[], at: { i: number; bytes: number; bad: number[] }): number[] {
  const { i, bytes, bad } = at;
  const lane = (n: number) => [...get(bad[0]), ...EXTRACT_LANE(n)];
  return [
    ...BLOCK,
    ...get(bytes), 0x45 /* i32.eqz */, ...brIf(0),
    ...LOOP,
    ...vector(0), ...vector(1), ...vector(2), ...vector(3),
    ...get(i), ...i32(64), ADD, ...tee(i), ...get(bytes), LT_U, ...brIf(0),
    END,
    END,
    ...get(bad[0]), ...get(bad[1]), ...F32_ADD, ...get(bad[2]), ...F32_ADD, ...get(bad[3]), ...F32_ADD, ...set(bad[0]),
    ...lane(0), ...lane(1), F32_SCALAR_ADD, ...lane(2), F32_SCALAR_ADD, ...lane(3), F32_SCALAR_ADD,
  ];
}

/**
 * addChecked(sum, gradient, out, bytes, weight: f32) -> f32, or without `sum` scaleChecked, and
 * with `divide` the same with a last f32 parameter, the divisor (addCheckedDiv, scaleCheckedDiv);
 * `bytes` a multiple of 64. i32 locals: i; v128 locals: w, o, bad0..bad3, d.
 *
 * Four vectors per iteration, each with its own check: one check register would chain every
 * iteration on the latency of a float add (about 1.3 floats a cycle, measured the bound of the
 * one-vector loop). The order the checks are added in cannot matter: each is 0 or NaN.
 */
function checkedFn(withSum: boolean, divide = false): Fn {
  const [sum, gradient, out, bytes, weight] = withSum ? [0, 1, 2, 3, 4] : [-1, 0, 1, 2, 3];
  const divisor = weight + 1;
  const first = divide ? divisor + 1 : divisor;
  const [i, w, o] = [first, first + 1, first + 2];
  const bad = [first + 3, first + 4, first + 5, first + 6];
  const d = first + 7;
  const product = (at: number) => [...get(gradient), ...get(i), ADD, ...load(at), ...get(w), ...F32_MUL];
  const vector = (k: number) => {
    const at = 16 * k;
    return [
      ...get(out), ...get(i), ADD,
      ...(withSum ? [...get(sum), ...get(i), ADD, ...load(at), ...product(at), ...F32_ADD] : product(at)), ...tee(o),
      ...(divide ? [...get(d), ...F32_DIV] : []),
      ...store(at),
      ...get(bad[k]), ...get(o), ...get(o), ...F32_SUB, ...F32_ADD, ...set(bad[k]),
    ];
  };
  const params = withSum ? [I32, I32, I32, I32, F32] : [I32, I32, I32, F32];
  return {
    name: `${withSum ? 'addChecked' : 'scaleChecked'}${divide ? 'Div' : ''}`,
    params: params.length + (divide ? 1 : 0),
    paramTypes: divide ? [...params, F32] : params,
    result: F32,
    locals: [[1, I32], [divide ? 7 : 6, V128]],
    body: [
      ...get(weight), ...F32X4_SPLAT, ...set(w),
      ...(divide ? [...get(divisor), ...F32X4_SPLAT, ...set(d)] : []),
      ...checkedLoop(vector, { i, bytes, bad }),
    ],
  };
}

/**
 * checkFinite(x, bytes) -> f32: `checkedFn`'s check without the arithmetic or the store, for a
 * new sum that is the gradient itself (no running sum, weight 1: addCheckedAll shares the
 * gradient's data instead of copying it). Four checks per iteration, as there.
 * i32 locals: i=2; v128 locals: v=3, bad0..bad3=4..7.
 */
function checkFiniteFn(): Fn {
  const [x, bytes, i, v] = [0, 1, 2, 3];
  const bad = [4, 5, 6, 7];
  const vector = (k: number) => [
    ...get(x), ...get(i), ADD, ...load(16 * k), ...set(v),
    ...get(bad[k]), ...get(v), ...get(v), ...F32_SUB, ...F32_ADD, ...set(bad[k]),
  ];
  return {
    name: 'checkFinite',
    params: 2,
    paramTypes: [I32, I32],
    result: F32,
    locals: [[1, I32], [5, V128]],
    body: [
      ...checkedLoop(vector, { i, bytes, bad }),
    ],
  };
}

/** The module's bytes: imports `env.memory`, exports the functions of {@link SimdKernels}. */
export function simdModuleBytes(): Uint8Array {
  return moduleBytes([affineFn(false), affineFn(true), maxPoolGradFn(), batchNormGradSumsFn(), checkedFn(true), checkedFn(false), checkedFn(true, true), checkedFn(false, true), checkFiniteFn()], { import: true });
}

const instances = new WeakMap<WebAssembly.Memory, SimdKernels | null>();

/** The backend's exported memory, or null when this build does not export it. */
function backendMemory(backend: WasmBackend): WebAssembly.Memory | null {
  const module = backend.wasm as unknown as { asm?: Record<string, unknown>; wasmExports?: Record<string, unknown> };
  const memory = (module.asm ?? module.wasmExports)?.memory;
  return memory instanceof WebAssembly.Memory ? memory : null;
}

/**
 * The SIMD loops bound to `backend`'s heap, or null where they cannot run (no WebAssembly SIMD
 * in this engine, a shared memory of the threaded build, or a build that hides its memory):
 * callers then keep their JS loops.
 */
export function simdKernels(backend: WasmBackend): SimdKernels | null {
  const memory = backendMemory(backend);
  if (!memory) return null;
  if (instances.has(memory)) return instances.get(memory) ?? null;
  let kernels: SimdKernels | null = null;
  try {
    const bytes = simdModuleBytes();
    if (WebAssembly.validate(bytes) && !(memory.buffer instanceof SharedArrayBuffer)) {
      const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
      kernels = instance.exports as unknown as SimdKernels;
    }
  } catch {
    kernels = null;
  }
  instances.set(memory, kernels);
  return kernels;
}
