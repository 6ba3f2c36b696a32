import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from './errors';

/** Which variables an accumulator trains: a user's varList, checked, or the registered trainable ones. */

/** A tf.Variable, or a tfjs-layers `LayerVariable` (anything whose `read()` gives the Variable). */
export type TrainableVariable = tf.Variable | { read(): tf.Tensor };

/** The variables `optimizer.minimize` would train: every registered trainable variable. */
export function defaultVarList(owner: string): tf.Variable[] {
  const vars = Object.values(tf.engine().registeredVariables).filter((v) => v.trainable);
  if (vars.length === 0) {
    throw argumentError(owner, 'varList', 'given, or left out only once a model exists (no trainable variables are registered yet)', undefined);
  }
  return vars;
}

/** Checks a user's varList and unwraps LayerVariables. */
export function checkVarList(owner: string, varList: unknown): tf.Variable[] {
  if (!Array.isArray(varList) || varList.length === 0) {
    throw argumentError(owner, 'varList', 'a non-empty array of trainable tf.Variables (or model.trainableWeights), or left out', varList);
  }
  const seen = new Set<string>();
  return varList.map((item: TrainableVariable, i) => {
    const v = item instanceof tf.Variable ? item : typeof item?.read === 'function' ? item.read() : item;
    if (!(v instanceof tf.Variable)) throw argumentError(owner, `varList[${i}]`, 'a tf.Variable or a LayerVariable', item);
    if (v.isDisposed || tf.engine().registeredVariables[v.name] !== v) {
      throw argumentError(owner, `varList[${i}]`, 'a live, registered tf.Variable', verbatim(`the unknown or disposed variable "${v.name}"`));
    }
    if (!v.trainable) throw argumentError(owner, `varList[${i}]`, 'a trainable variable', verbatim(`the non-trainable variable "${v.name}"`));
    if (seen.has(v.name)) throw argumentError(owner, `varList[${i}]`, 'listed once', verbatim(`the variable "${v.name}" a second time`));
    seen.add(v.name);
    return v;
  });
}
