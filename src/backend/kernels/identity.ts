import * as tf from '@tensorflow/tfjs';
import { KernelArgs, KernelFn, KernelPatch } from './registry';

/**
 * `Identity` on wasm without copying.
 *
 * The tape and the optimizers clone tensors many times per step (72 clones in one step of a
 * small CNN), and the stock wasm kernel copies the data each time. tfjs tensors are immutable
 * (a Variable's `assign` swaps its data rather than writing into it), so, as the stock cpu
 * kernel and the wasm `Reshape` already do, the output can share the input's data with its
 * reference count raised.
 */
function identityWasm(stock: KernelFn | undefined): KernelFn {
  return (args: KernelArgs) => {
    const backend = args.backend as { incRef(dataId: object): void };
    const { x } = args.inputs as { x: tf.TensorInfo };
    if (x.dtype === 'string') return (stock as KernelFn)(args);
    backend.incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  };
}

/**
 * `Cast` to the dtype a tensor already has is an identity too. tfjs's `moments` casts every
 * BatchNorm input to float32, and the stock wasm kernel copies the activation to do it.
 */
function castWasm(stock: KernelFn | undefined): KernelFn {
  const identity = identityWasm(stock);
  return (args: KernelArgs) => {
    const { x } = args.inputs as { x: tf.TensorInfo };
    const { dtype } = args.attrs as unknown as tf.CastAttrs;
    return dtype === x.dtype && dtype !== 'string' ? identity(args) : (stock as KernelFn)(args);
  };
}

/** The patches of this file. */
export const identityPatches: KernelPatch[] = [
  { kernelName: 'Identity', backendName: 'wasm', description: 'shares the data (reference counted) instead of copying it', build: identityWasm },
  { kernelName: 'Cast', backendName: 'wasm', description: 'a cast to the same dtype shares the data instead of copying it', build: castWasm },
];
