import * as tf from '@tensorflow/tfjs';

/**
 * Installs and removes the project's replacement kernels in tfjs's global kernel registry.
 *
 * tfjs looks kernels up by `(kernelName, backendName)` on every op, so swapping an entry changes
 * what every later op runs, for every model. Each install remembers the entry it replaced, so
 * `uninstallKernels` puts back exactly what was there, and installing twice does nothing.
 */

/** The arguments tfjs passes to a kernel function. */
export interface KernelArgs {
  inputs: tf.NamedTensorInfoMap;
  backend: unknown;
  attrs?: tf.NamedAttrMap;
}

/** A kernel function as tfjs calls it. */
export type KernelFn = (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[];

/** One replacement kernel: what it replaces and how to build it from the stock kernel. */
export interface KernelPatch {
  /** The tfjs kernel name, e.g. `"Conv2DBackpropFilter"`. */
  kernelName: string;
  /** The backend it is registered for: `"wasm"` or `"cpu"`. */
  backendName: string;
  /** One line for the environment report: what the replacement does differently. */
  description: string;
  /**
   * Builds the kernel function. `stock` is the kernel that was registered before (undefined
   * when the backend has none, as wasm has no `Conv2DBackpropFilter`): replacements hand the
   * cases they do not cover to it.
   */
  build(stock: KernelFn | undefined): KernelFn;
}

/** A gradient replacement: tfjs keeps one gradient per kernel name, shared by all backends. */
export interface GradientPatch {
  kernelName: string;
  description: string;
  build(stock: tf.GradConfig | undefined): tf.GradConfig;
}

interface Installed {
  patch: KernelPatch;
  /** The config that was registered before ours, to restore on uninstall. */
  previous: tf.KernelConfig | undefined;
}

const installedKernels = new Map<string, Installed>();
const installedGradients = new Map<string, { patch: GradientPatch; previous: tf.GradConfig | undefined }>();

const key = (kernelName: string, backendName: string): string => `${backendName}/${kernelName}`;

/**
 * Registers each patch (unregistering the stock kernel first). Patches already installed are
 * left alone, so calling this again is harmless; a different patch installed for the same
 * kernel (the JS cpu product where the native one is asked for, or back) is replaced, and the
 * stock kernel it had replaced is what the new patch wraps.
 *
 * @returns The patches that were newly installed by this call.
 */
export function installKernels(patches: KernelPatch[]): KernelPatch[] {
  const added: KernelPatch[] = [];
  for (const patch of patches) {
    const k = key(patch.kernelName, patch.backendName);
    const existing = installedKernels.get(k);
    if (existing?.patch === patch) continue;
    if (existing) {
      tf.unregisterKernel(patch.kernelName, patch.backendName);
      if (existing.previous) tf.registerKernel(existing.previous);
      installedKernels.delete(k);
    }
    const previous = tf.getKernel(patch.kernelName, patch.backendName);
    const stock = previous ? (previous.kernelFunc as unknown as KernelFn) : undefined;
    if (previous) tf.unregisterKernel(patch.kernelName, patch.backendName);
    tf.registerKernel({
      kernelName: patch.kernelName,
      backendName: patch.backendName,
      kernelFunc: patch.build(stock) as unknown as tf.KernelFunc,
      // The stock kernel's setup (e.g. binding its wasm function) must still run if the backend
      // is ever re-initialized, because our kernel may delegate to it.
      setupFunc: previous?.setupFunc,
      disposeFunc: previous?.disposeFunc,
    });
    installedKernels.set(k, { patch, previous });
    added.push(patch);
  }
  return added;
}

/** Registers gradient replacements, remembering the gradients they replace. Idempotent. */
export function installGradients(patches: GradientPatch[]): GradientPatch[] {
  const added: GradientPatch[] = [];
  for (const patch of patches) {
    if (installedGradients.has(patch.kernelName)) continue;
    const previous = tf.getGradient(patch.kernelName);
    tf.registerGradient(patch.build(previous));
    installedGradients.set(patch.kernelName, { patch, previous });
    added.push(patch);
  }
  return added;
}

/**
 * Restores the stock kernels of one backend (or of all backends when `backendName` is left
 * out). Gradient replacements are restored only when no backend has kernels of ours left,
 * because a gradient is shared by every backend.
 */
export function uninstallKernels(backendName?: string): void {
  for (const [k, { patch, previous }] of [...installedKernels]) {
    if (backendName !== undefined && patch.backendName !== backendName) continue;
    if (tf.getKernel(patch.kernelName, patch.backendName)) tf.unregisterKernel(patch.kernelName, patch.backendName);
    if (previous) tf.registerKernel(previous);
    installedKernels.delete(k);
  }
  if (installedKernels.size === 0) {
    for (const [name, { previous }] of [...installedGradients]) {
      if (previous) tf.registerGradient(previous);
      else if (tf.getGradient(name)) tf.unregisterGradient(name);
      installedGradients.delete(name);
    }
  }
}

/** The kernel patches currently installed, optionally for one backend. */
export function listInstalledKernels(backendName?: string): KernelPatch[] {
  return [...installedKernels.values()]
    .map((i) => i.patch)
    .filter((p) => backendName === undefined || p.backendName === backendName);
}

/** The gradient patches currently installed. */
export function listInstalledGradients(): GradientPatch[] {
  return [...installedGradients.values()].map((i) => i.patch);
}

/**
 * The stock kernel function for `(kernelName, backendName)`: the one our patch replaced, or the
 * registered one when nothing of ours is installed. Kernels use it to compose stock pieces
 * (a transpose, a matMul) without going through the engine.
 */
export function stockKernel(kernelName: string, backendName: string): KernelFn {
  const installed = installedKernels.get(key(kernelName, backendName));
  const config = installed ? installed.previous : tf.getKernel(kernelName, backendName);
  if (!config) throw new Error(`tfjs-accumulate: the ${backendName} backend has no "${kernelName}" kernel.`);
  return config.kernelFunc as unknown as KernelFn;
}
