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
}

// --- A minimal WebAssembly encoder: just what the three functions need. ---

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const I32 = 0x7f;
const V128 = 0x7b;
const get = (i: number) => [0x20, ...uleb(i)];
const set = (i: number) => [0x21, ...uleb(i)];
const tee = (i: number) => [0x22, ...uleb(i)];
const i32 = (v: number) => [0x41, ...sleb(v)];
const ADD = 0x6a;
const SUB = 0x6b;
const MUL = 0x6c;
const LT_U = 0x49;
const GE_U = 0x4f;
const NE = 0x47;
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const END = 0x0b;
const brIf = (depth: number) => [0x0d, ...uleb(depth)];
const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
// Memory arguments: alignment hint 0 (any address), then a constant byte offset.
const load = (offset = 0) => simd(0x00, 0, ...uleb(offset));
const store = (offset = 0) => simd(0x0b, 0, ...uleb(offset));
const f32x4 = (v: number) => {
  const bytes = new Uint8Array(new Float32Array([v, v, v, v]).buffer);
  return simd(0x0c, ...bytes);
};
/** Lanes 2 and 3 of a float32x4 moved to lanes 0 and 1 (for promote_low). */
const HIGH_HALF = simd(0x0d, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
const F32_GT = simd(0x44);
const AND = simd(0x4e);
const ANDNOT = simd(0x4f);
const OR = simd(0x50);
const BITSELECT = simd(0x52);
const PROMOTE_LOW = simd(0x5f);
const F32_ADD = simd(0xe4);
const F32_SUB = simd(0xe5);
const F32_MUL = simd(0xe6);
const F64_ADD = simd(0xf0);
const F64_SUB = simd(0xf1);
const F64_MUL = simd(0xf2);

interface Fn {
  name: string;
  params: number;
  locals: [count: number, type: number][];
  body: number[];
}

/** affine(x, y, params, rows, cb): locals end=5, j=6, p1=7, p2=8. */
function affineFn(): Fn {
  const [x, y, p, rows, cb, end, j, p1, p2] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  return {
    name: 'affine',
    params: 5,
    locals: [[4, I32]],
    body: [
      ...get(x), ...get(rows), ...get(cb), MUL, ADD, ...set(end),
      ...get(p), ...get(cb), ADD, ...set(p1),
      ...get(p1), ...get(cb), ADD, ...set(p2),
      ...BLOCK,
      ...get(x), ...get(end), GE_U, ...brIf(0),
      ...LOOP,
      ...i32(0), ...set(j),
      ...LOOP,
      ...get(y), ...get(j), ADD,
      ...get(x), ...get(j), ADD, ...load(),
      ...get(p), ...get(j), ADD, ...load(), ...F32_SUB,
      ...get(p1), ...get(j), ADD, ...load(), ...F32_MUL,
      ...get(p2), ...get(j), ADD, ...load(), ...F32_ADD,
      ...store(),
      ...get(j), ...i32(16), ADD, ...tee(j), ...get(cb), LT_U, ...brIf(0),
      END,
      ...get(y), ...get(cb), ADD, ...set(y),
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

function section(id: number, payload: number[]): number[] {
  return [id, ...uleb(payload.length), ...payload];
}

const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (s: string) => [...uleb(s.length), ...Array.from(Buffer.from(s, 'utf8'))];

/** The module's bytes: imports `env.memory`, exports the three functions. */
export function simdModuleBytes(): Uint8Array {
  const fns = [affineFn(), maxPoolGradFn(), batchNormGradSumsFn()];
  const types = fns.map((f) => [0x60, ...uleb(f.params), ...new Array(f.params).fill(I32), 0]);
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    // memory import with minimum 0 and no maximum: matches any non-shared memory.
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 0x00]])),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    ...section(7, vec(fns.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]))),
    ...section(
      10,
      vec(
        fns.map((f) => {
          const body = [...vec(f.locals.map(([count, type]) => [...uleb(count), type])), ...f.body, END];
          return [...uleb(body.length), ...body];
        }),
      ),
    ),
  ];
  return Uint8Array.from(bytes);
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
