import { activationPatches } from './activation';
import { addCheckedPatches } from './addChecked';
import { batchNormPatches } from './batchNorm';
import { batchNormGradientPatch, batchNormGradPatches } from './batchNormGrad';
import { BATCH_NORM_LAYER, BATCH_NORM_LAYER_DESCRIPTION, batchNormLayerInstalled, installBatchNormLayer, restoreBatchNormLayer } from './batchNormLayer';
import { broadcastBinaryPatches } from './broadcastBinary';
import { conv2dPatches } from './conv2d';
import { conv2dBackpropFilterPatches } from './conv2dBackpropFilter';
import { conv2dBackpropInputPatches } from './conv2dBackpropInput';
import { depthwiseConv2dGradPatches } from './depthwiseConv2dGrad';
import { fusedGradientPatches, noteFusedAttrsEverywhere, restoreFusedKernels } from './fusedGradients';
import { identityPatches } from './identity';
import { leadingAxisReducePatches } from './leadingAxisReduce';
import { matMulPatches } from './matMul';
import { nativeAddon } from './nativeBlas';
import { nativeChannelPatches } from './nativeChannels';
import { nativeConv2dPatches, releaseNativeScratch } from './nativeConv2d';
import { nativeMatMulPatches } from './nativeMatMul';
import { reduceGradientPatches } from './reduceGrad';
import { softmaxCrossEntropyGradientPatch } from './softmaxCrossEntropyGrad';
import { maxPoolGradPatches } from './maxPoolGrad';
import {
  GradientPatch,
  KernelFn,
  installGradients,
  installKernels,
  KernelPatch,
  listInstalledGradients,
  listInstalledKernels,
  uninstallKernels,
} from './registry';
import { tilePatches } from './tile';
import { wasmConv2dPatches } from './wasmConv2d';
import { wasmPoolPatches } from './wasmPool';
import { clearWeightCache } from './weightCache';

/**
 * The project's replacement kernels for tfjs's pure-JS `cpu` and WebAssembly `wasm` backends:
 * what makes training on them fast enough to use. See each file for what it replaces and why.
 */

/**
 * The kernel sets that can be installed: `"wasm"` and `"cpu"` for those backends; `"native"`,
 * the wasm set with its matrix products and convolutions in the system CBLAS (the optional
 * native addon, reading and writing the wasm heap in place); and `"native-cpu"`, the same
 * products on the cpu backend's arrays. The native products live on wasm because the rest of a
 * training step (elementwise kernels, BatchNorm, pooling) is several times faster there than on
 * cpu (docs/benchmark.md, the native rows).
 */
export const FAST_KERNEL_BACKENDS = ['wasm', 'cpu', 'native', 'native-cpu'] as const;
export type FastKernelBackend = (typeof FAST_KERNEL_BACKENDS)[number];

/** The tfjs backend a kernel set is registered on. */
export function tfjsBackendOf(set: FastKernelBackend): 'wasm' | 'cpu' {
  return set === 'wasm' || set === 'native' ? 'wasm' : 'cpu';
}

/**
 * The native products, convolutions and per-channel reductions and broadcasts of a backend.
 * Each replaces the project's kernel of the same name on that backend (or the stock one) and
 * hands the cases it skips (dtypes, NCHW, other axes and shapes) to it, so the fallback is the project's kernel, not tfjs's. Built once: the registry
 * recognizes an installed patch by identity.
 */
function nativePatches(backendName: 'wasm' | 'cpu'): KernelPatch[] {
  return [...nativeMatMulPatches(backendName), ...nativeConv2dPatches(backendName), ...nativeChannelPatches(backendName)].map((native) => {
    const own = ALL_PATCHES.find((p) => p.backendName === backendName && p.kernelName === native.kernelName);
    return own ? { ...native, build: (stock: KernelFn | undefined) => native.build(own.build(stock)) } : native;
  });
}
let nativeCache: Record<'wasm' | 'cpu', KernelPatch[]> | null = null;
const nativePatchesOf = (backendName: 'wasm' | 'cpu'): KernelPatch[] => (nativeCache ??= { wasm: nativePatches('wasm'), cpu: nativePatches('cpu') })[backendName];

const ALL_PATCHES: KernelPatch[] = [
  ...matMulPatches,
  ...conv2dPatches,
  ...wasmConv2dPatches,
  ...conv2dBackpropFilterPatches,
  ...conv2dBackpropInputPatches,
  ...depthwiseConv2dGradPatches,
  ...maxPoolGradPatches,
  ...wasmPoolPatches,
  ...tilePatches,
  ...batchNormPatches,
  ...batchNormGradPatches,
  ...leadingAxisReducePatches,
  ...identityPatches,
  ...broadcastBinaryPatches,
  ...activationPatches,
  ...addCheckedPatches,
];

