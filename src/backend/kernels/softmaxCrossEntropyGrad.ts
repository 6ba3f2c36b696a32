import * as tf from '@tensorflow/tfjs';
import { GradientPatch } from './registry';

/**
 * The gradient of `tf.losses.softmaxCrossEntropy`, each input's only when backpropagation asks
 * for it.
 *
 * tfjs builds the loss with `customGrad`, whose gradient function returns the gradients of both
 * inputs computed up front: `dy · (labels − softmax)` for the labels and `dy · (softmax − labels)`
 * for the logits. Labels are data, so the engine throws the first away, after five kernels
 * (reshape, cast, exp, subtract, multiply) that ran for nothing on every training step of every
 * classifier. At a micro-batch of 16 those kernels cost their dispatch, not their arithmetic. A
 * gradient registered under the op's scope name (`softmaxCrossEntropy__op`) replaces the custom
 * one (the engine looks registered gradients up first) and returns one closure per input, which
 * the engine calls only for the inputs it needs, as `fusedGradients.ts` does for Dense and
 * Conv2D.
 *
 * Exact: the same kernels in the same order as tfjs-core's gradient
 * (`ops/losses/softmax_cross_entropy.ts`), minus a `cast` of labels that are float32 already
 * (a copy). The op saves `[labels, logResult]`, where `logResult = logits − logSumExp(logits)`
 * along the last axis, the only axis tfjs supports.
 */

/** The custom op's scope name, under which the engine looks its gradient up. */
export const SOFTMAX_CROSS_ENTROPY_OP = 'softmaxCrossEntropy__op';

function asFloat(t: tf.Tensor): tf.Tensor {
  return t.dtype === 'float32' ? t : tf.cast(t, 'float32');
}

function softmaxCrossEntropyGradient(): tf.GradConfig {
  return {
    kernelName: SOFTMAX_CROSS_ENTROPY_OP,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved?: tf.Tensor[]) => {
      const [labels, logResult] = saved as tf.Tensor[];
      const g = dy as tf.Tensor;
      // dy has the loss's shape, the logits' without their last axis: give it that axis back.
      const upstream = () => tf.reshape(g, tf.backend_util.expandShapeToKeepDim(g.shape, [logResult.rank - 1]));
      return {
        0: () => tf.mul(upstream(), tf.sub(asFloat(labels), tf.exp(logResult))),
        1: () => tf.mul(upstream(), tf.sub(tf.exp(logResult), asFloat(labels))),
      };
    },
  };
}

/** The gradient patch of this file. */
export const softmaxCrossEntropyGradientPatch: GradientPatch = {
  kernelName: SOFTMAX_CROSS_ENTROPY_OP,
  description: 'softmax cross-entropy gradient: the logits\' only, unless the labels\' is asked for (tfjs computes both and drops the labels\')',
  build: () => softmaxCrossEntropyGradient(),
};
