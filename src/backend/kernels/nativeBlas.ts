import { argumentError } from '../../core/errors';

/**
 * The optional native addon (native/blas.cc, built by `npm install` when a compiler and a CBLAS
 * are there): loading it, saying why it is absent, its BLAS and threads, and its one product.
 *
 * Loading never throws: an absent or broken addon is a reason string, and the library runs on
 * its wasm/cpu kernels as before. The addon is looked up in `native/build/Release/` of this
 * package (found by walking up from this file, which works from `src/` under tsx and from
 * `dist/`), or at `TFJS_ACCUMULATE_NATIVE_ADDON`, for an addon built on another machine (N-API
 * addons do not depend on the Node version); that path must be a built `.node` file, anything
 * else is refused with a reason before it is loaded ({@link notABuiltAddon}).
 *
 * Threads: OpenBLAS starts one thread per core; the addon is set to one thread as soon as it
 * loads, because one thread is what the bench compares against one-thread PyTorch and what the
 * parallel trainer's workers want. {@link setNativeThreads} raises it, never above the core count.
 */

/** What the addon reports about the BLAS it is linked to. */
export interface NativeBlasInfo {
  /** `"OpenBLAS"`, `"Accelerate"` or `"CBLAS"`. */
  blas: string;
  /** OpenBLAS's build description (`openblas_get_config`: version, options, max threads); null elsewhere. */
  config: string | null;
  /** The kernel set OpenBLAS chose for this CPU (`openblas_get_corename`, e.g. `"Haswell"`); null elsewhere. */
  corename: string | null;
  /** Threads the BLAS uses now (`openblas_get_num_threads`); null when it does not say. */
  threads: number | null;
  /** OpenBLAS's threading model: 0 sequential, 1 pthreads, 2 OpenMP; null elsewhere. */
  parallel: number | null;
}

/** The addon's functions (see native/blas.cc for the argument order). */
export interface NativeAddon {
  sgemm(
    transA: boolean, transB: boolean, m: number, n: number, k: number,
    a: Float32Array, lda: number, strideA: number,
    b: Float32Array, ldb: number, strideB: number,
    c: Float32Array, ldc: number, strideC: number,
    batch: number, beta: number,
  ): void;
  /**
   * Rows `rowStart .. rowStart + rowCount − 1` of the NHWC patch matrix of `x` into `dst`
   * (native/patches.cc); `geometry` is {@link geometryArray}'s 14 integers.
   */
  im2col(x: Float32Array, geometry: number[], rowStart: number, rowCount: number, dst: Float32Array): void;
  /** The adjoint of `im2col`: adds those patch rows of `cols` onto `dx` (zeroed first when `zero`). */
  col2im(cols: Float32Array, geometry: number[], rowStart: number, rowCount: number, dx: Float32Array, zero: boolean): void;
  /** `out[c] = scale · Σ_r x[r·cols + c]` in float64 (native/channels.cc). */
  channelSums(x: Float32Array, rows: number, cols: number, out: Float32Array, scale: number): void;
  /** `out[r, c] = full[r, c] ∘ perChannel[c]` (or `perChannel[c] ∘ full[r, c]` when `channelFirst`); op 0 +, 1 −, 2 ×, 3 ÷. */
  channelBinary(op: number, full: Float32Array, rows: number, cols: number, perChannel: Float32Array, out: Float32Array, channelFirst: boolean): void;
  info(): NativeBlasInfo;
  setThreads(threads: number): number | null;
}

/** The functions an addon of this version has beyond sgemm, info and setThreads (an older build lacks some). */
const NEWER_FUNCTIONS = ['im2col', 'col2im', 'channelSums', 'channelBinary'] as const;

/** Whether the addon loaded, and from where or why not. */
export type NativeStatus = { available: true; addon: NativeAddon; path: string } | { available: false; reason: string };

const ADDON_FILE = ['native', 'build', 'Release', 'tfjs_accumulate_blas.node'];
/** The environment variable naming an addon file to load instead of the package's own build. */
export const NATIVE_ADDON_ENV_VAR = 'TFJS_ACCUMULATE_NATIVE_ADDON';

