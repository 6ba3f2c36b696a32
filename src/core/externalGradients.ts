import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from './errors';

const shapeText = (s: readonly number[]) => `[${s.join(', ')}]`;

/**
 * The variables and gradients of a micro-step whose gradients were computed elsewhere
 * (`addGradients`, `model.fit` through `AccumulatingOptimizer`), checked before anything is
 * added: every key names a registered variable, and every gradient is a live float32 tensor of
 * its variable's shape. Without the shape check a `[3]` gradient for a `[2, 3]` variable would be
 * broadcast into the sums, and a `[6]` one would fail at every later micro-step.
 *
 * @param varList The accumulator's fixed variables, or null to take the ones the keys name.
 */
export function externalGradients(owner: string, grads: tf.NamedTensorMap, varList: tf.Variable[] | null): { handed: tf.Variable[]; gradients: (tf.Tensor | null)[] } {
  const handed = varList ?? Object.keys(grads).map((name, i) => {
    const v = tf.engine().registeredVariables[name];
    if (v === undefined) throw argumentError(owner, `grads (key ${i})`, 'keyed by names of registered variables', verbatim(`"${name}"`));
    return v;
  });
  const gradients = handed.map((v) => {
    const g = grads[v.name] ?? null;
    if (g === null) return null;
    if (!(g instanceof tf.Tensor) || g.isDisposed) throw argumentError(owner, `grads["${v.name}"]`, 'a live tf.Tensor (or left out)', g);
    if (g.dtype !== 'float32' || g.shape.length !== v.shape.length || g.shape.some((d, k) => d !== v.shape[k])) {
      throw argumentError(owner, `grads["${v.name}"]`, `a float32 tensor of shape ${shapeText(v.shape)}, the shape of its variable`, verbatim(`a ${g.dtype} tensor of shape ${shapeText(g.shape)}`));
    }
    return g;
  });
  return { handed, gradients };
}
