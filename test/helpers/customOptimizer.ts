import * as tf from '@tensorflow/tfjs';

/**
 * An optimizer that is not one of tfjs's: plain steps of a rate kept in a private field, so it
 * has no numeric `learningRate`, and an async `getWeights`/`setWeights` of its own. The tests use
 * it for what only a custom optimizer reaches (the pending guard, weightDecay's check).
 */
export class FixedStepOptimizer extends tf.Optimizer {
  static get className(): string {
    return 'FixedStepOptimizer';
  }
  readonly #rate: number;

  constructor(rate: number) {
    super();
    this.#rate = rate;
  }

  applyGradients(variableGradients: tf.NamedTensorMap | { name: string; tensor: tf.Tensor }[]): void {
    const grads: tf.NamedTensorMap = Array.isArray(variableGradients) ? Object.fromEntries(variableGradients.map((g) => [g.name, g.tensor])) : variableGradients;
    tf.tidy(() => {
      for (const [name, g] of Object.entries(grads)) {
        if (g == null) continue;
        const v = tf.engine().registeredVariables[name];
        v.assign(tf.sub(v, tf.mul(g, this.#rate)));
      }
    });
    this.incrementIterations();
  }

  override async getWeights(): Promise<{ name: string; tensor: tf.Tensor }[]> {
    return [await this.saveIterations()];
  }

  override async setWeights(weightValues: { name: string; tensor: tf.Tensor }[]): Promise<void> {
    await this.extractIterations(weightValues);
  }

  getConfig(): tf.serialization.ConfigDict {
    return { rate: this.#rate };
  }
}
