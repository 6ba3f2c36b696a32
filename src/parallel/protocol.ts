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
  /** `selectBackend`'s `nativeThreads` in the worker (checked on the main thread against the cores and the workers). */
  nativeThreads: number;
  /** Modules imported before the model is rebuilt (they register custom layers). */
  modules: string[];
  /** Shared buffer of the trainable weights, packed (see {@link packedLayout}). */
  weightBuffer: SharedArrayBuffer;
  /** This worker's shared buffer for its gradient sums, same layout. */
  sumBuffer: SharedArrayBuffer;
  /** This worker's shared buffer for the gradient of a window's last micro-batch, kept apart (see {@link PartSums}). */
  lastBuffer: SharedArrayBuffer;
}

/** Main → worker. */
export type ToWorker =
  | {
      type: 'micro-batch';
      index: number;
      /** One array per model input. */
      xs: TransferableTensor[];
      /** One array per model output. */
      ys: TransferableTensor[];
      /** The micro-batch that completes the window: its gradient is kept apart from the sums (see {@link PartSums}). */
      last: boolean;
      /** The scale of its window (`GradientAccumulator.openWindow`): the worker sums its gradient times 2^−scale. */
      scale: number;
    }
  | { type: 'reduce'; id: number }
  | { type: 'discard'; id: number }
  | { type: 'trainable-weights' }
  /** The trained variables' `trainable` flags, in the packed order: sent when one changed on the main thread (see `TrainableSync`). */
  | { type: 'trainable'; flags: boolean[] }
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
  /** True for the micro-batch that completes the window (kept apart, see {@link PartSums}). */
  last: boolean;
}

/**
 * What one part of a worker's sums holds. A worker keeps two: the running sums of the window's
 * micro-batches, and apart from them the gradient of the micro-batch that completes the window.
 * The main thread adds the first parts of every worker to the window, and then the last one,
 * which applies the update: if the update throws, the window keeps every micro-batch but the
 * last, exactly as a failed `GradientAccumulator.step` leaves it, and stepping the last one
 * again completes it.
 */
export interface PartSums {
  /** Finite micro-batches summed in this part. */
  microBatches: number;
  /** Their total count (samples, tokens or micro-batches). */
  count: number;
  /** What the count counts: `"samples"`, `"counts"` once a `{ loss, count }` was summed, or `"micro-batches"`. */
  unit: 'samples' | 'counts' | 'micro-batches';
  /** Σ mean loss × count over them. */
  lossSum: number;
  /** Which trainable weights received a gradient. */
  touched: boolean[];
}

/** Where a worker's time went since its last reduce, measured inside the worker (ms). */
export interface WorkerTiming {
  /** Forward, backward and adding into the sums. */
  computeMs: number;
  /** Reading new weights from the shared buffer into the replica. */
  unpackMs: number;
  /** Copying the sums into the shared buffers at the reduce. */
  packMs: number;
  /** Waiting for a message while nothing was queued (idle between micro-batches). */
  idleMs: number;
  /** Garbage collection pauses of this worker's isolate. */
  gcMs: number;
  /** Messages handled. */
  messages: number;
  /** Micro-batches computed (finite or not). */
  microBatches: number;
  /** Of `computeMs`, this thread's time on a CPU (Linux; 0 elsewhere), see `threadClock`. */
  cpuMs: number;
  /** Of `computeMs`, this thread's time runnable but waiting for a CPU (Linux; 0 elsewhere). */
  runQueueMs: number;
}

/** Worker → main. */
export type FromWorker =
  | { type: 'ready'; backend: string; notices: string[] }
  | {
      type: 'sums';
      id: number;
      /** The running sums, written into the worker's sum buffer. */
      sums: PartSums;
      /** The window's last micro-batch, written into its last buffer; null when it had none (or it was non-finite). */
      last: PartSums | null;
      /** Every micro-batch handled since the last reduce, finite or not. */
      reports: MicroBatchReport[];
      timing: WorkerTiming;
    }
  | { type: 'discarded'; id: number }
  | { type: 'memory'; id: number; numTensors: number }
  | {
      type: 'failed';
      id: number | null;
      message: string;
      stack: string | null;
      /** At start-up: the class of the model the worker does not know (see `UnregisteredClassError`). */
      unregisteredClass?: string;
    };

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
