import { PerformanceObserver } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { BackendPreference, selectBackend } from '../backend/selectBackend';
import { UnregisteredClassError } from './errors';
import { inLossTerms } from './loss';
import type { FromWorker, ReplicaInit, ToWorker } from './protocol';
import { Replica } from './replica';

/**
 * The script every `ParallelAccumulator` worker runs: select a backend, rebuild the replica,
 * then serve messages in order. Micro-batches get no reply (no synchronization per
 * micro-step); a reduce gets the sums. The first error of a round is kept and reported at the
 * round's reduce, and the micro-batches after it are ignored, so the main thread can fail the
 * window as a whole.
 *
 * Timing inside the worker (reported with every reduce): compute, weight reads, packing, the idle
 * time between the end of one message and the arrival of the next within a round, and this
 * isolate's GC pauses.
 */

if (parentPort === null) throw new Error('tfjs-accumulate/parallel: worker.js runs only as a worker thread.');
const port = parentPort;
const OWNER = 'ParallelAccumulator';

const send = (message: FromWorker): void => port.postMessage(message);
const errorText = (e: unknown) => ({ message: inLossTerms(OWNER, e instanceof Error ? e.message : String(e)), stack: e instanceof Error ? e.stack ?? null : null });

async function main(): Promise<void> {
  const init = workerData as ReplicaInit;
  const notices: string[] = [];
  let replica: Replica;
  try {
    await selectBackend(init.backend as BackendPreference | undefined, { nativeThreads: init.nativeThreads, onNotice: (m) => notices.push(m) });
    replica = await Replica.create(init);
  } catch (e) {
    send({ type: 'failed', id: null, ...errorText(e), ...(e instanceof UnregisteredClassError ? { unregisteredClass: e.className } : {}) });
    return;
  }
  // GC pauses of this isolate, as the performance timeline reports them.
  const gc = new PerformanceObserver((list) => list.getEntries().forEach((entry) => replica.note('gcMs', entry.duration)));
  gc.observe({ entryTypes: ['gc'] });
  let roundError: unknown = null;
  let idleSince: number | null = null;
  port.on('message', (message: ToWorker) => {
    if (idleSince !== null) replica.note('idleMs', performance.now() - idleSince);
    replica.countMessage();
    try {
      switch (message.type) {
        case 'micro-batch':
          if (roundError === null) replica.addMicroBatch(message.index, message.xs, message.ys, message.last, message.scale);
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
        case 'trainable':
          replica.setTrainable(message.flags);
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
    // The wait for the next message starts now; after a reduce or new weights the worker waits
    // for the next window, whose start the main thread decides, so that wait is not counted.
    idleSince = message.type === 'reduce' || message.type === 'trainable-weights' || message.type === 'all-weights' ? null : performance.now();
  });
  send({ type: 'ready', backend: tf.getBackend(), notices });
}

void main();
