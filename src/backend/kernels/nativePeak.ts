import { argumentError } from '../../core/errors';
import { coreCount, loadNativeBlas, setNativeThreads } from './nativeBlas';

/**
 * The native path's roofline: the GFLOP/s of the addon's own cblas_sgemm on square matrices,
 * what the native rows of the bench and chapter 7 compare a training step with (as
 * `measureSimdPeak` is for the wasm path). The BLAS threads are put back to what they were.
 */

/** Options of {@link measureNativeGemmPeak}. */
export interface NativeGemmPeakArgs {
  /** Matrix size n (n x n times n x n). Default 512, as the bench's PyTorch GEMM peak. */
  size?: number;
  /** Seconds of timed blocks of 5 products; the best block counts. Default 0.5. */
  seconds?: number;
  /** BLAS threads during the measurement, 1 to the core count, or "all". Default 1. */
  threads?: number | 'all';
}

/** The peak, or null when the addon is not built. */
export interface NativeGemmPeak {
  gflops: number;
  size: number;
  /** The threads the BLAS reported during the measurement (null when it does not say). */
  threads: number | null;
}

/**
 * GFLOP/s of the addon's cblas_sgemm on `size` x `size` matrices, the best of timed blocks, at
 * `threads` BLAS threads; null without the addon.
 *
 * ```ts
 * const native = measureNativeGemmPeak();        // one thread, 512 x 512
 * const all = measureNativeGemmPeak({ threads: 'all' });
 * ```
 */
export function measureNativeGemmPeak(args: NativeGemmPeakArgs = {}): NativeGemmPeak | null {
  const owner = 'measureNativeGemmPeak';
  const n = args.size ?? 512;
  const seconds = args.seconds ?? 0.5;
  if (!Number.isInteger(n) || n < 1 || n > 4096) throw argumentError(owner, 'size', 'an integer from 1 to 4096', n);
  if (!(seconds >= 0) || !Number.isFinite(seconds)) throw argumentError(owner, 'seconds', 'a finite number of seconds, 0 or more', seconds);
  const status = loadNativeBlas();
  if (!status.available) return null;
  const before = status.addon.info().threads;
  const reported = setNativeThreads(args.threads ?? 1);
  try {
    const a = new Float32Array(n * n).fill(0.5);
    const b = new Float32Array(n * n).fill(0.25);
    const c = new Float32Array(n * n);
    const product = () => status.addon.sgemm(false, false, n, n, n, a, n, n * n, b, n, n * n, c, n, n * n, 1, 0);
    for (let i = 0; i < 3; i++) product();
    let best = 0;
    const end = performance.now() + seconds * 1000;
    do {
      const t = performance.now();
      for (let i = 0; i < 5; i++) product();
      best = Math.max(best, (5 * 2 * n * n * n) / ((performance.now() - t) * 1e6));
    } while (performance.now() < end);
    return { gflops: best, size: n, threads: reported };
  } finally {
    if (before !== null) setNativeThreads(Math.min(before, coreCount()));
  }
}
