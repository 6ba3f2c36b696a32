/**
 * A minimal WebAssembly assembler: just what the project's hand-written SIMD loops need
 * (i32 and v128 locals, blocks and loops, loads and stores at byte addresses, the SIMD opcodes
 * they use). Modules import the memory they work on, or declare a small one of their own.
 * Opcodes are from the WebAssembly SIMD proposal (https://github.com/WebAssembly/simd).
 */

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

export function sleb(n: number): number[] {
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

export const I32 = 0x7f;
export const V128 = 0x7b;
export const get = (i: number) => [0x20, ...uleb(i)];
export const set = (i: number) => [0x21, ...uleb(i)];
export const tee = (i: number) => [0x22, ...uleb(i)];
export const i32 = (v: number) => [0x41, ...sleb(v)];
export const ADD = 0x6a;
export const SUB = 0x6b;
export const MUL = 0x6c;
export const LT_U = 0x49;
export const GE_U = 0x4f;
export const NE = 0x47;
export const BLOCK = [0x02, 0x40];
export const LOOP = [0x03, 0x40];
export const END = 0x0b;
export const brIf = (depth: number) => [0x0d, ...uleb(depth)];
export const simd = (op: number, ...imm: number[]) => [0xfd, ...uleb(op), ...imm];
// Memory arguments: alignment hint 0 (any address), then a constant byte offset.
export const load = (offset = 0) => simd(0x00, 0, ...uleb(offset));
export const store = (offset = 0) => simd(0x0b, 0, ...uleb(offset));
export const f32x4 = (v: number) => {
  const bytes = new Uint8Array(new Float32Array([v, v, v, v]).buffer);
  return simd(0x0c, ...bytes);
};
/** Lanes 2 and 3 of a float32x4 moved to lanes 0 and 1 (for promote_low). */
export const HIGH_HALF = simd(0x0d, 8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15);
export const F32_GT = simd(0x44);
export const AND = simd(0x4e);
export const ANDNOT = simd(0x4f);
export const OR = simd(0x50);
export const BITSELECT = simd(0x52);
export const PROMOTE_LOW = simd(0x5f);
export const F32_ADD = simd(0xe4);
export const F32_SUB = simd(0xe5);
export const F32_MUL = simd(0xe6);
export const F32_DIV = simd(0xe7);
export const F64_ADD = simd(0xf0);
export const F64_SUB = simd(0xf1);
export const F64_MUL = simd(0xf2);
export const F32 = 0x7d;
/** f32x4.extract_lane. */
export const EXTRACT_LANE = (lane: number) => simd(0x1f, lane);
/** f32x4.splat: four copies of an f32. */
export const F32X4_SPLAT = simd(0x13);
/** f32.add (scalar). */
export const F32_SCALAR_ADD = 0x92;
/** f32x4.relaxed_madd (relaxed SIMD: a·b + c, fused or not, as the hardware prefers). */
export const F32_RELAXED_MADD = simd(0x105);

/** One function of a module: `params` i32 parameters, typed locals, and an optional result. */
export interface Fn {
  name: string;
  params: number;
  locals: [count: number, type: number][];
  body: number[];
  /** The result type (e.g. F32), if any. */
  result?: number;
  /** Types of the parameters when not all i32 (length `params`). */
  paramTypes?: number[];
}

export function section(id: number, payload: number[]): number[] {
  return [id, ...uleb(payload.length), ...payload];
}

export const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
export const name = (s: string) => [...uleb(s.length), ...Array.from(Buffer.from(s, 'utf8'))];

/** Where a module's memory comes from: the importer's (`env.memory`) or its own, of `pages` 64 KiB pages. */
export type MemorySpec = { import: true } | { pages: number };

/** The bytes of a module exporting `fns` by name. */
export function moduleBytes(fns: Fn[], memory: MemorySpec): Uint8Array {
  const types = fns.map((f) => [0x60, ...uleb(f.params), ...(f.paramTypes ?? new Array(f.params).fill(I32)), ...(f.result === undefined ? [0] : [1, f.result])]);
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    // An imported memory with minimum 0 and no maximum matches any non-shared memory.
    ...('import' in memory ? section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 0x00]])) : []),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    ...('pages' in memory ? section(5, vec([[0x00, ...uleb(memory.pages)]])) : []),
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