let cached: NativeStatus | null = null;

/** Options of {@link loadNativeBlas}. */
export interface LoadNativeBlasArgs {
  /** Load again even when a previous call succeeded or failed. Default false. */
  reload?: boolean;
  /** The environment to read `TFJS_ACCUMULATE_NATIVE_ADDON` from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Loads the addon file; default `require`. Replace it to test a broken installation. */
  load?: (file: string) => unknown;
}

/** Loads the addon once (at one thread) and remembers the outcome. Never throws. */
export function loadNativeBlas(args: LoadNativeBlasArgs = {}): NativeStatus {
  if (cached !== null && !args.reload) return cached;
  cached = tryLoad(args);
  return cached;
}

function tryLoad(args: LoadNativeBlasArgs): NativeStatus {
  try {
    if (typeof require !== 'function' || typeof __dirname !== 'string') {
      return { available: false, reason: 'the ES-module build cannot load native addons; require("tfjs-accumulate/backend") loads the CommonJS build' };
    }
    const env = args.env ?? process.env;
    const fromEnv = env[NATIVE_ADDON_ENV_VAR];
    if (fromEnv) {
      const refusal = notABuiltAddon(fromEnv);
      if (refusal !== null) return { available: false, reason: `is refused: ${NATIVE_ADDON_ENV_VAR} must be the path of a built addon (a .node file, as \`npx --no-install tfjs-accumulate-build-native\` makes); got ${JSON.stringify(fromEnv)}, ${refusal}` };
    }
    const file = fromEnv || findAddon();
    if (file === null) return { available: false, reason: 'not built (no native/build/Release/tfjs_accumulate_blas.node; build it with `npx --no-install tfjs-accumulate-build-native`, or `npm run native:build` in its repository)' };
    const addon = (args.load ?? require)(file) as NativeAddon;
    if (typeof addon?.sgemm !== 'function' || typeof addon.info !== 'function' || typeof addon.setThreads !== 'function') {
      return { available: false, reason: `${file} is not the tfjs-accumulate BLAS addon` };
    }
    const missing = NEWER_FUNCTIONS.filter((name) => typeof addon[name] !== 'function');
    if (missing.length > 0) {
      return { available: false, reason: `${file} was built from an older version (it has no ${missing.join(', ')}; rebuild it with \`npx --no-install tfjs-accumulate-build-native\`)` };
    }
    addon.setThreads(1);
    return { available: true, addon, path: file };
  } catch (e) {
    return { available: false, reason: `did not load: ${(e instanceof Error ? e.message : String(e)).split('\n')[0].trim()}` };
  }
}

/**
 * Why a path from the environment is not a built addon, or null when it is one: a `.node` file
 * that starts as a shared library does (ELF, Mach-O or PE). `require` runs any other file as
 * JavaScript or JSON (`/etc/hostname` was run as a script), so it is refused before loading.
 */
