import * as tf from '@tensorflow/tfjs';
import { GradientPatch, KernelFn } from './registry';

/**
 * The gradients of tfjs's fused ops (`tf.fused.matMul`, what every Dense layer runs, and
 * `tf.fused.conv2d`, what every Conv2D layer runs), with each input's gradient computed only
 * when backpropagation asks for it.
 *
 * tfjs builds both with `customGrad`, whose gradient function computes the gradients of every
 * input up front: for a product `dy · Wᵀ` for the layer's input, `xᵀ · dy` for the weight, the
 * bias sum. In the first layer of a network the input is the data: the engine prunes it from
 * backpropagation and throws its gradient away, but only after it was computed. In the MLP
 * 784-256-256-10 that wasted product is a quarter of a training step's multiply-adds (64 x 256
 * x 784); in the CNN it is the first convolution's input gradient. A gradient registered under
 * the op's scope name (`fusedMatMul__op`, `fusedConv2d__op`) replaces the custom one (the engine
 * looks registered gradients up first, `addTapeNode`) and returns one closure per input, which
 * the engine calls only for inputs it needs, as for any other kernel.
 *
 * The custom ops save their tensors (`[a, b, y, bias]`, `[filter, x, y, bias]`) but not their
 * attributes: a product's transposes (square operands make them ambiguous from shapes: a
 * 256 x 256 weight reads the same transposed), a convolution's strides and padding. So every
 * backend's `_FusedMatMul` and `FusedConv2D` kernel notes its attributes by output: wrapped by
 * {@link noteFusedAttrsEverywhere} when the fast kernels are installed, for every backend
 * registered by then (our cpu replacements are wrapped the same way). For an output of a kernel
 * registered later, a product's transposes follow from the shapes where they allow one reading;
 * otherwise the gradient fails with a named error rather than guess. Under a gradient tape tfjs
 * fuses only linear ops (`shouldFuse`), so there is no activation to differentiate.
 *
 * Exact: the same products and convolutions as tfjs's own gradients (tfjs-core
 * `ops/fused/mat_mul.ts`, `ops/fused/conv2d.ts`).
 */

/** The custom ops' scope names, under which the engine looks their gradients up. */
export const FUSED_MAT_MUL_OP = 'fusedMatMul__op';
export const FUSED_CONV_2D_OP = 'fusedConv2d__op';
/** The kernels whose attributes the gradients need. */
const NOTED_KERNELS = ['_FusedMatMul', 'FusedConv2D'];

/** The attributes of fused kernels' outputs, by output data. */
const noted = new WeakMap<object, tf.NamedAttrMap>();

/** Marks a kernel function that already notes its attributes. */
const NOTES_ATTRS = Symbol('tfjs-accumulate notes fused attributes');

/** Wraps a fused kernel so that its output remembers the attributes it was computed with. */
export function notingAttrs(kernel: KernelFn): KernelFn {
  const wrapped = (args: Parameters<KernelFn>[0]) => {
    const out = kernel(args) as tf.TensorInfo;
    noted.set(out.dataId, args.attrs ?? {});
    return out;
  };
  return Object.assign(wrapped, { [NOTES_ATTRS]: true });
}

/** The configs {@link noteFusedAttrsEverywhere} wrapped, to put back exactly. */
const originals = new Map<string, { original: tf.KernelConfig; wrapped: tf.KernelConfig }>();

/**
 * Wraps the fused kernels of every registered backend that do not note their attributes yet.
 * Run before our patches are installed, so that the stock kernels they replace (and restore on
 * uninstall) are the noting ones. The wrapper only adds a WeakMap entry per call.
 */
export function noteFusedAttrsEverywhere(): void {
  for (const backendName of Object.keys(tf.engine().registryFactory)) {
    for (const kernelName of NOTED_KERNELS) {
      const config = tf.getKernel(kernelName, backendName);
      if (!config || NOTES_ATTRS in config.kernelFunc) continue;
      const wrapped = { ...config, kernelFunc: notingAttrs(config.kernelFunc as unknown as KernelFn) as unknown as tf.KernelFunc };
      tf.unregisterKernel(kernelName, backendName);
      tf.registerKernel(wrapped);
      originals.set(`${backendName}/${kernelName}`, { original: config, wrapped });
    }
  }
}

/** Puts back every kernel that {@link noteFusedAttrsEverywhere} wrapped and that is still the wrapper. */
export function restoreFusedKernels(): void {
  for (const [key, { original, wrapped }] of originals) {
    if (tf.getKernel(original.kernelName, original.backendName) === wrapped) {
      tf.unregisterKernel(original.kernelName, original.backendName);
      tf.registerKernel(original);
    }
    originals.delete(key);
  }
}

interface Transposes {
  transposeA: boolean;
  transposeB: boolean;
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
  const attrs = noted.get(y.dataId);
  if (attrs) return { transposeA: attrs.transposeA === true, transposeB: attrs.transposeB === true };
  const candidates = readings(a.shape, b.shape, y.shape);
  if (candidates.length !== 1) {
    throw new Error(
      `tfjs-accumulate: the gradient of a fused matMul of shapes [${a.shape}] and [${b.shape}] cannot tell which operand was transposed: ` +
        `the "${tf.getBackend()}" backend's _FusedMatMul was registered after the fast kernels were installed. Call installFastKernels() again (it notes every backend's fused ops), or uninstallFastKernels().`,
    );
  }
  return candidates[0];
}

