import * as tf from '@tensorflow/tfjs';
import { GradientPatch, listInstalledKernels } from './registry';

/**
 * Gradients of `Sum` and `Mean` as one broadcast.
 *
 * tfjs writes them as `reshape(dy) * ones(x.shape)` (and `/ n` for the mean): a fill, a
 * broadcasting multiply and a division, three full-size passes, for what is a broadcast of a
 * small tensor. BatchNorm in training mode takes the mean and the variance of every
 * activation, so each BatchNorm layer pays this three times per step. Here the small tensor is
 * divided first and then tiled once (`tf.broadcastTo`, our block-copy `Tile`). The values are
 * bit-identical: `dy · 1 = dy`, and `(dy · 1) / n = dy / n` element by element.
 *
 * Used only where our `Tile` is installed for the active backend (the stock wasm `Tile` is
 * slower than the three passes); elsewhere tfjs's gradient runs.
 */
function usesFastTile(): boolean {
  return listInstalledKernels(tf.getBackend()).some((p) => p.kernelName === 'Tile');
}

function broadcastGradient(kernelName: 'Sum' | 'Mean', stock: tf.GradConfig | undefined): tf.GradConfig {
  return {
    kernelName,
    inputsToSave: ['x'],
    gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[], attrs: tf.NamedAttrMap) => {
      const g = dy as tf.Tensor;
      const [x] = saved;
      if (!usesFastTile() || g.dtype !== 'float32') {
        if (!stock?.gradFunc) throw new Error(`tfjs-accumulate: no stock gradient for ${kernelName}.`);
        return stock.gradFunc(dy, saved, attrs);
      }
      const axes = tf.util.parseAxisParam(attrs.axis as number | number[], x.shape);
      const expanded = x.shape.map((d, i) => (axes.includes(i) ? 1 : d));
      const reduceSize = axes.reduce((n, a) => n * x.shape[a], 1);
      return {
        x: () => {
          // An empty x has an empty gradient; tf.broadcastTo would not make one (a target axis of
          // 0 asks for 0 repetitions, which it reads as "no broadcast" and returns its input).
          if (x.size === 0) return tf.zeros(x.shape);
          const small = tf.reshape(g, expanded);
          return tf.broadcastTo(kernelName === 'Mean' ? tf.div(small, reduceSize) : small, x.shape);
        },
      };
    },
  };
}

/** The gradient patches of this file. */
export const reduceGradientPatches: GradientPatch[] = [
  { kernelName: 'Sum', description: 'Sum gradient: one broadcast (Tile) instead of a fill and a multiply, where our Tile is installed', build: (s) => broadcastGradient('Sum', s) },
  { kernelName: 'Mean', description: 'Mean gradient: one broadcast (Tile) instead of a fill, a multiply and a divide, where our Tile is installed', build: (s) => broadcastGradient('Mean', s) },
];
