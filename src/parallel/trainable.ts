import * as tf from '@tensorflow/tfjs';
import { argumentError, verbatim } from '../core/errors';
import type { ToWorker } from './protocol';

/**
 * The trained variables' `trainable` flags, kept the same in the workers as in the main model.
 *
 * A layer frozen after `create` (`layer.trainable = false`) sets its variables' flags on the main
 * thread only; each replica has its own copies. On one thread `tf.variableGrads` gives a frozen
 * variable no gradient, so the workers must see the flags too: they are sent before the next
 * micro-batch, and only when one changed (one comparison per variable per micro-batch).
 *
 * Note: a variable frozen between a micro-batch and the reduction of its sums gets none of them
 * (the main side hands the core only the sums of variables trainable at the reduction): an update
 * never moves a variable that is frozen when it runs.
 */

/** What {@link TrainableSync} needs from the pool of workers. */
export interface FlagPosts {
  readonly size: number;
  post(worker: number, message: ToWorker): void;
}

export class TrainableSync {
  /** The flags every worker holds now. */
  private sent: boolean[];

  constructor(
    /** The variables the accumulator trains (the model's trainable weights at `create`), in the workers' order. */
    private readonly vars: readonly tf.Variable[],
    private readonly pool: FlagPosts,
  ) {
    this.sent = flagsOf(vars);
  }

  /** For the variables an accumulator of `model` trains: its trainable weights now, at `create`. */
  static of(model: tf.LayersModel, pool: FlagPosts): TrainableSync {
    return new TrainableSync(model.trainableWeights.map((w) => w.read() as tf.Variable), pool);
  }

  /**
   * Before a micro-batch is sent: refuses a model left with no trainable variable (its gradient
   * would be empty; nothing has been sent), and sends every worker the flags when one changed.
   */
  beforeMicroBatch(owner: string): void {
    const now = this.requireOne(owner);
    if (now.every((f, i) => f === this.sent[i])) return;
    for (let w = 0; w < this.pool.size; w++) this.pool.post(w, { type: 'trainable', flags: now });
    this.sent = now;
  }

  /** The flags now; a named error when none is trainable. */
  requireOne(owner: string): boolean[] {
    const now = flagsOf(this.vars);
    if (!now.includes(true)) {
      throw argumentError(
        owner,
        'model',
        'a model with at least one trainable weight among those it trained at create (unfreeze a layer)',
        verbatim(`a model whose ${this.vars.length} trained weights are all frozen`),
      );
    }
    return now;
  }
}

/** Sets a replica's flags to those the main thread sent, in the same order as its trained variables. */
export function setTrainableFlags(vars: readonly tf.Variable[], flags: readonly boolean[]): void {
  if (flags.length !== vars.length) throw new Error(`trainable flags for ${flags.length} variables sent to a replica that trains ${vars.length}`);
  vars.forEach((v, i) => {
    v.trainable = flags[i];
  });
}

function flagsOf(vars: readonly tf.Variable[]): boolean[] {
  return vars.map((v) => v.trainable);
}
