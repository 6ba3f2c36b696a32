import * as tf from '@tensorflow/tfjs';
import { captureOptimizer, NamedTensor } from './optimizerWeights';
import type { SerializedTensor } from './state';

/**
 * The tensor half of `getState`, in two parts: `captureTensors` takes everything at the call,
 * synchronously (clones share the data: no copy), and `readCaptured` reads the clones into
 * JSON afterwards. A `step` called before the read finishes changes Variables, never the clones,
 * so the state is the one of the call. Only an optimizer of a class that is not built into tfjs
 * is read through its own async `getWeights`; `pendingRead` then says so, and the accumulator
 * refuses changes until the read is done.
 */

/** A variable with its accumulator and its EMA shadow, as the accumulator keeps them. */
export interface CapturedSlot {
  variable: tf.Variable;
  accumulator: tf.Variable | null;
  ema: tf.Variable | null;
}

/** What {@link captureTensors} took. Read it once with {@link readCaptured}, which disposes it. */
export interface Captured {
  /** The accumulators, held times 2^−scale; read back as the sums themselves. */
  accumulators: { name: string; shape: number[]; tensor: tf.Tensor | null }[];
  /** The window's scale (see `windowScale`). */
  scale: number;
  optimizer: { weights: NamedTensor[]; internals: NamedTensor[] | null } | Promise<NamedTensor[]> | null;
  /** Per variable: its average, or null while it has none (never updated: its own average). */
  ema: { name: string; shape: number[]; tensor: tf.Tensor | null }[] | null;
  /** True when the optimizer is read later, through its own `getWeights`. */
  pendingRead: boolean;
}

/**
 * Takes the accumulators (only those of the window's touched variables: others hold stale sums
 * no one reads), the optimizer (when given) and the EMA (when kept).
 *
 * @param swapped Whether the weights hold their averages now (inside `withAveragedWeights`):
 *   then each average is in its variable and the trained value in the shadow.
 */
export function captureTensors(
  slots: readonly CapturedSlot[],
  touchedNames: readonly string[],
  scale: number,
  optimizer: tf.Optimizer | null,
  ema: { swapped: boolean } | null,
): Captured {
  const touched = new Set(touchedNames);
  const accumulators = slots.map(({ variable, accumulator }) => ({
    name: variable.name,
    shape: [...variable.shape],
    tensor: touched.has(variable.name) && accumulator !== null ? tf.clone(accumulator) : null,
  }));
  const averages = ema === null ? null : slots.map(({ variable, ema: shadow }) => ({
    name: variable.name,
    shape: [...variable.shape],
    tensor: shadow === null ? null : tf.clone(ema.swapped ? variable : shadow),
  }));
  let taken: Captured['optimizer'] = null;
  if (optimizer !== null) {
    taken = captureOptimizer(optimizer) ?? optimizer.getWeights();
    // Awaited in readCaptured; until then a rejection (an optimizer without getWeights) is not "unhandled".
    if (taken instanceof Promise) taken.catch(() => {});
  }
  return { accumulators, scale, optimizer: taken, ema: averages, pendingRead: taken instanceof Promise };
}

async function read(name: string, tensor: tf.Tensor | null, shape: number[], dtype = 'float32', by = 1): Promise<SerializedTensor> {
  const size = shape.reduce((a, b) => a * b, 1);
  // Times a power of two in float64: exact.
  const values = tensor === null ? new Array<number>(size).fill(0) : Array.from((await tensor.data()) as ArrayLike<number>, (x) => x * by);
  return { name, shape: [...shape], dtype, values };
}

/** Reads a capture into JSON form and disposes its clones (also when a read throws). */
export async function readCaptured(captured: Captured): Promise<{
  accumulators: SerializedTensor[];
  optimizer: SerializedTensor[] | null;
  optimizerInternals: SerializedTensor[] | null;
  ema: (SerializedTensor | null)[] | null;
}> {
  const owned: tf.Tensor[] = [...captured.accumulators, ...(captured.ema ?? [])].flatMap((e) => (e.tensor === null ? [] : [e.tensor]));
  try {
    const accumulators: SerializedTensor[] = [];
    for (const a of captured.accumulators) accumulators.push(await read(a.name, a.tensor, a.shape, 'float32', 2 ** captured.scale));
    let optimizer: SerializedTensor[] | null = null;
    let optimizerInternals: SerializedTensor[] | null = null;
    if (captured.optimizer !== null) {
      const taken = captured.optimizer instanceof Promise ? { weights: await captured.optimizer, internals: null } : captured.optimizer;
      // Our clones and tfjs's fresh iteration tensor are ours to dispose; live slot Variables are not.
      owned.push(...[...taken.weights, ...(taken.internals ?? [])].map((w) => w.tensor).filter((t) => !(captured.optimizer instanceof Promise) || !(t instanceof tf.Variable)));
      optimizer = [];
      for (const w of taken.weights) optimizer.push(await read(w.name, w.tensor, [...w.tensor.shape], w.tensor.dtype));
      if (taken.internals !== null) {
        optimizerInternals = [];
        for (const w of taken.internals) optimizerInternals.push(await read(w.name, w.tensor, [...w.tensor.shape], w.tensor.dtype));
      }
    }
    let ema: (SerializedTensor | null)[] | null = null;
    if (captured.ema !== null) {
      ema = [];
      for (const e of captured.ema) ema.push(e.tensor === null ? null : await read(e.name, e.tensor, e.shape));
    }
    return { accumulators, optimizer, optimizerInternals, ema };
  } finally {
    tf.dispose(owned);
  }
}
