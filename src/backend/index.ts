/**
 * `tfjs-accumulate/backend`: choosing a tfjs backend for this machine, describing the environment,
 * and the fast kernels the project registers on the wasm and cpu backends. Separate from the
 * package root because the kernels patch tfjs's kernel registry and the backend choice probes
 * optional Node packages; a user who only wants the accumulator does not load either.
 */
export { selectBackend, describeEnvironment, BACKEND_PREFERENCES, BACKEND_ENV_VAR } from './selectBackend';
export type { BackendPreference, SelectBackendArgs, EnvironmentReport } from './selectBackend';
export { installFastKernels, uninstallFastKernels, installedFastKernels, FAST_KERNEL_BACKENDS, addChecked } from './kernels';
// The gradient patches, for the bench's A/B timing of each speed lever.
export { fusedGradientPatches } from './kernels/fusedGradients';
export type { KernelReplacement, FastKernelBackend } from './kernels';
export { measureSimdPeak } from './kernels/simdPeak';
export type { SimdPeak, SimdPeakArgs } from './kernels/simdPeak';
