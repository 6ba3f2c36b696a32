import * as tf from '@tensorflow/tfjs';

/**
 * The FLOPs of one training step, counted the same way for both peers so that GFLOP/s compare.
 *
 * Every dense and convolution layer does `positions × kernel size` multiply-adds per sample in
 * the forward pass (positions: 1 for a dense layer, output height × width for a convolution;
 * kernel size: inputs × outputs × filter area), 2 FLOPs each. Backpropagation does the same
 * again for the weight gradient, and again for the input gradient, except in the first such
 * layer: its input is the data, whose gradient nothing needs (PyTorch's autograd skips it).
 * So a step costs 2 × MACs × (3 − first layer's share). Elementwise work (bias, ReLU,
 * normalization, pooling, the loss, the update) is left out: it is O(activations), not
 * O(activations × fan-in), and a few percent of the arithmetic in these models.
 */
export interface StepFlops {
  /** Multiply-adds of the forward pass per sample. */
  forwardMacsPerSample: number;
  /** Of which the first weighted layer's. */
  firstLayerMacsPerSample: number;
  /** FLOPs of a training step (forward + backward) on `batch` samples. */
  trainingFlops: number;
}

/** Counts {@link StepFlops} from a built model's layer shapes. */
export function stepFlops(model: tf.LayersModel, batch: number): StepFlops {
  const perLayer: number[] = [];
  for (const layer of model.layers) {
    const kernel = layer.getWeights().find((w) => w.rank >= 2);
    if (!kernel) continue;
    const out = layer.outputShape as number[];
    const positions = out.slice(1, -1).reduce((a, b) => a * b, 1);
    perLayer.push(positions * kernel.size);
  }
  const forward = perLayer.reduce((a, b) => a + b, 0);
  const first = perLayer[0] ?? 0;
  return { forwardMacsPerSample: forward, firstLayerMacsPerSample: first, trainingFlops: 2 * batch * (3 * forward - first) };
}
