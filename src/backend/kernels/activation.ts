import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { KernelArgs, KernelFn, KernelPatch } from './registry';

/**
 * `Relu` and `Step` (the ReLU gradient's mask) on cpu as plain loops. The stock kernels call a
 * generic closure per element through a shared template (~20 ns per element); these run the
 * same arithmetic, NaN included, in a tight loop.
 */
function unaryCpu(op: (x: Float32Array, out: Float32Array, attrs: tf.NamedAttrMap) => void): (stock: KernelFn | undefined) => KernelFn {
  return (stock) => (args: KernelArgs) => {
    const backend = args.backend as CpuBackend;
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (x.dtype !== 'float32') return (stock as KernelFn)(args);
    const values = cpuValues(backend, x);
    const out = new Float32Array(values.length);
    op(values, out, args.attrs ?? {});
    return backend.makeTensorInfo(x.shape, 'float32', out);
  };
}

/** max(0, x), with NaN passed through as Math.max does. */
function relu(x: Float32Array, out: Float32Array): void {
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    out[i] = v > 0 || v !== v ? v : 0;
  }
}

/** 1 where x > 0, `alpha` elsewhere, NaN for NaN (tfjs's Step). */
function step(x: Float32Array, out: Float32Array, attrs: tf.NamedAttrMap): void {
  const alpha = (attrs.alpha as number) ?? 0;
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    out[i] = v > 0 ? 1 : v !== v ? NaN : alpha;
  }
}

/** The patches of this file. */
export const activationPatches: KernelPatch[] = [
  { kernelName: 'Relu', backendName: 'cpu', description: 'a tight loop instead of a closure call per element', build: unaryCpu(relu) },
  { kernelName: 'Step', backendName: 'cpu', description: 'a tight loop instead of a closure call per element', build: unaryCpu(step) },
];
