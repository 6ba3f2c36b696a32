import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from '../core/errors';
import { UnregisteredClassError } from './errors';

/**
 * The classes a worker needs to rebuild the model from its JSON. tfjs finds each `class_name`
 * of the topology (layers, initializers, regularizers, constraints) among the classes registered
 * with `tf.serialization.registerClass` in that thread; a worker knows tfjs's own, the project's
 * normalization layers, and those of the modules listed in `modules`. Checked in the worker
 * before tfjs tries, so that a missing custom class fails `create` by the option that fixes it
 * rather than with tfjs's "Unknown layer".
 */

/** A class named in a model's JSON topology, and the layer that uses it (null for a class that is not a layer's own). */
export interface ModelClass {
  className: string;
  layer: string | null;
}

/** Every class named in a `model.toJSON(null, false)` topology, each once, in the order found. */
export function modelClasses(topology: unknown): ModelClass[] {
  const found = new Map<string, ModelClass>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const { class_name: className, config } = node as { class_name?: unknown; config?: unknown };
    if (typeof className === 'string' && !found.has(className)) {
      const name = (config as { name?: unknown } | null | undefined)?.name;
      found.set(className, { className, layer: typeof name === 'string' ? name : null });
    }
    Object.values(node).forEach(walk);
  };
  walk(topology);
  return [...found.values()];
}

/**
 * Throws {@link UnregisteredClassError} for the first class of the topology that this thread
 * has not registered, naming the `modules` option, the class and its layer.
 *
 * @param modules The modules this thread imported for the model (resolved paths), for the message.
 */
export function checkModelClasses(owner: string, topology: unknown, modules: readonly string[]): void {
  const registered = tf.serialization.SerializationMap.getMap().classNameMap;
  const missing = modelClasses(topology).find((c) => !(c.className in registered));
  if (missing === undefined) return;
  const what = missing.layer === null ? `the class "${missing.className}"` : `the layer "${missing.layer}", of class "${missing.className}",`;
  const given = modules.length === 0 ? 'no module' : `${modules.map((m) => `"${m}"`).join(', ')}, which do not register it`;
  const error = argumentError(
    owner,
    'modules',
    `a list of modules that register every custom class of the model with tf.serialization.registerClass (each worker imports them, then rebuilds the model from its JSON): ${what} is known to no worker`,
    verbatim(given),
  );
  throw new UnregisteredClassError(error.message, missing.className);
}
