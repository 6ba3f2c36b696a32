import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { notingAttrs } from './fusedGradients';
import { productInto, productShape } from './productShape';
import { KernelArgs, KernelFn, KernelPatch } from './registry';
import { disposeAll, heapF32, runStock, sizeOf, WasmBackend } from './wasmHeap';
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
    if (a.dtype !== 'float32' || b.dtype !== 'float32') return (stock as KernelFn)(args);
    const odd = wasmOddProduct(backend, a, b, transposeA, transposeB);
    if (odd !== null) return odd;
    const single = sizeOf(a.shape.slice(0, -2)) === 1 && sizeOf(b.shape.slice(0, -2)) === 1;
    // Batches, and small transposed products, stay on the stock scalar loop.
    if (!single || ((transposeA || transposeB) && isSmall(a, b, transposeB))) return (stock as KernelFn)(args);
    const a2 = transposeA ? transpose2d(backend, a) : null;
    // The right-hand operand is what XNNPACK packs; when it is a weight, keep its transpose.
    const b2 = transposeB ? derivedWeight(backend, b, transposeTag(b), () => transpose2d(backend, b)) : null;
    const bCopy = b2 ? null : repackable(backend, b);
    try {
      return runStock('BatchMatMul', 'wasm', backend, { a: a2 ?? a, b: b2 ? asTransposeOf(b2.info, b) : (bCopy ?? b) }, { transposeA: false, transposeB: false });
    } finally {
      disposeAll(backend, a2, b2?.owned ? b2.info : null, bCopy);
    }
  };
}

/**
 * The products the stock wasm kernel gets wrong, computed in JS on the heap: an empty operand
 * (`k = 0`: XNNPACK refuses the operator and leaves the output as a freed tensor left it, where
 * it must be zeros; a batch of no matrices traps with "remainder by zero") and batch axes that
 * broadcast out of order (`[1, 3]` against `[3, 1]`, where it multiplies only three of nine
 * pairs). Null for everything else, after O(rank) checks.
 */
export function wasmOddProduct(backend: WasmBackend, a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): tf.TensorInfo | null {
  if (a.shape.length <= 3 && b.shape.length <= 3 && sizeOf(a.shape) !== 0 && sizeOf(b.shape) !== 0) return null;
  const shape = productShape(a, b, transposeA, transposeB);
  if (shape === null || (sizeOf(a.shape) !== 0 && sizeOf(b.shape) !== 0 && shape.pairs === null)) return null;
  const out = backend.makeOutput([...shape.outer, shape.m, shape.n], 'float32');
  productInto(heapF32(backend, a), heapF32(backend, b), heapF32(backend, out), shape, transposeA, transposeB);
  return out;
}

/**
 * `_FusedMatMul` (a product with bias and activation) on wasm.
 *
 * The stock kernel is right only on its XNNPACK path: single matrices, no transpose, a bias of
 * one value per column, and an activation XNNPACK applies as a clamp (linear, relu, relu6).
 * Elsewhere tfjs-backend-wasm 4.22 runs a scalar loop that reads a 1-D bias at the flat output
 * index instead of the column (every row after the first is wrong, batched products too), adds
 * the bias and clamps once per block of 48 of the reduction instead of once, and leaves prelu,
 * leakyrelu, sigmoid and elu to code paths that do not apply them; an empty reduction (k = 0)
 * leaves the output unwritten. So a transposed operand is transposed explicitly (a weight's
 * transpose cached while it lives) to reach the XNNPACK path, and anything else is computed in
 * parts: the product (the registered BatchMatMul), then the bias and activation kernels.
 */
function fusedMatMulWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as WasmBackend;
    const { a, b, bias, preluActivationWeights } = args.inputs as unknown as { a: tf.TensorInfo; b: tf.TensorInfo; bias?: tf.TensorInfo; preluActivationWeights?: tf.TensorInfo };
    const attrs = args.attrs as tf.NamedAttrMap;
    const transposeA = attrs.transposeA as boolean;
    const transposeB = attrs.transposeB as boolean;
    const activation = (attrs.activation as string) ?? 'linear';
    // Other dtypes, and activations the parts below do not know, get the stock kernel's own error.
    if (a.dtype !== 'float32' || b.dtype !== 'float32' || !knownActivation(activation, preluActivationWeights)) return (stock as KernelFn)(args);
    const rb = b.shape.length;
    const n = transposeB ? b.shape[rb - 2] : b.shape[rb - 1];
    const k = transposeB ? b.shape[rb - 1] : b.shape[rb - 2];
    const single = sizeOf(a.shape.slice(0, -2)) === 1 && sizeOf(b.shape.slice(0, -2)) === 1;
    const columnBias = !bias || (bias.dtype === 'float32' && bias.shape.length === 1 && bias.shape[0] === n);
    if (!single || k === 0 || !columnBias || !CLAMP_ACTIVATIONS.includes(activation)) {
      const product = (tf.getKernel('BatchMatMul', 'wasm') as tf.KernelConfig).kernelFunc({ inputs: { a, b }, backend: backend as unknown as tf.KernelBackend, attrs: { transposeA, transposeB } }) as tf.TensorInfo;
      return biasAndActivation('wasm', backend, product, bias, attrs, preluActivationWeights) as tf.TensorInfo;
    }
    const a2 = transposeA ? transpose2d(backend, a) : null;
    const b2 = transposeB ? derivedWeight(backend, b, transposeTag(b), () => transpose2d(backend, b)) : null;
    const bCopy = b2 ? null : repackable(backend, b);
    if (!a2 && !b2 && !bCopy) return (stock as KernelFn)(args);
    try {
      return (stock as KernelFn)({ ...args, inputs: { ...args.inputs, a: a2 ?? a, b: b2 ? asTransposeOf(b2.info, b) : (bCopy ?? b) }, attrs: { ...attrs, transposeA: false, transposeB: false } });
    } finally {
      disposeAll(backend, a2, b2?.owned ? b2.info : null, bCopy);
    }
  };
}

/**
 * The `[k, n]` XNNPACK first packed each right-hand operand's data as. The stock kernel caches
 * the packed operator by tensor id alone, so the same data multiplied again under another shape
 * (a reshaped weight: a reshape shares the data and the id) reused the operator packed for the
 * first shape (a 47x error in the fuzz).
 */
const packedShapes = new WeakMap<object, { k: number; n: number }>();

/**
 * Null when `b` may go to XNNPACK as it is; else a copy of it (an id of its own, for the caller
 * to dispose) because XNNPACK packed its id for another shape. One WeakMap lookup per product.
 */
function repackable(backend: WasmBackend, b: tf.TensorInfo): tf.TensorInfo | null {
  const k = b.shape[b.shape.length - 2];
  const n = b.shape[b.shape.length - 1];
  const packed = packedShapes.get(b.dataId);
  if (packed === undefined) packedShapes.set(b.dataId, { k, n });
  if (packed === undefined || (packed.k === k && packed.n === n)) return null;
  const copy = backend.makeOutput(b.shape, 'float32');
  heapF32(backend, copy).set(heapF32(backend, b));
  return copy;
}

/** The fused activations XNNPACK applies as an output clamp (the stock wasm XNNPACK path is right for them). */
const CLAMP_ACTIVATIONS = ['linear', 'relu', 'relu6'];

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
 * The cpu product: every batch matrix through the register-blocked JS product
 * ({@link productInto}), broadcasting the batch axes as numpy does (productShape.ts).
 */
function batchMatMulCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    const { transposeA, transposeB } = args.attrs as unknown as tf.BatchMatMulAttrs;
    const product = cpuProduct(args.backend as CpuBackend, a, b, transposeA, transposeB);
    return product ?? (stock as KernelFn)(args);
  };
}

