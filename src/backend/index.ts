/**
 * `tfjs-accumulate/backend`: choosing a tfjs backend for this machine, describing the environment,
 * the fast kernels the project registers on the wasm and cpu backends (and, where the optional
 * native addon was built, the cpu backend's products in the system CBLAS), and saving models to
 * disk without tfjs-node (`fileSystem`). Separate from the package root because the kernels
 * patch tfjs's kernel registry and the backend choice probes optional Node packages; a user who
 * only wants the accumulator does not load either.
 */
export { selectBackend, describeEnvironment, BACKEND_PREFERENCES, BACKEND_ENV_VAR } from './selectBackend';
export type { BackendPreference, SelectBackendArgs, EnvironmentReport } from './selectBackend';
export { installFastKernels, uninstallFastKernels, installedFastKernels, FAST_KERNEL_BACKENDS, addChecked } from './kernels';
// The gradient patches, for the bench's A/B timing of each speed lever.
export { fusedGradientPatches } from './kernels/fusedGradients';
// For A/B timing of the wrapped BatchNormalization layer (npm run bench:levers); installFastKernels wraps it.
export { batchNormLayerInstalled, installBatchNormLayer, restoreBatchNormLayer } from './kernels/batchNormLayer';
export type { KernelReplacement, FastKernelBackend } from './kernels';
// The optional native kernels (native/, the system CBLAS): loading, threads, what BLAS it is.
export { loadNativeBlas, setNativeThreads, NATIVE_ADDON_ENV_VAR } from './kernels';
export type { NativeAddon, NativeBlasInfo, NativeStatus, LoadNativeBlasArgs } from './kernels';
export { measureNativeGemmPeak } from './kernels/nativePeak';
export type { NativeGemmPeak, NativeGemmPeakArgs } from './kernels/nativePeak';
export { measureSimdPeak } from './kernels/simdPeak';
export type { SimdPeak, SimdPeakArgs } from './kernels/simdPeak';
// model.save / tf.loadLayersModel to and from a folder, without tfjs-node's file:// handler.
export { fileSystem } from './fileSystem';
