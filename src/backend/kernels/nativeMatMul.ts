import * as tf from '@tensorflow/tfjs';
import { CpuBackend } from './cpuData';
import { notingAttrs } from './fusedGradients';
import { biasAndActivation, knownActivation } from './matMul';
import { matrixOf, productShape } from './productShape';
import { nativeAddon, sgemm } from './nativeBlas';
import { hostOf, NativeHost } from './nativeHost';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { sizeOf } from './wasmHeap';

/**
 * Matrix products through the system CBLAS (the optional native addon), on the wasm backend's
 * heap or the cpu backend's arrays: `BatchMatMul` and `_FusedMatMul`, so a Dense layer's forward
 * product and both of its gradient products (`dy · Wᵀ`, `xᵀ · dy`, which tfjs runs as transposed
 * BatchMatMuls) run in OpenBLAS.
 *
 * The addon reads the operands and writes the result where the backend keeps them (see
 * nativeHost.ts): no copy in, no copy out. Transposes are CBLAS flags, not copies.
 * A batch of A against one shared B (`[batch, m, k] · [k, n]`) is one product with `batch·m`
 * rows. A fused bias whose size is the column count is written into the output first and the
 * product added onto it (CBLAS's beta = 1), instead of a separate Add kernel over the output.
 *
 * Exact: the same sums of products as the stock kernel, in another order, within float32
 * rounding. Integer dtypes and shape errors go to the stock kernel; batch axes broadcast as numpy's
 * do (productShape.ts).
 */
type CpuWithDispose = CpuBackend & { disposeData(dataId: object): void };

/** `a · b` (with the transposes, onto a column bias) into a new tensor, or null for the stock kernel's cases. */
export function nativeProduct(host: NativeHost, a: tf.TensorInfo, b: tf.TensorInfo, transA: boolean, transB: boolean, bias: tf.TensorInfo | null = null): tf.TensorInfo | null {
  const shape = productShape(a, b, transA, transB);
  if (shape === null) return null;
  const { m, k, n, batchA, batchB, batch, outer } = shape;
  if (bias !== null && sizeOf(bias.shape) !== n) return null;
  const addon = nativeAddon('nativeProduct');
  const result = host.output([...outer, m, n]);
  // Views after the allocation (on wasm it may move the heap).
  const out = host.values(result);
  if (bias !== null) fillRows(out, host.values(bias));
  const av = host.values(a);
  const bv = host.values(b);
  const beta = bias === null ? 0 : 1;
  if (shape.pairs !== null) {
    // A broadcast that pairs matrices out of order ([1, 3] against [3, 1]): one product each.
    for (let i = 0; i < batch; i++) {
      const ia = matrixOf(shape, 0, i) * m * k;
      const ib = matrixOf(shape, 1, i) * k * n;
      sgemm(addon, { transA, transB, m, n, k, beta }, av.subarray(ia, ia + m * k), bv.subarray(ib, ib + k * n), out.subarray(i * m * n, (i + 1) * m * n));
    }
  } else if (batchB === 1 && !transA) {
    // Every A matrix against the same B: one product of batch·m rows.
    sgemm(addon, { transA, transB, m: batch * m, n, k, beta }, av, bv, out);
  } else {
    sgemm(addon, { transA, transB, m, n, k, batch, strideA: batchA === 1 ? 0 : m * k, strideB: batchB === 1 ? 0 : k * n, beta }, av, bv, out);
  }
  return result;
}

/** Writes `row` into every consecutive row of `out` (a bias, before the product is added). */
export function fillRows(out: Float32Array, row: Float32Array): void {
  const n = row.length;
  // An empty product (no rows, or a batch of none) has no row to write the bias into.
  if (n === 0 || out.length === 0) return;
  out.set(row, 0);
  // Doubling copies: log2(rows) calls of the engine's memmove instead of one per row.
  for (let filled = n; filled < out.length; filled *= 2) out.copyWithin(filled, 0, Math.min(filled, out.length - filled));
}

function batchMatMulNative(backendName: 'cpu' | 'wasm'): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    return nativeProduct(hostOf(backendName, args.backend), a, b, transposeA, transposeB) ?? (stock as KernelFn)(args);
  };
}

/**
 * A bias to write into a product's output first: a float32 bias with one value per output
 * column (what Dense and Conv2D layers have). Anything else is added by the stock Add kernel.
 */
export function columnBias(bias: tf.TensorInfo | undefined, columns: number): tf.TensorInfo | null {
  if (!bias || bias.dtype !== 'float32' || sizeOf(bias.shape) !== columns || bias.shape[bias.shape.length - 1] !== columns) return null;
  return bias;
}

/**
 * The fused activation of a native product. cpu: the stock cpu kernels for every activation
 * tfjs fuses (and the bias, when it was not a column bias). wasm: linear, and relu in place;
 * anything else returns null before any work, and the stock (XNNPACK) kernel runs instead.
 */
export function nativeActivation(host: NativeHost, attrs: tf.NamedAttrMap, inputs: Record<string, tf.TensorInfo | undefined>, columns: number): ((product: tf.TensorInfo) => tf.TensorInfo) | null {
  const activation = (attrs.activation as string) ?? 'linear';
  const { bias, preluActivationWeights } = inputs;
  const inBias = columnBias(bias, columns);
  if (host.name === 'cpu') {
    if (!knownActivation(activation, preluActivationWeights)) return null;
    return (product) => biasAndActivation('cpu', host.backend as CpuWithDispose, product, inBias ? undefined : bias, attrs, preluActivationWeights) as tf.TensorInfo;
  }
  if ((activation !== 'linear' && activation !== 'relu') || (bias && !inBias)) return null;
  if (activation === 'linear') return (product) => product;
  return (product) => {
    const v = host.values(product);
    for (let i = 0; i < v.length; i++) if (v[i] < 0) v[i] = 0;
    return product;
  };
}

function fusedMatMulNative(backendName: 'cpu' | 'wasm'): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const host = hostOf(backendName, args.backend);
    const inputs = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const { a, b, bias } = inputs;
    const attrs = args.attrs as tf.NamedAttrMap;
    const transB = attrs.transposeB as boolean;
    const bShape = (b as tf.TensorInfo).shape;
    const n = transB ? bShape[bShape.length - 2] : bShape[bShape.length - 1];
    const finish = nativeActivation(host, attrs, inputs, n);
    if (finish === null) return (stock as KernelFn)(args);
    const product = nativeProduct(host, a as tf.TensorInfo, b as tf.TensorInfo, attrs.transposeA as boolean, transB, columnBias(bias, n));
    if (!product) return (stock as KernelFn)(args);
    return finish(product);
  };
}

/** The patches of this file for a backend (registered by `installFastKernels("native")` in place of the project's others). */
export function nativeMatMulPatches(backendName: 'cpu' | 'wasm'): KernelPatch[] {
  return [
    {
      kernelName: 'BatchMatMul',
      backendName,
      description: `native: cblas_sgemm on the ${backendName === 'cpu' ? 'cpu tensors' : 'wasm heap'} in place (transposes as flags, a shared weight as one product)`,
      build: batchMatMulNative(backendName),
    },
    {
      kernelName: '_FusedMatMul',
      backendName,
      description: `native: cblas_sgemm onto the bias written into the output (beta = 1), then ${backendName === 'cpu' ? 'the stock activation' : 'relu in place (other activations: the stock kernel)'}`,
      build: (stock) => notingAttrs(fusedMatMulNative(backendName)(stock)),
    },
  ];
}