/** `a · b` on the cpu backend, or null for the cases left to the stock kernel. */
function cpuProduct(backend: CpuBackend, a: tf.TensorInfo, b: tf.TensorInfo, transposeA: boolean, transposeB: boolean): tf.TensorInfo | null {
  const shape = productShape(a, b, transposeA, transposeB);
  if (shape === null) return null;
  const out = new Float32Array(shape.batch * shape.m * shape.n);
  productInto(cpuValues(backend, a), cpuValues(backend, b), out, shape, transposeA, transposeB);
  return backend.makeTensorInfo([...shape.outer, shape.m, shape.n], 'float32', out);
}

/** The activations of a fused matMul or conv2d, as the registered kernels of `backendName` that compute them. */
function activate(backendName: 'cpu' | 'wasm', backend: unknown, x: tf.TensorInfo, attrs: tf.NamedAttrMap, alphaWeights: tf.TensorInfo | undefined): tf.TensorInfo | null {
  const run = (name: string, inputs: tf.NamedTensorInfoMap, kernelAttrs: tf.NamedAttrMap = {}) =>
    (tf.getKernel(name, backendName) as tf.KernelConfig).kernelFunc({ inputs, backend: backend as tf.KernelBackend, attrs: kernelAttrs }) as tf.TensorInfo;
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
      return run('LeakyRelu', { x }, { alpha: (attrs.leakyreluAlpha as number | undefined) ?? 0.2 });
    case 'prelu':
      return alphaWeights ? run('Prelu', { x, alpha: alphaWeights }) : null;
    default:
      return null;
  }
}

/**
 * Adds a bias and applies a fused activation with the registered kernels of `backendName`,
 * disposing the intermediates (and `product`). Returns null for an activation it does not know.
 */
export function biasAndActivation(
  backendName: 'cpu' | 'wasm',
  backend: { disposeData(dataId: object): void },
  product: tf.TensorInfo,
  bias: tf.TensorInfo | undefined,
  attrs: tf.NamedAttrMap,
  alphaWeights: tf.TensorInfo | undefined,
): tf.TensorInfo | null {
  let current = product;
  if (bias) {
    const add = (tf.getKernel('Add', backendName) as tf.KernelConfig).kernelFunc;
    current = add({ inputs: { a: product, b: bias }, backend: backend as unknown as tf.KernelBackend, attrs: {} }) as tf.TensorInfo;
    backend.disposeData(product.dataId);
  }
  // An empty output has nothing to activate (and the stock wasm Prelu traps on one).
  if (sizeOf(current.shape) === 0) return current;
  const activated = activate(backendName, backend, current, attrs, alphaWeights);
  if (activated !== current) backend.disposeData(current.dataId);
  return activated;
}

/** The fused activations {@link biasAndActivation} knows. */
const FUSED_ACTIVATIONS = ['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu'];

/** Whether {@link biasAndActivation} can apply `activation` (prelu needs its weights). */
export function knownActivation(activation: string, preluWeights: tf.TensorInfo | undefined): boolean {
  return FUSED_ACTIVATIONS.includes(activation) && (activation !== 'prelu' || preluWeights !== undefined);
}

/** `_FusedMatMul` (dense layers with a bias and an activation) on the same cpu product. */
function fusedMatMulCpu(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuBackend & { disposeData(dataId: object): void };
    const { a, b, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const activation = (attrs.activation as string) ?? 'linear';
    if (!knownActivation(activation, preluActivationWeights)) return (stock as KernelFn)(args);
    const product = cpuProduct(backend, a as tf.TensorInfo, b as tf.TensorInfo, attrs.transposeA as boolean, attrs.transposeB as boolean);
    if (!product) return (stock as KernelFn)(args);
    return biasAndActivation('cpu', backend, product, bias, attrs, preluActivationWeights) as tf.TensorInfo;
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
