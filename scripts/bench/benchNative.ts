import * as tf from '@tensorflow/tfjs';
import { loadNativeBlas, NativeAddon } from '../../src/backend/index';

/**
 * The bench's measurement of the native path besides its rows (its GEMM peak is the library's
 * measureNativeGemmPeak): where a native step's time goes when it misses its target.
 */

/** The kernels whose time is matrix products (and, for convolutions, their im2col/col2im). */
const PRODUCT_KERNELS = new Set(['BatchMatMul', '_FusedMatMul', 'Conv2D', 'FusedConv2D', 'Conv2DBackpropFilter', 'Conv2DBackpropInput']);

/** Where a step's wall time goes, in ms per step (means over the timed calls). */
export interface StepBreakdown {
  /** Wall time of a step with its kernels timed (the timers' own cost included, which lands in dispatch). */
  wallMs: number;
  /** The step's time without the kernel timers, for comparison: the row's median, or the same calls timed just before. */
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
  /** The rest of the wall time: tfjs's engine (op dispatch, the gradient tape, tensor bookkeeping) and JS between ops. */
  dispatchMs: number;
  /** The slowest non-product kernels, ms per step. */
  topKernels: { name: string; ms: number }[];
}

/**
 * Times every kernel registered for the active backend, by name, until `restore`: each kernel
 * function is wrapped in two clock reads. A kernel called from inside another (through the
 * registry) counts in its caller only.
 *
 * Why not `tf.profile`: its bookkeeping per kernel (shapes, byte counts, a promise each) doubled a
 * CNN micro-batch's wall time (11.5 against 8.8 ms, bench of 2026-12-02 01:44 UTC) and stretched
 * the kernels themselves when two threads profiled at once, so its dispatch share was an artefact.
 */
export function timeKernels(): { perKernel: Map<string, number>; restore: () => void } {
  const backendName = tf.getBackend();
  const configs = tf.getKernelsForBackend(backendName);
  const perKernel = new Map<string, number>();
  let depth = 0;
  for (const config of configs) {
    const inner = config.kernelFunc;
    tf.unregisterKernel(config.kernelName, backendName);
    tf.registerKernel({
      ...config,
      kernelFunc: (args) => {
        if (depth > 0) return inner(args);
        depth += 1;
        const t = performance.now();
        try {
          return inner(args);
        } finally {
          depth -= 1;
          perKernel.set(config.kernelName, (perKernel.get(config.kernelName) ?? 0) + performance.now() - t);
        }
      },
    });
  }
  return {
    perKernel,
    restore: () => {
      for (const config of configs) {
        tf.unregisterKernel(config.kernelName, backendName);
        tf.registerKernel(config);
      }
    },
  };
}

/**
 * Times `calls` calls of `call` (one step) on the native path: their wall time, every kernel's
 * time ({@link timeKernels}) and the time inside the addon's sgemm (by timing a wrapper around
 * it), all in the same calls, so the parts add up to the wall time on a loaded machine too.
 * Dispatch is what remains of the wall time. `rowMs`, the step's time without timers, is kept
 * beside it.
 */
export function nativeBreakdown(call: () => void, rowMs: number, calls: number): StepBreakdown | null {
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
  const kernels = timeKernels();
  let wallTotal = 0;
  try {
    const t = performance.now();
    for (let i = 0; i < calls; i++) call();
    wallTotal = performance.now() - t;
  } finally {
    kernels.restore();
    loadNativeBlas({ reload: true });
  }
  let productMs = 0;
  const others = new Map<string, number>();
  for (const [name, ms] of kernels.perKernel) {
    if (PRODUCT_KERNELS.has(name)) productMs += ms;
    else others.set(name, ms);
  }
  const elementwise = [...others.values()].reduce((sum, v) => sum + v, 0) / calls;
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
    topKernels: [...others.entries()].map(([name, ms]) => ({ name, ms: ms / calls })).sort((x, y) => y.ms - x.ms).slice(0, 4),
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
    "Native rows that missed their one-thread target: where a step's wall time goes, every kernel timed by name in the same steps (two clock reads",
    "around each kernel function, not tf.profile). BLAS: inside cblas_sgemm (timed around the addon); other products: the rest of the product kernels",
    "(the addon's im2col and col2im, bias fill, copies, and cases handed to the backend's own kernels); elementwise: every other kernel; dispatch: the",
    "remainder, tfjs's engine (op dispatch, the gradient tape, tensor bookkeeping) and JS between ops.",
    '',
    '| row | wall ms, kernels timed | BLAS | other products | elementwise | dispatch | slowest other kernels (ms) |',
    '|---|---|---|---|---|---|---|',
    ...breakdowns.map((b) => breakdownLine(b.label, b.breakdown)),
  ];
}