export function notABuiltAddon(file: string): string | null {
  const fs = nodeModule<typeof import('fs')>('fs');
  if (!file.endsWith('.node')) return 'which is not a .node file';
  let head: Buffer;
  try {
    if (!fs.statSync(file).isFile()) return 'which is not a file';
    const fd = fs.openSync(file, 'r');
    try {
      head = Buffer.alloc(4);
      if (fs.readSync(fd, head, 0, 4, 0) < 4) return 'which is too short to be a shared library';
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'which does not exist' : `which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  const magic = head.readUInt32BE(0);
  const elf = magic === 0x7f454c46;
  const machO = [0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic);
  const pe = head[0] === 0x4d && head[1] === 0x5a;
  return elf || machO || pe ? null : 'which is not a shared library (no ELF, Mach-O or PE header)';
}

/** The built addon of this package: `native/build/Release/` beside the nearest package.json. */
function findAddon(): string | null {
  const fs = nodeModule<typeof import('fs')>('fs');
  const path = nodeModule<typeof import('path')>('path');
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) {
      const file = path.join(dir, ...ADDON_FILE);
      return fs.existsSync(file) ? file : null;
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/** The loaded addon; throws a named error (with the reason) when it is not available. */
export function nativeAddon(owner: string): NativeAddon {
  const status = loadNativeBlas();
  if (!status.available) throw new Error(`${owner}: the native kernels are not available: ${status.reason}.`);
  return status.addon;
}

/** Number of cores (logical CPUs) of this machine. */
export function coreCount(): number {
  try {
    return Math.max(1, nodeModule<typeof import('os')>('os').cpus().length);
  } catch {
    return 1; // no Node here (a browser bundle): no native threads either
  }
}

/** A Node built-in, required by a name bundlers do not follow (the backend entry also bundles for browsers). */
function nodeModule<T>(name: string): T {
  return require(name) as T;
}

/**
 * Sets the BLAS's threads: a count from 1 to the number of cores, or `"all"` for every core.
 * Returns the count the BLAS reports afterwards (null when it cannot be set, as with Accelerate,
 * which chooses itself).
 */
export function setNativeThreads(threads: number | 'all'): number | null {
  const owner = 'setNativeThreads';
  const count = checkNativeThreads(owner, 'threads', threads);
  return nativeAddon(owner).setThreads(count);
}

/** Options of {@link checkNativeThreads}. */
export interface CheckNativeThreadsArgs {
  /** Threads that each run the BLAS at the count checked (the parallel trainer's workers). Default 1. */
  workers?: number;
  /** Whether leaving the count out (for 1) is allowed, which the message then says. Default false. */
  optional?: boolean;
  /** The cores to fit in. Default: this machine's ({@link coreCount}). */
  cores?: number;
}

/**
 * The one rule for BLAS threads: never more threads than cores. `workers` threads each running
 * the BLAS at `threads` may use at most `cores / workers` BLAS threads each; one BLAS thread is
 * always allowed (it is the calling thread itself, not an extra one). Returns the count, with
 * `"all"` resolved to the cores; anything else throws a named error saying what is accepted.
 */
export function checkNativeThreads(owner: string, parameter: string, threads: unknown, args: CheckNativeThreadsArgs = {}): number {
  const cores = args.cores ?? coreCount();
  const workers = args.workers ?? 1;
  const most = Math.max(1, Math.floor(cores / workers));
  const count = threads === 'all' && workers === 1 ? cores : threads;
  if (typeof count === 'number' && Number.isInteger(count) && count >= 1 && count <= most) return count;
  const leftOut = args.optional ? ', or left out' : '';
  if (workers === 1) throw argumentError(owner, parameter, `an integer from 1 to ${cores} (this machine's cores)${args.optional ? ', "all", or left out' : ', or "all"'}`, threads);
  throw argumentError(
    owner,
    parameter,
    `an integer from 1 to ${most} (${workers} workers each running the BLAS at that count: at most ${cores} cores / ${workers} workers, never more threads than cores)${leftOut}`,
    threads,
  );
}

/** Row-major `op(A) · op(B)` shapes for {@link sgemm}. */
export interface SgemmShape {
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  /** Matrices in the batch. Default 1. */
  batch?: number;
  /** Elements between consecutive A matrices (0: one A for the whole batch). Default m·k. */
  strideA?: number;
  /** Elements between consecutive B matrices (0: one B for the whole batch). Default k·n. */
  strideB?: number;
  /** 1 to add the product to what `c` holds (a bias written there first), 0 to overwrite. Default 0. */
  beta?: 0 | 1;
}

/** `c_i = op(a_i) · op(b_i) (+ c_i)` on densely packed row-major matrices, in the addon. */
export function sgemm(addon: NativeAddon, s: SgemmShape, a: Float32Array, b: Float32Array, c: Float32Array): void {
  const { transA, transB, m, n, k } = s;
  // Leading dimensions of at least 1, as CBLAS requires even of an empty matrix.
  addon.sgemm(
    transA, transB, m, n, k,
    a, Math.max(1, transA ? m : k), s.strideA ?? m * k,
    b, Math.max(1, transB ? k : n), s.strideB ?? k * n,
    c, Math.max(1, n), m * n,
    s.batch ?? 1, s.beta ?? 0,
  );
}
