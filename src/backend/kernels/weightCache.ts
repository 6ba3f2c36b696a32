import * as tf from '@tensorflow/tfjs';
import { WasmBackend } from './wasmHeap';

/**
 * Keeps derived copies of weights (a transposed matrix, a flipped filter) alive for as long as
 * the weight's data lives.
 *
 * Why: XNNPACK packs a right-hand operand into its own layout when it first sees it and caches
 * the packed operator under that tensor's id. A backward pass that transposes or flips a weight
 * makes a new tensor every micro-step, so XNNPACK would re-transpose and re-pack the same
 * weight on every micro-step of an accumulation window, although the weight only changes once
 * per window. Caching the derived tensor per weight makes XNNPACK's own cache hit.
 *
 * Only the data of trainable variables is cached (those are the weights); anything else is
 * derived fresh and owned by the caller. An entry is freed at the first lookup after its
 * weight's data is gone (a Variable.assign replaces the data), so at most one stale copy per
 * weight outlives an update, and `clearWeightCache` frees everything.
 *
 * Note: the cached copies are backend memory that `tf.memory()` does not count (it counts the
 * engine's tensors); they are the size of the weights they derive from.
 */
interface Entry {
  backend: WasmBackend;
  derived: Map<string, tf.TensorInfo>;
}

const entries = new Map<object, Entry>();

/** The result of a lookup: dispose `info` only when `owned` is true. */
export interface Derived {
  info: tf.TensorInfo;
  owned: boolean;
}

/**
 * Returns `make()` for `source`, cached under `tag` while `source`'s data lives if `source` is
 * the data of a trainable variable.
 */
export function derivedWeight(backend: WasmBackend, source: tf.TensorInfo, tag: string, make: () => tf.TensorInfo): Derived {
  sweep();
  if (!isTrainableVariableData(source.dataId)) return { info: make(), owned: true };
  let entry = entries.get(source.dataId);
  if (!entry) {
    entry = { backend, derived: new Map() };
    entries.set(source.dataId, entry);
  }
  let info = entry.derived.get(tag);
  if (!info) {
    info = make();
    entry.derived.set(tag, info);
  }
  return { info, owned: false };
}

/** Frees every cached derived weight. */
export function clearWeightCache(): void {
  for (const [source, entry] of entries) {
    for (const info of entry.derived.values()) entry.backend.disposeData(info.dataId);
    entries.delete(source);
  }
}

/** Number of weights with cached derived copies (for tests). */
export function weightCacheSize(): number {
  sweep();
  return entries.size;
}

function sweep(): void {
  for (const [source, entry] of entries) {
    if (entry.backend.dataIdMap.has(source)) continue;
    for (const info of entry.derived.values()) entry.backend.disposeData(info.dataId);
    entries.delete(source);
  }
}

function isTrainableVariableData(dataId: object): boolean {
  const vars = tf.engine().state.registeredVariables;
  for (const name in vars) {
    const v = vars[name];
    if (v.dataId === dataId) return v.trainable;
  }
  return false;
}
