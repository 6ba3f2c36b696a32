import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { PEER_MALLOC_TUNABLES, TorchPeer } from '../../../scripts/bench/benchPeer';
import { HANG_MS } from '../../helpers/ceilings';

const python = '/usr/bin/python3';
const hasTorch = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
const skip = hasTorch ? false : 'python3-torch is not installed (npm run bench:deps installs it)';

test('the one-thread PyTorch peer is pinned, and its timing shows one busy thread', { skip, timeout: HANG_MS }, async () => {
  const peer = await TorchPeer.start(python, 1);
  try {
    assert.equal(peer.hello.available, true);
    assert.equal(peer.hello.threads, 1);
    assert.deepEqual(peer.hello.env, { OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1', GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? PEER_MALLOC_TUNABLES });
    for (const pool of peer.hello.pools ?? []) if (pool.threads !== undefined) assert.equal(pool.threads, 1, JSON.stringify(pool));
    // A GEMM big enough that a second OpenBLAS thread would show.
    const gemm = await peer.gemm(512, 0.3);
    assert.equal(gemm.busyThreads, 1);
    const block = await peer.time({ kind: 'step', model: 'mlp', batch: 64 }, 0.2, 2);
    assert.ok(block.ms.length >= 3 && block.ms.every((ms) => ms > 0));
    assert.equal(block.busyThreads, 1);
  } finally {
    peer.close();
  }
});

test("PyTorch's window against its parts: both timed in turns, the ratio their medians'", { skip, timeout: HANG_MS }, async () => {
  const peer = await TorchPeer.start(python, 1);
  try {
    const parts = await peer.time({ kind: 'parts', model: 'simpleNet', steps: 4, micro: 16 }, 0.1, 1);
    assert.ok(parts.ms.length >= 3 && parts.ms.every((ms) => ms > 0));
    const r = await peer.windowOverParts('simpleNet', 4, 16, 0.2, 2, 1);
    assert.ok(r.windowMs > 0 && r.partsMs > 0, JSON.stringify(r));
    assert.equal(r.ratio, r.windowMs / r.partsMs);
  } finally {
    peer.close();
  }
});

test('the all-cores peer leaves the libraries their defaults', { skip, timeout: HANG_MS }, async () => {
  const peer = await TorchPeer.start(python, 2);
  try {
    assert.equal(peer.hello.threads, 2);
    assert.deepEqual(peer.hello.env, { OPENBLAS_NUM_THREADS: null, OMP_NUM_THREADS: null, MKL_NUM_THREADS: null, GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? PEER_MALLOC_TUNABLES });
    await assert.rejects(peer.request({ op: 'nonsense' }), /unknown op 'nonsense'/);
  } finally {
    peer.close();
  }
});

test("the peer's malloc settings keep its buffers: few page faults per call, against thousands when glibc maps them", { skip, timeout: HANG_MS }, async () => {
  const window = { kind: 'window', model: 'cnn', steps: 4, micro: 16 } as const;
  // Warm-up calls let the heap reach its size before the block, also on a loaded machine.
  const faultsOf = async (mallocTunables: string | null | undefined): Promise<{ faults: number; env: unknown }> => {
    const peer = await TorchPeer.start(python, 1, { mallocTunables });
    try {
      const block = await peer.time(window, 0.3, 12);
      return { faults: block.faultsPerCall, env: peer.hello.env?.GLIBC_TUNABLES };
    } finally {
      peer.close();
    }
  };
  // A fixed threshold of 128 KiB maps every activation and gradient buffer on each call (a fixed
  // threshold also stops glibc from moving it): the cost the bench's setting removes.
  const mapped = await faultsOf('glibc.malloc.mmap_threshold=131072');
  const tuned = await faultsOf(PEER_MALLOC_TUNABLES);
  assert.equal(tuned.env, PEER_MALLOC_TUNABLES);
  assert.ok(mapped.faults > 1000, `a peer that maps its buffers faults on each call: ${mapped.faults}`);
  assert.ok(tuned.faults * 10 < mapped.faults, `tuned ${tuned.faults} against mapped ${mapped.faults} faults per window`);
  const plain = await TorchPeer.start(python, 1, { mallocTunables: null });
  plain.close();
  assert.equal(plain.hello.env?.GLIBC_TUNABLES, null, 'null leaves glibc its defaults');
});
