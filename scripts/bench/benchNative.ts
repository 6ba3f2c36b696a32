import * as tf from '@tensorflow/tfjs';
import { loadNativeBlas, NativeAddon } from '../../src/backend/index';

/**
 * The bench's measurement of the native path besides its rows (its GEMM peak is the library's
 * measureNativeGemmPeak): where a native step's time goes when it misses its target.
 */

/** The kernels whose time is matrix products (and, for convolutions, their im2col/col2im). */
const PRODUCT_KERNELS = new Set(['BatchMatMul', '_FusedMatMul', 'Conv2D', 'FusedConv2D', 'Conv2DBackpropFilter', 'Conv2DBackpropInput']);

/** Where a step's wall time goes, in ms per step (means over the profiled calls). */
export interface StepBreakdown {
  /** Wall time of a profiled step (tf.profile's own bookkeeping included, which lands in dispatch). */
  wallMs: number;
  /** The unprofiled median of the same step, from its row, for comparison. */
  rowMs: number;
  /** Inside cblas_sgemm. */
  blasMs: number;
  /**
   * In the product kernels outside the BLAS: im2col and col2im (in the addon), bias fill,
   * transposes and allocation (the copies), and whatever case a native kernel hands to the
   * backend's own (NCHW, non-float32).
   */
  copiesMs: number;
  /** In every other kernel: activations, BatchNorm, pooling, reductions, the optimizer's arithmetic. */
  elementwiseMs: number;
  /** The rest: tfjs's engine (op dispatch, the gradient tape, tensor bookkeeping) and JS between ops. */
  dispatchMs: number;
  /** The slowest non-product kernels, ms per step. */
  topKernels: { name: string; ms: number }[];
}

/**
 * Profiles `calls` calls of `call` (one step) on the native path: their wall time, tfjs's
 * per-kernel times (`tf.profile`) and the time inside the addon's sgemm (by timing a wrapper
 * around it), all in the same calls, so the shares add up on a loaded machine too. Dispatch is
 * what remains of the wall time (it includes tf.profile's own bookkeeping: an upper bound).
 */
export async function nativeBreakdown(call: () => void, rowMs: number, calls: number): Promise<StepBreakdown | null> {
  const status = loadNativeBlas();
  if (!status.available) return null;
  const real = status.addon;
  let blasMs = 0;
  const timing: NativeAddon = {
    sgemm: (...args: Parameters<NativeAddon['sgemm']>) => {
      const t = performance.now();
      real.sgemm(...args);
      blasMs += performance.now() - t;
    },
    im2col: (...args: Parameters<NativeAddon['im2col']>) => real.im2col(...args),
    col2im: (...args: Parameters<NativeAddon['col2im']>) => real.col2im(...args),
    channelSums: (...args: Parameters<NativeAddon['channelSums']>) => real.channelSums(...args),
    channelBinary: (...args: Parameters<NativeAddon['channelBinary']>) => real.channelBinary(...args),
    info: () => real.info(),
    setThreads: (n) => real.setThreads(n),
  };
  loadNativeBlas({ reload: true, load: () => timing });
  const perKernel = new Map<string, number>();
  let productMs = 0;
  let wallTotal = 0;
  try {
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      const profile = await tf.profile(call);
      wallTotal += performance.now() - t;
      for (const k of profile.kernels) {
        // Custom ops (softmaxCrossEntropy__op, fusedMatMul__op) are scopes around kernels listed too.
        if (k.name.endsWith('__op')) continue;
        const ms = typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
        if (PRODUCT_KERNELS.has(k.name)) productMs += ms;
        else perKernel.set(k.name, (perKernel.get(k.name) ?? 0) + ms);
      }
    }
  } finally {
    loadNativeBlas({ reload: true });
  }
  const elementwise = [...perKernel.values()].reduce((s, v) => s + v, 0) / calls;
  const blas = blasMs / calls;
  const copies = Math.max(0, productMs / calls - blas);
  const wallMs = wallTotal / calls;
  return {
    wallMs,
    rowMs,
    blasMs: blas,
    copiesMs: copies,
    elementwiseMs: elementwise,
    dispatchMs: Math.max(0, wallMs - blas - copies - elementwise),
    topKernels: [...perKernel.entries()].map(([name, ms]) => ({ name, ms: ms / calls })).sort((a, b) => b.ms - a.ms).slice(0, 4),
  };
}

/** One line per breakdown: each part's share of the wall time. */
export function breakdownLine(label: string, b: StepBreakdown): string {
  const share = (ms: number) => `${((100 * ms) / b.wallMs).toFixed(0)}% (${ms.toFixed(2)} ms)`;
  return (
    `| ${label} | ${b.wallMs.toFixed(2)} (row: ${b.rowMs.toFixed(2)}) | ${share(b.blasMs)} | ${share(b.copiesMs)} | ${share(b.elementwiseMs)} | ${share(b.dispatchMs)} | ` +
    `${b.topKernels.map((k) => `${k.name} ${k.ms.toFixed(2)}`).join(', ')} |`
  );
}

/** Where the time of each native row that missed its target goes. */
export function breakdownTable(report: { breakdowns?: { label: string; breakdown: StepBreakdown }[] }): string[] {
  const breakdowns = report.breakdowns ?? [];
  if (breakdowns.length === 0) return [];
  return [
    '',
    'Native rows that missed their one-thread target: where the wall time of profiled steps goes (same calls). BLAS: inside cblas_sgemm (timed around the',
    "addon); other products: the rest of the product kernels (the addon's im2col and col2im, bias fill, copies, and cases handed to the",
    "backend's own kernels); elementwise: every other kernel (tf.profile); dispatch: the remainder, tfjs's engine (op dispatch, the gradient tape,",
    'tensor bookkeeping) and JS between ops.',
    '',
    '| row | wall ms, profiled | BLAS | other products | elementwise | dispatch | slowest other kernels (ms) |',
    '|---|---|---|---|---|---|---|',
    ...breakdowns.map((b) => breakdownLine(b.label, b.breakdown)),
  ];
}
