import * as tf from '@tensorflow/tfjs';
import { CpuBackend } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { sizeOf, WasmBackend } from './wasmHeap';

/**
 * `Tile` as block copies.
 *
 * tfjs uses `Tile` for broadcasts (`broadcastTo`, and the stock BatchNorm gradient tiles
 * `1/sqrt(variance)` to the full activation shape). The stock wasm kernel converts every output
 * index to coordinates and back, allocating vectors per element (~20 ms for one BatchNorm
 * gradient of a small CNN); the cpu one also maps index by index. Here each innermost row is
 * copied once and then replicated with `copyWithin`, doubling the copied block each time, so a
 * broadcast costs about one memory pass over the output.
 */

type Numeric = Float32Array | Int32Array | Uint8Array;

/** Writes `tile(src, reps)` into `dst` (the output, `shape[i] * reps[i]` per axis). */
export function tileInto(src: Numeric, shape: readonly number[], reps: readonly number[], dst: Numeric): void {
  const rank = shape.length;
  if (rank === 0) {
    dst[0] = src[0];
    return;
  }
  const inStrides = new Array<number>(rank);
  const outStrides = new Array<number>(rank);
  inStrides[rank - 1] = 1;
  outStrides[rank - 1] = 1;
  for (let d = rank - 2; d >= 0; d--) {
    inStrides[d] = inStrides[d + 1] * shape[d + 1];
    outStrides[d] = outStrides[d + 1] * shape[d + 1] * reps[d + 1];
  }
  const fill = (d: number, from: number, to: number): void => {
    const n = shape[d];
    if (d === rank - 1) {
      dst.set(src.subarray(from, from + n), to);
    } else {
      for (let i = 0; i < n; i++) fill(d + 1, from + i * inStrides[d], to + i * outStrides[d]);
    }
    replicate(dst, to, n * outStrides[d], reps[d]);
  };
  fill(0, 0, 0);
}

/** Repeats `dst[start, start + block)` so that it appears `times` times in a row. */
function replicate(dst: Numeric, start: number, block: number, times: number): void {
  const total = block * times;
  let filled = block;
  while (filled < total) {
    const n = Math.min(filled, total - filled);
    dst.copyWithin(start + filled, start, start + n);
    filled += n;
  }
}

function outShape(x: tf.TensorInfo, reps: number[]): number[] {
  return x.shape.map((d, i) => d * reps[i]);
}

function tileWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend & { typedArrayFromHeap(t: tf.TensorInfo): Numeric };
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { reps } = args.attrs as unknown as tf.TileAttrs;
    if (x.dtype === 'string' || x.dtype === 'complex64' || reps.length !== x.shape.length) return (stock as KernelFn)(args);
    const out = backend.makeOutput(outShape(x, reps), x.dtype);
    if (sizeOf(out.shape) > 0) tileInto(backend.typedArrayFromHeap(x), x.shape, reps, backend.typedArrayFromHeap(out));
    return out;
  };
}

function tileCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend & { makeTensorInfo(s: number[], d: tf.DataType, v: Numeric): tf.TensorInfo };
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { reps } = args.attrs as unknown as tf.TileAttrs;
    const values = backend.data.get(x.dataId).values;
    if (!(values instanceof Float32Array || values instanceof Int32Array || values instanceof Uint8Array) || reps.length !== x.shape.length) {
      return (stock as KernelFn)(args);
    }
    const shape = outShape(x, reps);
    const dst = new (values.constructor as { new (n: number): Numeric })(sizeOf(shape));
    if (dst.length > 0) tileInto(values, x.shape, reps, dst);
    return backend.makeTensorInfo(shape, x.dtype, dst);
  };
}

/** The patches of this file. */
export const tilePatches: KernelPatch[] = [
  { kernelName: 'Tile', backendName: 'wasm', description: 'block copies (the stock kernel maps every index through allocated vectors)', build: tileWasm },
  { kernelName: 'Tile', backendName: 'cpu', description: 'block copies instead of per-element index mapping', build: tileCpu },
];
