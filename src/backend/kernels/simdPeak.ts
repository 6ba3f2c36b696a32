import {
  BLOCK,
  brIf,
  END,
  EXTRACT_LANE,
  F32,
  F32_ADD,
  F32_MUL,
  F32_RELAXED_MADD,
  f32x4,
  Fn,
  get,
  i32,
  LOOP,
  moduleBytes,
  NE,
  set,
  SUB,
  tee,
  V128,
} from './wasmAssembler';

/**
 * The arithmetic peak of WebAssembly SIMD on this machine: the roofline that any wasm matrix
 * product (XNNPACK's or ours) can at best reach.
 *
 * A loop keeps {@link CHAINS} independent float32x4 accumulators busy with `acc = acc·m + c`:
 * one multiply and one add per lane, 8 FLOPs per chain and iteration, with nothing loaded from
 * memory. Enough chains hide the latency of each operation, so the loop runs at the throughput
 * of the core's SIMD units as V8 compiles them. Each multiply depends on the previous add, so the
 * compiler cannot hoist it out of the loop. Wasm SIMD has no fused multiply-add (V8 emits a
 * separate mulps and addps); relaxed SIMD's `f32x4.relaxed_madd` may fuse them, where the engine
 * has it (Node 20: behind `--experimental-wasm-relaxed-simd`).
 */

/** Independent accumulators: more than latency × issue width of mul+add on current x86 cores. */
export const CHAINS = 16;
/** FLOPs of one loop iteration: 4 lanes × (1 multiply + 1 add) per chain. */
export const FLOPS_PER_ITERATION = CHAINS * 8;

/** `peak(iterations) -> f32`: local 0 counts down, locals 1..CHAINS are the accumulators. */
function peakFn(fused: boolean): Fn {
  const counter = 0;
  const acc = (j: number) => 1 + j;
  const step = (j: number) =>
    fused
      ? [...get(acc(j)), ...f32x4(0.999), ...f32x4(0.001), ...F32_RELAXED_MADD, ...set(acc(j))]
      : [...get(acc(j)), ...f32x4(0.999), ...F32_MUL, ...f32x4(0.001), ...F32_ADD, ...set(acc(j))];
  const sum: number[] = [...get(acc(0))];
  for (let j = 1; j < CHAINS; j++) sum.push(...get(acc(j)), ...F32_ADD);
  return {
    name: 'peak',
    params: 1,
    result: F32,
    locals: [[CHAINS, V128]],
    body: [
      ...BLOCK,
      ...get(counter), 0x45 /* i32.eqz */, ...brIf(0),
      ...LOOP,
      ...Array.from({ length: CHAINS }, (_, j) => step(j)).flat(),
      ...get(counter), ...i32(1), SUB, ...tee(counter), ...i32(0), NE, ...brIf(0),
      END,
      END,
      // The result depends on every accumulator, so none of the work is dead.
      ...sum, ...EXTRACT_LANE(0),
    ],
  };
}

/** The module's bytes (no memory): exports `peak`. */
export function simdPeakModuleBytes(fused: boolean): Uint8Array {
  return moduleBytes([peakFn(fused)], { pages: 0 });
}

/** What {@link measureSimdPeak} found. */
export interface SimdPeak {
  /** GFLOP/s of f32x4 multiply + add (best of the timed runs). */
  gflops: number;
  /** GFLOP/s of f32x4.relaxed_madd, or null where the engine has no relaxed SIMD. */
  relaxedGflops: number | null;
}

/** Options of {@link measureSimdPeak}. */
export interface SimdPeakArgs {
  /**
   * Runs per variant; the fastest counts: the peak is what the core does when it has the time,
   * and on a shared machine short runs often fit between other processes' time slices. Default 40.
   */
  runs?: number;
  /** Loop iterations per run. Default 200,000 (25.6 MFLOP, ~1 ms at 30 GFLOP/s). */
  iterations?: number;
}

/** The loop's module compiled for this engine, or null when the engine rejects it (no SIMD, or no relaxed SIMD). */
function compile(fused: boolean): ((iterations: number) => number) | null {
  const bytes = simdPeakModuleBytes(fused);
  if (!WebAssembly.validate(bytes)) return null;
  return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.peak as (iterations: number) => number;
}

function best(peak: (iterations: number) => number, runs: number, iterations: number): number {
  peak(1000); // compile the optimized tier before timing
  let fastest = Infinity;
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const value = peak(iterations);
    fastest = Math.min(fastest, performance.now() - t);
    if (!Number.isFinite(value)) throw new Error(`measureSimdPeak: the loop produced ${value}`);
  }
  return (FLOPS_PER_ITERATION * iterations) / fastest / 1e6;
}

/**
 * Measures the wasm SIMD multiply-add peak of the current core (single thread), and the relaxed
 * SIMD one where the engine has it. Returns null when the engine has no WebAssembly SIMD at all.
 */
export function measureSimdPeak(args: SimdPeakArgs = {}): SimdPeak | null {
  const runs = args.runs ?? 40;
  const iterations = args.iterations ?? 200_000;
  const plain = compile(false);
  if (!plain) return null;
  const relaxed = compile(true);
  return { gflops: best(plain, runs, iterations), relaxedGflops: relaxed ? best(relaxed, runs, iterations) : null };
}
