import * as tf from '@tensorflow/tfjs';
import { GradientPatch, KernelFn } from './registry';

/**
 * The gradient of tfjs's fused product (`tf.fused.matMul`, what every Dense layer runs), with
 * one product per input computed only when backpropagation asks for it.
 *
 * tfjs builds the fused product with `customGrad`, whose gradient function computes the
 * gradients of every input up front: `dy · Wᵀ` for the layer's input, `xᵀ · dy` for the weight,
 * the bias sum. In the first layer of a network the input is the data: the engine prunes it from
 * backpropagation and throws its gradient away, but only after it was computed. In the MLP
 * 784-256-256-10 that wasted product is a quarter of a training step's multiply-adds (64 x 256
 * x 784). A gradient registered under the op's scope name (`fusedMatMul__op`) replaces the
 * custom one (the engine looks registered gradients up first, `addTapeNode`), and returns one
 * closure per input, which the engine calls only for inputs it needs, as for any other kernel.
 *
 * The custom op saves `[a, b, y, bias]` but not its transposes, and square operands make the
 * shapes ambiguous (a 256 x 256 weight reads the same transposed). So every backend's
 * `_FusedMatMul` kernel notes them by output: ours (wasm, cpu) and, wrapped by
 * {@link noteFusedTransposesEverywhere} when the kernels are installed, tfjs's own on every
 * backend registered by then. For a product computed by a kernel registered later the shapes
 * decide, and where they allow several readings the gradient fails with a named error rather
 * than guess. Under a gradient tape tfjs fuses only linear products (`shouldFuse`), so there is
 * no activation to differentiate.
 *
 * Exact: the same products as tfjs's own gradient (tfjs-core `ops/fused/mat_mul.ts`).
 */

/** The custom op's scope name, under which the engine looks its gradient up. */
export const FUSED_MAT_MUL_OP = 'fusedMatMul__op';

interface Transposes {
  transposeA: boolean;
  transposeB: boolean;
}

/** The transposes of fused products computed by our kernels, by output data. */
const noted = new WeakMap<object, Transposes>();

/** Marks a kernel function that already notes its transposes. */
const NOTES_TRANSPOSES = Symbol('tfjs-accumulate notes fused transposes');

/** Wraps a `_FusedMatMul` kernel so that its outputs remember their transposes. */
export function notingTransposes(kernel: KernelFn): KernelFn {
  const wrapped = (args: Parameters<KernelFn>[0]) => {
    const out = kernel(args) as tf.TensorInfo;
    const attrs = args.attrs as tf.NamedAttrMap;
    noted.set(out.dataId, { transposeA: attrs.transposeA === true, transposeB: attrs.transposeB === true });
    return out;
  };
  return Object.assign(wrapped, { [NOTES_TRANSPOSES]: true });
}

/**
 * Wraps the `_FusedMatMul` kernel of every registered backend that does not note its transposes
 * yet. Run before our patches are installed, so that the stock kernel they replace (and restore
 * on uninstall) is the noting one. The wrapper only adds a WeakMap entry per product.
 */
export function noteFusedTransposesEverywhere(): void {
  for (const backendName of Object.keys(tf.engine().registryFactory)) {
    const config = tf.getKernel('_FusedMatMul', backendName);
    if (!config || NOTES_TRANSPOSES in config.kernelFunc) continue;
    const wrapped = { ...config, kernelFunc: notingTransposes(config.kernelFunc as unknown as KernelFn) as unknown as tf.KernelFunc };
    tf.unregisterKernel('_FusedMatMul', backendName);
    tf.registerKernel(wrapped);
    originals.set(backendName, { original: config, wrapped });
  }
}

/** The configs {@link noteFusedTransposesEverywhere} wrapped, to put back exactly. */
const originals = new Map<string, { original: tf.KernelConfig; wrapped: tf.KernelConfig }>();

/** Puts back every `_FusedMatMul` kernel that {@link noteFusedTransposesEverywhere} wrapped and that is still the wrapper. */
export function restoreFusedKernels(): void {
  for (const [backendName, { original, wrapped }] of originals) {
    if (tf.getKernel('_FusedMatMul', backendName) === wrapped) {
      tf.unregisterKernel('_FusedMatMul', backendName);
      tf.registerKernel(original);
    }
    originals.delete(backendName);
  }
}

/** The readings of (a, b) consistent with the output shape (rank-3 operands, as the op saves them). */
function readings(a: number[], b: number[], y: number[]): Transposes[] {
  const out: Transposes[] = [];
  for (const transposeA of [false, true]) {
    for (const transposeB of [false, true]) {
      const [m, k] = transposeA ? [a[2], a[1]] : [a[1], a[2]];
      const [kb, n] = transposeB ? [b[2], b[1]] : [b[1], b[2]];
      if (k === kb && m === y[1] && n === y[2]) out.push({ transposeA, transposeB });
    }
  }
  return out;
}

function transposesOf(a: tf.Tensor, b: tf.Tensor, y: tf.Tensor): Transposes {
  const known = noted.get(y.dataId);
  if (known) return known;
  const candidates = readings(a.shape, b.shape, y.shape);
  if (candidates.length !== 1) {
    throw new Error(
      `tfjs-accumulate: the gradient of a fused matMul of shapes [${a.shape}] and [${b.shape}] cannot tell which operand was transposed: ` +
        `the "${tf.getBackend()}" backend's _FusedMatMul was registered after the fast kernels were installed. Call installFastKernels() again (it notes every backend's products), or uninstallFastKernels().`,
    );
  }
  return candidates[0];
}

function fusedMatMulGradient(): tf.GradConfig {
  return {
    kernelName: FUSED_MAT_MUL_OP,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved?: tf.Tensor[]) => {
      const [a, b, y, bias] = saved as tf.Tensor3D[];
      const { transposeA, transposeB } = transposesOf(a, b, y);
      // The op reshapes its result after the kernel: bring dy back to the kernel's shape.
      const d = () => tf.reshape(dy as tf.Tensor, y.shape) as tf.Tensor3D;
      const grads: Record<string, () => tf.Tensor> = {
        0: () => (transposeA ? tf.matMul(b, d(), transposeB, true) : tf.matMul(d(), b, false, !transposeB)),
        1: () => (transposeB ? tf.matMul(d(), a, true, transposeA) : tf.matMul(a, d(), !transposeA, false)),
      };
      if (bias) {
        grads[2] = () => {
          const axes = tf.backend_util.getReductionAxes(bias.shape, y.shape);
          return tf.reshape(axes.length > 0 ? tf.sum(d(), axes) : d(), bias.shape);
        };
      }
      return grads;
    },
  };
}

/** The gradient patch of this file. */
export const fusedMatMulGradientPatch: GradientPatch = {
  kernelName: FUSED_MAT_MUL_OP,
  description: "fused matMul (Dense) gradient: each input's product only when backpropagation needs it (tfjs computes the first layer's input gradient and drops it)",
  build: () => fusedMatMulGradient(),
};
