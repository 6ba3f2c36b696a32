import * as tf from '@tensorflow/tfjs';
import { CpuBackend, cpuValues } from './cpuData';
import { gemm, transposeInto } from './gemm';
import { forwardGeometry, im2col } from './im2col';
import { biasAndActivation, knownActivation } from './matMul';
import { notingAttrs } from './fusedGradients';
import { KernelArgs, KernelFn, KernelPatch } from './registry';

/**
 * The forward 2-D convolution on cpu as one matrix product: `y[p, co] = patches[p, :] ·
 * W[:, co]`, the patches gathered once (im2col) and the product in the register-blocked JS
 * {@link gemm}. The stock kernel runs six nested loops with a store per multiply-add.
 * `FusedConv2D` (a convolution with bias and activation, what tfjs-layers calls) adds the stock
 * bias and activation kernels after it. NCHW and non-float inputs go to the stock kernels.
 */
type CpuWithDispose = CpuBackend & { disposeData(dataId: object): void };

/** The convolution into a new NHWC tensor, or null when the stock kernel should run. */
export function conv2dCpu(backend: CpuBackend, x: tf.TensorInfo, filter: tf.TensorInfo, attrs: tf.NamedAttrMap): tf.TensorInfo | null {
  const dataFormat = (attrs.dataFormat as string) ?? 'NHWC';
  if (dataFormat !== 'NHWC' || x.dtype !== 'float32' || filter.dtype !== 'float32') return null;
  const g = forwardGeometry(x, filter, attrs);
  const rows = g.batchSize * g.outHeight * g.outWidth;
  const depth = g.filterHeight * g.filterWidth * g.inChannels;
  const patches = new Float32Array(rows * depth);
  im2col(cpuValues(backend, x), g, patches);
  // The filter [kh, kw, ci, co] is the depth x co matrix; gemm reads it transposed.
  const filterT = new Float32Array(depth * g.outChannels);
  transposeInto(cpuValues(backend, filter), 0, depth, g.outChannels, filterT);
  const out = new Float32Array(rows * g.outChannels);
  gemm(patches, 0, filterT, 0, out, 0, rows, depth, g.outChannels);
  return backend.makeTensorInfo(g.outShape, 'float32', out);
}

function conv2dPatch(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const { x, filter } = args.inputs as { x: tf.TensorInfo; filter: tf.TensorInfo };
    return conv2dCpu(args.backend as CpuBackend, x, filter, args.attrs as tf.NamedAttrMap) ?? (stock as KernelFn)(args);
  };
}

function fusedConv2dPatch(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as CpuWithDispose;
    const { x, filter, bias, preluActivationWeights } = args.inputs as Record<string, tf.TensorInfo | undefined>;
    const attrs = args.attrs as tf.NamedAttrMap;
    const activation = (attrs.activation as string) ?? 'linear';
    if (!knownActivation(activation, preluActivationWeights)) return (stock as KernelFn)(args);
    const product = conv2dCpu(backend, x as tf.TensorInfo, filter as tf.TensorInfo, attrs);
    if (!product) return (stock as KernelFn)(args);
    return biasAndActivation('cpu', backend, product, bias, attrs, preluActivationWeights) as tf.TensorInfo;
  };
}

/** The patches of this file. */
export const conv2dPatches: KernelPatch[] = [
  { kernelName: 'Conv2D', backendName: 'cpu', description: 'im2col + register-blocked JS product instead of six nested loops', build: conv2dPatch },
  { kernelName: 'FusedConv2D', backendName: 'cpu', description: 'the same convolution, then the stock bias add and activation', build: (stock) => notingAttrs(fusedConv2dPatch(stock)) },
];
