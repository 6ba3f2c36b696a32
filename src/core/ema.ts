import * as tf from '@tensorflow/tfjs';

/**
 * Polyak averaging's swap: puts each variable's EMA into the variable and the trained value into
 * the shadow; calling it again swaps back, bit for bit (values are moved, not recomputed).
 * Variables without a shadow (never updated yet) are their own average and stay as they are.
 */
export function swapAverages(slots: readonly { variable: tf.Variable; ema: tf.Variable | null }[]): void {
  for (const { variable, ema } of slots) {
    if (ema === null) continue;
    const trained = tf.clone(variable);
    variable.assign(ema);
    ema.assign(trained);
    trained.dispose();
  }
}
