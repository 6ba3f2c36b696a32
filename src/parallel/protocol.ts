import type * as tf from '@tensorflow/tfjs';
/**
 * The messages between `ParallelAccumulator` (main thread) and its workers, and the packing of
 * a model's trainable weights into one flat float32 buffer.
 *
 * Two `SharedArrayBuffer`s carry the parameter-sized data, so nothing parameter-sized is cloned
 * per window: one holds the weights the main thread writes after each update (read by every
 * worker), and each worker has one where it writes its gradient sums when asked to reduce.
 * Micro-batches travel in the messages themselves, their buffers transferred, not copied.
 */

/** A tensor as a typed array plus a shape: what crosses a thread boundary. */
export interface TransferableTensor {
  /** The values, row-major. float32 or int32. */
  values: Float32Array | Int32Array;
  /** The shape; its product is `values.length`. */
  shape: number[];
}

/** How a worker finds its loss: a tfjs loss name, or an export of a module it imports. */
export type LossSpec = string | { module: string; export: string };

/** What a worker needs to build its replica. Sent once, as `workerData`. */
export interface ReplicaInit {
  /** `model.toJSON(null, false)`: the topology, rebuilt with `tf.models.modelFromJSON`. */
  modelTopology: object;
  /** Every weight of the model (trainable or not), in `model.weights` order. */
  weights: TransferableTensor[];
  /** The loss: a `tf.losses` name, or a resolved module path plus export name. */
  loss: LossSpec;
  /** `"per-sample"` or `"per-micro-batch"`: what one micro-batch counts for. */
  averaging: 'per-sample' | 'per-micro-batch';
  /** The backend preference handed to `selectBackend` in the worker; undefined: its default. */
  backend: string | undefined;
  /** Modules imported before the model is rebuilt (they register custom layers). */
  modules: string[];
  /** Shared buffer of the trainable weights, packed (see {@link packedLayout}). */
  weightBuffer: SharedArrayBuffer;
  /** This worker's shared buffer for its gradient sums, same layout. */
  sumBuffer: SharedArrayBuffer;
}

/** Main → worker. */
export type ToWorker =
  | { type: 'micro-batch'; index: number; xs: TransferableTensor; ys: TransferableTensor }
  | { type: 'reduce'; id: number }
  | { type: 'discard'; id: number }
  | { type: 'trainable-weights' }
  | { type: 'all-weights'; weights: TransferableTensor[] }
  | { type: 'memory'; id: number };

/** The outcome of one micro-batch inside a worker, reported at the next reduce. */
export interface MicroBatchReport {
  /** The micro-batch's position in the order `step` received it (see `ParallelAccumulator`). */
  index: number;
  /** Its mean loss (NaN or ±Infinity when it was non-finite). */
  loss: number;
  /** What it counts for: samples, tokens, or 1 under "per-micro-batch". */
  count: number;
  /** False when its loss or gradient held a NaN or ±Infinity; it was then left out of the sums. */
  finite: boolean;
}

/** Worker → main. */
export type FromWorker =
  | { type: 'ready'; backend: string; notices: string[] }
  | {
      type: 'sums';
      id: number;
      /** Micro-batches in the sums (finite ones only). */
      microBatches: number;
      /** Their total count (samples, tokens or micro-batches). */
      count: number;
      /** Which trainable weights received a gradient. */
      touched: boolean[];
      /** Every micro-batch handled since the last reduce, finite or not. */
      reports: MicroBatchReport[];
      /** Milliseconds spent in forward/backward and summing since the last reduce. */
      computeMs: number;
      /** Milliseconds spent copying the sums into the shared buffer. */
      packMs: number;
      /** Milliseconds spent reading new weights from the shared buffer since the last reduce. */
      unpackMs: number;
    }
  | { type: 'discarded'; id: number }
  | { type: 'memory'; id: number; numTensors: number }
  | { type: 'failed'; id: number | null; message: string; stack: string | null };

/** Where each trainable weight lives in a packed buffer: offsets and sizes, in order. */
export interface PackedLayout {
  offsets: number[];
  sizes: number[];
  /** Total float32 elements. */
  length: number;
}

/** The packed layout of weights with these shapes. */
export function packedLayout(shapes: number[][]): PackedLayout {
  const sizes = shapes.map((s) => s.reduce((a, b) => a * b, 1));
  const offsets: number[] = [];
  let length = 0;
  for (const size of sizes) {
    offsets.push(length);
    length += size;
  }
  return { offsets, sizes, length };
}

/** A shared buffer big enough for a packed layout. */
export function sharedFloat32(layout: PackedLayout): SharedArrayBuffer {
  return new SharedArrayBuffer(Math.max(1, layout.length) * Float32Array.BYTES_PER_ELEMENT);
}

/** Every weight of the model as typed arrays, in `model.weights` order. */
export function readWeights(model: tf.LayersModel): TransferableTensor[] {
  return model.weights.map((w) => {
    const t = w.read();
    const values = t.dtype === 'int32' ? Int32Array.from(t.dataSync() as Int32Array) : Float32Array.from(t.dataSync() as Float32Array);
    return { values, shape: [...t.shape] };
  });
}
