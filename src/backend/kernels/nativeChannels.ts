import * as tf from '@tensorflow/tfjs';
import { leadingAxisPlan } from './leadingAxisReduce';
import { nativeAddon } from './nativeBlas';
import { hostOf } from './nativeHost';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { sizeOf } from './wasmHeap';

/**
 * Per-channel reductions and broadcasts of NHWC activations in the native addon
 * (native/channels.cc), on the wasm heap or the cpu backend's arrays:
 *
 * - `Sum`, `Mean` over leading axes (every axis but the channels): column sums in float64;
 * - `Add`, `Sub`, `Multiply`, `RealDiv` of a full tensor and one that broadcasts along every
 *   axis but the last (a `[1, 1, 1, C]` or `[C]` per-channel value), in either order.
 *
 * These are BatchNormalization's training-step operations (its moments, their gradients, the
 * centring). On wasm the JS column sums and the stock broadcasting kernels took 5-7x the time of a
 * same-shape elementwise pass; the addon's loops run at memory speed. Everything else (other axes,
 * same-shape or scalar operands, which XNNPACK already runs fast, non-float32) goes to the
 * backend's kernel.
 */

const OPS = { Add: 0, Sub: 1, Multiply: 2, RealDiv: 3 } as const;
type BinaryKernel = keyof typeof OPS;

function reducePatch(backendName: 'cpu' | 'wasm', mean: boolean): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const p = leadingAxisPlan(args);
    if (p === null) return (stock as KernelFn)(args);
    const host = hostOf(backendName, args.backend);
    const addon = nativeAddon(mean ? 'Mean' : 'Sum');
    const out = host.output(p.outShape);
    addon.channelSums(host.values(p.x), p.rows, p.cols, host.values(out), mean ? 1 / p.rows : 1);
    return out;
  };
}

/** True when `small` broadcasts along every axis of `full` but the last, with `full`'s channel count. */
function perChannelOf(full: number[], small: number[]): boolean {
  const channels = full[full.length - 1];
  if (full.length === 0 || small.length > full.length || small.length === 0 || channels <= 1) return false;
  if (small[small.length - 1] !== channels) return false;
  return small.slice(0, -1).every((d) => d === 1) && sizeOf(full) > channels;
}

function binaryPatch(backendName: 'cpu' | 'wasm', op: BinaryKernel): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return (stock as KernelFn)(args);
    const channelFirst = perChannelOf(b.shape, a.shape);
    if (!channelFirst && !perChannelOf(a.shape, b.shape)) return (stock as KernelFn)(args);
    const [full, channel] = channelFirst ? [b, a] : [a, b];
    const cols = full.shape[full.shape.length - 1];
    const host = hostOf(backendName, args.backend);
    const addon = nativeAddon(op);
    const out = host.output(full.shape);
    addon.channelBinary(OPS[op], host.values(full), sizeOf(full.shape) / cols, cols, host.values(channel), host.values(out), channelFirst);
    return out;
  };
}

/** The patches of this file for a backend (registered by `installFastKernels("native")` / `"native-cpu"`). */
export function nativeChannelPatches(backendName: 'cpu' | 'wasm'): KernelPatch[] {
  return [
    { kernelName: 'Sum', backendName, description: 'native: per-channel sums over leading axes in float64', build: reducePatch(backendName, false) },
    { kernelName: 'Mean', backendName, description: 'native: per-channel means over leading axes in float64', build: reducePatch(backendName, true) },
    ...(Object.keys(OPS) as BinaryKernel[]).map((op) => ({
      kernelName: op,
      backendName,
      description: 'native: a per-channel operand broadcast over the rows of a full one',
      build: binaryPatch(backendName, op),
    })),
  ];
}