/**
 * The gradient of a bias added to `dy`'s shape: sum over the broadcast axes, reshaped to the
 * bias's shape only where the sum does not have it already (a reshape is a kernel dispatch).
 */
function biasGradient(bias: tf.Tensor, dy: tf.Tensor): tf.Tensor {
  const axes = tf.backend_util.getReductionAxes(bias.shape, dy.shape);
  if (axes.length === 0) return tf.reshape(dy, bias.shape);
  const summed = tf.sum(dy, axes);
  return tf.util.arraysEqual(summed.shape, bias.shape) ? summed : tf.reshape(summed, bias.shape);
}

/**
 * `dy` in the kernel's output shape: as it is when it has that shape already, as tfjs's own
 * gradients reshape it always. Every reshape skipped is one kernel dispatch less per layer and
 * step; the kernels read the same values.
 */
function inKernelShape(dy: tf.Tensor, y: tf.Tensor): tf.Tensor {
  return tf.util.arraysEqual(dy.shape, y.shape) ? dy : tf.reshape(dy, y.shape);
}

/**
 * `dy` in a shape the products accept: {@link inKernelShape}, or as it is when it is a matrix
 * (rank 2: the product broadcasts it over the saved operands' batch axis of 1).
 */
function productOperand(dy: tf.Tensor, y: tf.Tensor): tf.Tensor {
  return dy.rank === 2 ? dy : inKernelShape(dy, y);
}

function fusedMatMulGradient(): tf.GradConfig {
  return {
    kernelName: FUSED_MAT_MUL_OP,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved?: tf.Tensor[]) => {
      const [a, b, y, bias] = saved as tf.Tensor3D[];
      const { transposeA, transposeB } = transposesOf(a, b, y);
      // The op reshapes its result after the kernel; a matrix dy (no batch axes) needs no
      // reshape back: broadcast against the operands' batch axis of 1, each product comes out
      // in its operand's shape.
      const d = () => productOperand(dy as tf.Tensor, y) as tf.Tensor3D;
      const grads: Record<string, () => tf.Tensor> = {
        0: () => (transposeA ? tf.matMul(b, d(), transposeB, true) : tf.matMul(d(), b, false, !transposeB)),
        1: () => (transposeB ? tf.matMul(d(), a, true, transposeA) : tf.matMul(a, d(), !transposeA, false)),
      };
      if (bias) grads[2] = () => biasGradient(bias, dy as tf.Tensor);
      return grads;
    },
  };
}

function fusedConv2dGradient(): tf.GradConfig {
  return {
    kernelName: FUSED_CONV_2D_OP,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved?: tf.Tensor[]) => {
      const [filter, x, y, bias] = saved as tf.Tensor4D[];
      const attrs = noted.get(y.dataId);
      if (!attrs) {
        throw new Error(
          `tfjs-accumulate: the gradient of a fused conv2d computed on the "${tf.getBackend()}" backend has no record of its strides and padding: ` +
            'its FusedConv2D kernel was registered after the fast kernels were installed. Call installFastKernels() again, or uninstallFastKernels().',
        );
      }
      // As tfjs's own gradient: NHWC, dilation 1, and the op's strides and padding.
      if ((attrs.dataFormat ?? 'NHWC') !== 'NHWC') throw new Error(`Error in gradient of fused conv2D: got dataFormat of ${attrs.dataFormat} but only NHWC is currently supported.`);
      const dilations = attrs.dilations as number | [number, number];
      if (!tf.backend_util.tupleValuesAreOne(dilations ?? 1)) throw new Error(`Error in gradient of fused conv2D: dilation rates greater than 1 are not yet supported in gradients. Got dilations '${dilations}'`);
      const strides = attrs.strides as [number, number];
      const pad = attrs.pad as 'valid' | 'same' | number;
      const d = () => inKernelShape(dy as tf.Tensor, y) as tf.Tensor4D;
      const grads: Record<string, () => tf.Tensor> = {
        0: () => tf.engine().runKernel('Conv2DBackpropInput', { dy: d(), filter }, { strides, pad, dataFormat: 'NHWC', inputShape: x.shape }) as tf.Tensor,
        1: () => tf.engine().runKernel('Conv2DBackpropFilter', { x, dy: d() }, { strides, pad, dataFormat: 'NHWC', filterShape: filter.shape }) as tf.Tensor,
      };
      if (bias) grads[2] = () => biasGradient(bias, d());
      return grads;
    },
  };
}

/** The gradient patches of this file. */
export const fusedGradientPatches: GradientPatch[] = [
  {
    kernelName: FUSED_MAT_MUL_OP,
    description: "fused matMul (Dense) gradient: each input's product only when backpropagation needs it (tfjs computes the first layer's input gradient and drops it)",
    build: () => fusedMatMulGradient(),
  },
  {
    kernelName: FUSED_CONV_2D_OP,
    description: "fused conv2d (Conv2D) gradient: each input's gradient only when backpropagation needs it (tfjs computes the first layer's input gradient and drops it)",
    build: () => fusedConv2dGradient(),
  },
];
