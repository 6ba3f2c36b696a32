import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { notingAttrs } from './fusedGradients';
import { gemm, transposeInto } from './gemm';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { disposeAll, runStock, sizeOf, WasmBackend } from './wasmHeap';
import { derivedWeight } from './weightCache';

/**
 * Transposed matrix products on wasm through XNNPACK.
 *
 * The stock wasm `BatchMatMul` uses XNNPACK only when neither operand is transposed and both
 * are single matrices; anything else falls to a scalar triple loop (~1 GFLOP/s). Backprop of
 * `y = x W` needs `x^T dy` and `dy W^T`, both transposed, so every dense layer's backward pass
 * took the slow loop. Here the transposed operand is materialized with the stock (fast)
 * `Transpose` and the product runs on the XNNPACK path. A transposed weight (`W^T` for the
 * input gradient) is cached for as long as the weight lives, so XNNPACK packs it once per
 * update, not once per micro-step.
 *
 * Exact: the same products and sums as the stock kernel, only in a different order, so results
 * agree to float32 rounding.
 */
/**
 * Below this many multiply-adds the stock loop beats a transpose plus an XNNPACK operator
 * (created, packed and deleted per call): e.g. the article's 10 -> 1 dense layer.
 */
const SMALL_PRODUCT = 16384;

/** Multiply-adds of `a · b` (`m·k` elements of a, times n) below {@link SMALL_PRODUCT}. */
function isSmall(a: tf.TensorInfo, b: tf.TensorInfo, transposeB: boolean): boolean {
  const rb = b.shape.length;
  return sizeOf(a.shape) * (transposeB ? b.shape[rb - 2] : b.shape[rb - 1]) < SMALL_PRODUCT;
}

function batchMatMulWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    const singleA = sizeOf(a.shape.slice(0, -2)) === 1;
    const singleB = sizeOf(b.shape.slice(0, -2)) === 1;
    if ((!transposeA && !transposeB) || !singleA || !singleB || a.dtype !== 'float32' || b.dtype !== 'float32' || isSmall(a, b, transposeB)) {
      return (stock as KernelFn)(args);
    }
    const a2 = transposeA ? transpose2d(backend, a) : null;
    // The right-hand operand is what XNNPACK packs; when it is a weight, keep its transpose.
    const b2 = transposeB ? derivedWeight(backend, b, transposeTag(b), () => transpose2d(backend, b)) : null;
    try {
      return runStock('BatchMatMul', 'wasm', backend, { a: a2 ?? a, b: b2 ? asTransposeOf(b2.info, b) : b }, { transposeA: false, transposeB: false });
    } finally {
      disposeAll(backend, a2, b2?.owned ? b2.info : null);
    }
  };
}

/**
 * `_FusedMatMul` (a product with bias and activation) with a transposed operand on wasm: the
 * same explicit transpose, then the stock kernel's XNNPACK path.
 *
 * Note: besides being slow, the stock scalar path reads a 1-D bias at the flat output index
 * (clamped to the bias length) instead of the column, so in tfjs-backend-wasm 4.22 a transposed
 * fused product with a bias is wrong from its second row on. Single matrices avoid that path
 * here; batched transposed products with a bias still reach it.
 */
function fusedMatMulWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const attrs = args.attrs as tf.NamedAttrMap;
    const transposeA = attrs.transposeA as boolean;
    const transposeB = attrs.transposeB as boolean;
    const single = sizeOf(a.shape.slice(0, -2)) === 1 && sizeOf(b.shape.slice(0, -2)) === 1;
    // Small products stay on the stock path, except with a bias, which that path misplaces.
    const small = isSmall(a, b, transposeB) && !args.inputs.bias;
    if ((!transposeA && !transposeB) || !single || small || a.dtype !== 'float32' || b.dtype !== 'float32') return (stock as KernelFn)(args);
    const a2 = transposeA ? transpose2d(backend, a) : null;
    const b2 = transposeB ? derivedWeight(backend, b, transposeTag(b), () => transpose2d(backend, b)) : null;
    try {
      return (stock as KernelFn)({ ...args, inputs: { ...args.inputs, a: a2 ?? a, b: b2 ? asTransposeOf(b2.info, b) : b }, attrs: { ...attrs, transposeA: false, transposeB: false } });
    } finally {
      disposeAll(backend, a2, b2?.owned ? b2.info : null);
    }
  };
}

