import { parentPort, workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { BackendPreference, selectBackend } from '../backend/selectBackend';
import type { FromWorker, ReplicaInit, ToWorker } from './protocol';
import { Replica } from './replica';

/**
 * The script every `ParallelAccumulator` worker runs: select a backend, rebuild the replica,
 * then serve messages in order. Micro-batches get no reply (no synchronization per
 * micro-step); a reduce gets the sums. The first error of a round is kept and reported at the
 * round's reduce, and the micro-batches after it are ignored, so the main thread can fail the
 * window as a whole.
 */

if (parentPort === null) throw new Error('tfjs-accumulate/parallel: worker.js runs only as a worker thread.');
const port = parentPort;

const send = (message: FromWorker): void => port.postMessage(message);
const errorText = (e: unknown) => ({ message: e instanceof Error ? e.message : String(e), stack: e instanceof Error ? e.stack ?? null : null });

async function main(): Promise<void> {
  const init = workerData as ReplicaInit;
  const notices: string[] = [];
  let replica: Replica;
  try {
    await selectBackend(init.backend as BackendPreference | undefined, { onNotice: (m) => notices.push(m) });
    replica = await Replica.create(init);
  } catch (e) {
    send({ type: 'failed', id: null, ...errorText(e) });
    return;
  }
  let roundError: unknown = null;
  port.on('message', (message: ToWorker) => {
    try {
      switch (message.type) {
        case 'micro-batch':
          if (roundError === null) replica.addMicroBatch(message.index, message.xs, message.ys);
          break;
        case 'reduce':
          if (roundError !== null) {
            const error = roundError;
            roundError = null;
            replica.discard();
            send({ type: 'failed', id: message.id, ...errorText(error) });
          } else {
            send(replica.reduce(message.id));
          }
          break;
        case 'discard':
          roundError = null;
          replica.discard();
          send({ type: 'discarded', id: message.id });
          break;
        case 'trainable-weights':
          replica.readTrainableWeights();
          break;
        case 'all-weights':
          replica.setAllWeights(message.weights);
          break;
        case 'memory':
          send({ type: 'memory', id: message.id, numTensors: tf.memory().numTensors });
          break;
      }
    } catch (e) {
      roundError ??= e;
    }
  });
  send({ type: 'ready', backend: tf.getBackend(), notices });
}

void main();
