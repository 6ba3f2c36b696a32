/**
 * A worker thread of the bench's every-core breakdown (everyCoreBreakdown.ts): it runs the code a
 * `ParallelAccumulator` worker runs per micro-batch (`Replica.addMicroBatch`, on the native
 * backend at one BLAS thread), waits at a barrier until every worker of the run is ready, times
 * its calls, meets the others again, then times as many calls part by part with benchNative's
 * `nativeBreakdown` and posts the breakdown.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { selectBackend } from '../../src/backend/index';
import type { ReplicaInit, TransferableTensor } from '../../src/parallel/protocol';
import { Replica } from '../../src/parallel/replica';
import { nativeBreakdown } from './benchNative';

/** What the main thread sends. */
export interface BreakdownWorkerData {
  init: ReplicaInit;
  microBatches: { xs: TransferableTensor; ys: TransferableTensor }[];
  /** Untimed calls first (the code compiles on its first calls). */
  warmup: number;
  /** Profiled calls. */
  calls: number;
  /**
   * An Int32Array's buffer: [workers of the run, ready to time, ready to profile]; each worker adds
   * one to a count and waits until it reaches the first, so that all time, then profile, at once.
   */
  barrier: SharedArrayBuffer;
}

async function main(): Promise<void> {
  const data = workerData as BreakdownWorkerData;
  await selectBackend('native', { strict: true, nativeThreads: 1 });
  const replica = await Replica.create(data.init);
  let next = 0;
  // One call is one micro-batch; the sums it adds into are replaced, so memory stays flat.
  const call = (): void => {
    const b = data.microBatches[next++ % data.microBatches.length];
    replica.addMicroBatch(next, b.xs, b.ys, false);
  };
  for (let i = 0; i < data.warmup; i++) call();
  replica.discard();
  const barrier = new Int32Array(data.barrier);
  const meet = (slot: 1 | 2): void => {
    Atomics.add(barrier, slot, 1);
    Atomics.notify(barrier, slot);
    for (let seen = Atomics.load(barrier, slot); seen < barrier[0]; seen = Atomics.load(barrier, slot)) Atomics.wait(barrier, slot, seen, 1000);
  };
  // Without the kernel timers first, to show what they cost.
  meet(1);
  const start = performance.now();
  for (let i = 0; i < data.calls; i++) call();
  const plainMs = (performance.now() - start) / data.calls;
  meet(2);
  const breakdown = await nativeBreakdown(call, plainMs, data.calls);
  replica.dispose();
  parentPort?.postMessage(breakdown);
}

main().catch((e) => {
  parentPort?.postMessage({ error: e instanceof Error ? e.stack ?? e.message : String(e) });
});