/**
 * The transposed data seen with `b`'s leading dims: a cached transpose may have been made for a
 * caller that viewed the weight with another rank (the stock fused kernel needs rank 3).
 */
function asTransposeOf(transposed: tf.TensorInfo, b: tf.TensorInfo): tf.TensorInfo {
  const rank = b.shape.length;
  return { dataId: transposed.dataId, shape: [...b.shape.slice(0, -2), b.shape[rank - 1], b.shape[rank - 2]], dtype: transposed.dtype };
}

/** The cache tag of a transposed weight: its matrix shape, since callers may view the same data differently. */
function transposeTag(b: tf.TensorInfo): string {
  return `matMul.transposeB:${b.shape[b.shape.length - 2]}x${b.shape[b.shape.length - 1]}`;
}

/** Transposes the last two axes of a single (batch 1) matrix, keeping its leading unit dims. */
function transpose2d(backend: WasmBackend, x: tf.TensorInfo): tf.TensorInfo {
  const rank = x.shape.length;
  const rows = x.shape[rank - 2];
  const cols = x.shape[rank - 1];
  const x2: tf.TensorInfo = { dataId: x.dataId, shape: [rows, cols], dtype: x.dtype };
  const t = runStock('Transpose', 'wasm', backend, { x: x2 }, { perm: [1, 0] });
  t.shape = [...x.shape.slice(0, -2), cols, rows];
  return t;
}

/**
 * The cpu product: every batch through {@link gemm}, with operands transposed into the layout it
 * reads (A by rows, B by columns) first; a weight shared by the whole batch is packed once.
 */
function batchMatMulCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    const product = cpuProduct(args.backend as CpuBackend, a, b, transposeA, transposeB);
    return product ?? (stock as KernelFn)(args);
  };
}

/** The sizes of a (batched) float32 product `op(a) · op(b)`, shared by the JS and native products. */
export interface ProductShape {
  m: number;
  k: number;
  n: number;
  /** Matrices in a and in b (1: one matrix shared by the whole batch). */
  batchA: number;
  batchB: number;
  /** The broadcast leading dims of the output. */
  outer: number[];
}

/**
 * The sizes of `op(a) · op(b)`, or null for what the replacements leave to the stock kernel:
 * other dtypes, rank below 2, shape errors and unusual broadcasts (its checks and messages).
 */
export function productShape(a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): ProductShape | null {
  if (a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2) return null;
  const ra = a.shape.length;
  const rb = b.shape.length;
  const m = transposeA ? a.shape[ra - 1] : a.shape[ra - 2];
  const k = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
  const n = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
  const kb = transposeB ? b.shape[rb - 1] : b.shape[rb - 2];
  const batchA = sizeOf(a.shape.slice(0, -2));
  const batchB = sizeOf(b.shape.slice(0, -2));
  if (k !== kb || (batchA !== batchB && batchA !== 1 && batchB !== 1)) return null;
  return { m, k, n, batchA, batchB, outer: tf.backend_util.assertAndGetBroadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2)) };
}

/** `a · b` on the cpu backend, or null for the cases left to the stock kernel. */
function cpuProduct(backend: CpuBackend, a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): tf.TensorInfo | null {
  const shape = productShape(a, b, transposeA, transposeB);
  if (shape === null) return null;
  const { m, k, n, batchA, batchB, outer } = shape;
  const batch = Math.max(batchA, batchB);
  const av = cpuValues(backend, a);
  const bv = cpuValues(backend, b);
  const out = new Float32Array(batch * m * n);
  const aRows = transposeA ? new Float32Array(m * k) : null;
  const bCols = transposeB ? null : new Float32Array(n * k);
  for (let i = 0; i < batch; i++) {
    const ia = batchA === 1 ? 0 : i;
    const ib = batchB === 1 ? 0 : i;
    if (aRows && (i === 0 || batchA > 1)) transposeInto(av, ia * m * k, k, m, aRows);
    if (bCols && (i === 0 || batchB > 1)) transposeInto(bv, ib * k * n, k, n, bCols);
    gemm(aRows ?? av, aRows ? 0 : ia * m * k, bCols ?? bv, bCols ? 0 : ib * k * n, out, i * m * n, m, k, n);
  }
  return backend.makeTensorInfo([...outer, m, n], 'float32', out);
}