/** One replaced or added kernel, as the environment report lists it. */
export interface KernelReplacement {
  /** tfjs kernel name (or, for a gradient, `"gradient of <kernel>"`). */
  kernel: string;
  /** Backend it applies to (`"all"` for a gradient, which tfjs shares across backends). */
  backend: string;
  /** What it does differently from the stock kernel. */
  description: string;
}

/** The replacement kernels available for a backend (installed or not). */
export function fastKernelPatches(backendName: FastKernelBackend): KernelPatch[] {
  if (backendName === 'native' || backendName === 'native-cpu') {
    const base = tfjsBackendOf(backendName);
    const native = nativePatchesOf(base);
    const names = new Set(native.map((p) => p.kernelName));
    return [...ALL_PATCHES.filter((p) => p.backendName === base && !names.has(p.kernelName)), ...native];
  }
  return ALL_PATCHES.filter((p) => p.backendName === backendName);
}

/**
 * Registers the replacement kernels for `backendName` (`"wasm"` or `"cpu"`), and the fused
 * BatchNorm, fused matMul and conv2d, Sum and Mean gradients that use them, the softmax
 * cross-entropy gradient that skips the labels', and BatchNormalization's training step as one
 * differentiated op (batchNormLayer.ts). Idempotent; the stock kernels stay reachable for the cases
 * a replacement does not cover, and `uninstallFastKernels` restores them.
 */
export function installFastKernels(backendName: FastKernelBackend): KernelReplacement[] {
  if (!FAST_KERNEL_BACKENDS.includes(backendName)) {
    throw new Error(`installFastKernels: backendName must be one of ${FAST_KERNEL_BACKENDS.map((b) => `"${b}"`).join(', ')}; got ${JSON.stringify(backendName)}.`);
  }
  // Before anything is registered: without the addon, "native" changes nothing.
  if (backendName === 'native' || backendName === 'native-cpu') nativeAddon(`installFastKernels("${backendName}")`);
  // Before our patches, so that the stock kernels they replace and restore note their attributes.
  noteFusedAttrsEverywhere();
  installKernels(fastKernelPatches(backendName));
  installGradients([batchNormGradientPatch, ...fusedGradientPatches, ...reduceGradientPatches, softmaxCrossEntropyGradientPatch]);
  installBatchNormLayer();
  return installedFastKernels(tfjsBackendOf(backendName));
}

/**
 * Restores the stock kernels of one backend, or of every backend when left out, and frees the
 * cached derived weights. The gradient replacements are removed once no backend uses them.
 */
export function uninstallFastKernels(backendName?: FastKernelBackend): void {
  uninstallKernels(backendName === undefined ? undefined : tfjsBackendOf(backendName));
  // The fused-product gradient is gone with the last backend's kernels: so are its notes.
  if (listInstalledKernels().length === 0) {
    restoreFusedKernels();
    restoreBatchNormLayer();
  }
  clearWeightCache();
  releaseNativeScratch();
}

/** The replacements currently installed, optionally for one backend. */
export function installedFastKernels(backendName?: string): KernelReplacement[] {
  const kernels = listInstalledKernels(backendName).map((p) => ({ kernel: p.kernelName, backend: p.backendName, description: p.description }));
  const gradients = listInstalledGradients().map((g: GradientPatch) => ({ kernel: `gradient of ${g.kernelName}`, backend: 'all', description: g.description }));
  const layers = batchNormLayerInstalled() ? [{ kernel: BATCH_NORM_LAYER, backend: 'all', description: BATCH_NORM_LAYER_DESCRIPTION }] : [];
  return [...kernels, ...(kernels.length > 0 ? [...gradients, ...layers] : [])];
}

export { clearWeightCache, weightCacheSize } from './weightCache';
export { checkNativeThreads, loadNativeBlas, setNativeThreads, coreCount, NATIVE_ADDON_ENV_VAR } from './nativeBlas';
export type { CheckNativeThreadsArgs, NativeAddon, NativeBlasInfo, NativeStatus, LoadNativeBlasArgs } from './nativeBlas';
export { nativeScratchSize, releaseNativeScratch } from './nativeConv2d';
export { BATCH_NORM_GRAD } from './batchNormGrad';
export { BATCH_NORM_LAYER } from './batchNormLayer';
export { addChecked, ADD_CHECKED } from '../../core/addChecked';
export type { CheckedSum } from '../../core/addChecked';