/** The stock activations of a fused matMul, as the cpu kernels that compute them. */
function activate(backend: CpuBackend, x: tf.TensorInfo, attrs: tf.NamedAttrMap, alphaWeights: tf.TensorInfo | undefined): tf.TensorInfo | null {
  const run = (name: string, inputs: tf.NamedTensorInfoMap, kernelAttrs: tf.NamedAttrMap = {}) =>
    (tf.getKernel(name, 'cpu') as tf.KernelConfig).kernelFunc({ inputs, backend: backend as unknown as tf.KernelBackend, attrs: kernelAttrs }) as tf.TensorInfo;
  switch (attrs.activation ?? 'linear') {
    case 'linear':
      return x;
    case 'relu':
      return run('Relu', { x });
    case 'relu6':
      return run('Relu6', { x });
    case 'elu':
      return run('Elu', { x });
    case 'sigmoid':
      return run('Sigmoid', { x });
    case 'leakyrelu':
      return run('LeakyRelu', { x }, { alpha: attrs.leakyreluAlpha as number });
    case 'prelu':
      return alphaWeights ? run('Prelu', { x, alpha: alphaWeights }) : null;
    default:
      return null;
  }
}

/**
 * Adds a bias and applies a fused activation with the registered cpu kernels, disposing the
 * intermediates (and `product`). Returns null for an activation it does not know.
 */
export function biasAndActivation(
  backend: CpuBackend & { disposeData(dataId: object): void },
  product: tf.TensorInfo,
  bias: tf.TensorInfo | undefined,
  attrs: tf.NamedAttrMap,
  alphaWeights: tf.TensorInfo | undefined,
): tf.TensorInfo | null {
  let current = product;
  if (bias) {
    const add = (tf.getKernel('Add', 'cpu') as tf.KernelConfig).kernelFunc;
    current = add({ inputs: { a: product, b: bias }, backend: backend as unknown as tf.KernelBackend, attrs: {} }) as tf.TensorInfo;
    backend.disposeData(product.dataId);
  }
  const activated = activate(backend, current, attrs, alphaWeights);
  if (activated !== current) backend.disposeData(current.dataId);
  return activated;
}

/** The fused activations {@link biasAndActivation} knows. */
export const FUSED_ACTIVATIONS = ['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'];

/** `_FusedMatMul` (dense layers with a bias and an activation) on the same cpu product. */
function fusedMatMulCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend & { disposeData(dataId: object): void };
    const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const activation = (attrs.activation as string) ?? 'linear';
    if (!FUSED_ACTIVATIONS.includes(activation) || (activation === 'prelu' && !preluActivationWeights)) return (stock as KernelFn)(args);
    const product = cpuProduct(backend, a as tf.TensorInfo, b as tf.TensorInfo, attrs.transposeA as boolean, attrs.transposeB as boolean);
    if (!product) return (stock as KernelFn)(args);
    return biasAndActivation(backend, product, bias, attrs, preluActivationWeights) as tf.TensorInfo;
  };
}

/** The patches of this file. */
export const matMulPatches: KernelPatch[] = [
  {
    kernelName: '_FusedMatMul',
    backendName: 'wasm',
    description: 'transposed fused products through an explicit transpose and XNNPACK (the stock scalar path also misplaces the bias)',
    build: (stock) => notingAttrs(fusedMatMulWasm(stock)),
  },
  {
    kernelName: 'BatchMatMul',
    backendName: 'cpu',
    description: '4x4 register-blocked JS product on packed operands (~5x the stock loop)',
    build: batchMatMulCpu,
  },
  {
    kernelName: '_FusedMatMul',
    backendName: 'cpu',
    description: 'the same product, then the stock bias add and activation',
    build: (stock) => notingAttrs(fusedMatMulCpu(stock)),
  },
  {
    kernelName: 'BatchMatMul',
    backendName: 'wasm',
    description: 'transposed products through an explicit transpose and XNNPACK (the stock kernel loops in scalar code); transposed weights cached per update',
    build: batchMatMulWasm,
  },
];
