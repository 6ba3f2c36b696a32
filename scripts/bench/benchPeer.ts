import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface, Interface } from 'node:readline';
import { median } from '../../src/tutorial/index';

/**
 * The PyTorch peer of the bench: a long-lived scripts/bench/bench_torch.py process that times blocks
 * of steps on request, so the bench can alternate its blocks with ours (see bench_torch.py for
 * the protocol). One process per thread setting: OpenBLAS reads its thread count from the
 * environment once, at load.
 */

/**
 * A training call PyTorch times: a plain step on a batch, a window of micro-batches, or that
 * window's parts (its backward passes without accumulating into .grad, then one step).
 */
export type PeerCase = { kind: 'step'; model: string; batch: number } | { kind: 'window' | 'parts'; model: string; steps: number; micro: number };

/** A window's median ms against its parts' (window / parts: 1 when accumulating costs nothing). */
export interface PartsRatio {
  windowMs: number;
  partsMs: number;
  ratio: number;
}

/** A timed block: wall ms of each call, this process's threads that were busy (≥25% of the busiest one's CPU time), and its CPU time over wall time. */
export interface PeerBlock {
  ms: number[];
  busyThreads: number;
  cpuPerWall: number;
  /** CPU ms per call of the busiest thread. */
  threadCpuMs: number;
  /** The peer process's minor page faults per call (getrusage): high when it maps its buffers anew each call. */
  faultsPerCall: number;
}

/** What the peer says about itself at start. */
export interface PeerHello {
  available: boolean;
  reason?: string;
  torch?: string;
  /** torch.get_num_threads() after set_num_threads. */
  threads?: number;
  /** threadpoolctl's view: each thread pool (OpenMP, OpenBLAS) and its thread count. */
  pools?: { api: string; threads?: number; library?: string; architecture?: string; error?: string }[];
  /** The pinning variables as the process saw them. */
  env?: Record<string, string | null>;
}

/** The environment variables that pin each threading library torch may use. */
export const PIN_VARIABLES = ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'] as const;

/**
 * glibc malloc settings of the peer. With glibc's defaults a buffer above the mmap threshold is
 * mapped on allocation and unmapped on free, and the threshold moves with what the process freed
 * before; so a fresh peer may map, fault in and zero its large buffers on every call while one
 * that ran other rows first reuses them, and PyTorch's time depends on the order of the rows.
 * Keeping blocks up to 256 MiB on the heap, and not trimming it, makes every call reuse memory,
 * as a long-running PyTorch training process does. Ours pays no such cost (V8 and the wasm heap
 * keep their memory), so this compares the steps, not the allocators.
 */
export const PEER_MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=268435456';

/** How a peer is started; every field is optional. */
export interface PeerStartArgs {
  /**
   * GLIBC_TUNABLES of the peer process. Default: the caller's own GLIBC_TUNABLES when set (a
   * deliberate choice is kept), else {@link PEER_MALLOC_TUNABLES}. Null: glibc's defaults.
   */
  mallocTunables?: string | null;
}

export class TorchPeer {
  /** What the peer reported about itself (set by {@link TorchPeer.start}). */
  hello: PeerHello = { available: false };
  /** Rejects when the process fails or exits, so that no request waits forever. */
  private readonly failed: Promise<never>;
  private readonly lines: Interface;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    /** The thread count asked for. */
    readonly threads: number,
  ) {
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    this.lines = createInterface({ input: child.stdout });
    this.failed = new Promise<never>((_, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`bench_torch.py exited with ${code}: ${stderr.trim().split('\n').pop() ?? ''}`)));
    });
    this.failed.catch(() => {});
  }

  /**
   * Starts a peer with `threads` threads: 1 pins OpenBLAS, OpenMP and MKL to one thread through
   * the environment and torch.set_num_threads; more leaves the libraries' own defaults (every
   * core) and sets torch's to `threads`. Its malloc settings: see {@link PeerStartArgs}.
   */
  static async start(python: string, threads: number, args: PeerStartArgs = {}): Promise<TorchPeer> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of PIN_VARIABLES) {
      if (threads === 1) env[name] = '1';
      else delete env[name];
    }
    const tunables = args.mallocTunables === undefined ? (process.env.GLIBC_TUNABLES ?? PEER_MALLOC_TUNABLES) : args.mallocTunables;
    if (tunables === null) delete env.GLIBC_TUNABLES;
    else env.GLIBC_TUNABLES = tunables;
    const peer = new TorchPeer(spawn(python, [join(__dirname, 'bench_torch.py')], { env, stdio: ['pipe', 'pipe', 'pipe'] }), threads);
    peer.hello = (await peer.request({ op: 'hello', threads })) as PeerHello;
    return peer;
  }

  /** The peer process's id, which also names its main thread (where a one-thread peer computes). */
  get pid(): number {
    if (this.child.pid === undefined) throw new Error('bench_torch.py has no process id: it did not start');
    return this.child.pid;
  }

  /** Sends one command and waits for its one-line answer. */
  async request(command: Record<string, unknown>): Promise<unknown> {
    const answer = new Promise<string>((resolve) => this.lines.once('line', resolve));
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
    const line = await Promise.race([answer, this.failed]);
    const parsed = JSON.parse(line) as { error?: string };
    if (parsed.error) throw new Error(`bench_torch.py: ${parsed.error}`);
    return parsed;
  }

  /** Times `peerCase` for `seconds` after `warmup` calls. */
  async time(peerCase: PeerCase, seconds: number, warmup: number): Promise<PeerBlock> {
    return (await this.request({ op: 'time', case: peerCase, seconds, warmup })) as PeerBlock;
  }

  /**
   * PyTorch's window against its parts (see {@link PeerCase}), in `rounds` turns of
   * `seconds / rounds` each, so that load falls on both alike: medians, ms, and their ratio.
   */
  async windowOverParts(model: string, steps: number, micro: number, seconds: number, rounds: number, warmup: number): Promise<PartsRatio> {
    const window: number[] = [];
    const parts: number[] = [];
    for (let r = 0; r < rounds; r++) {
      window.push(...(await this.time({ kind: 'window', model, steps, micro }, seconds / rounds, r === 0 ? warmup : 0)).ms);
      parts.push(...(await this.time({ kind: 'parts', model, steps, micro }, seconds / rounds, r === 0 ? warmup : 0)).ms);
    }
    const windowMs = median(window);
    const partsMs = median(parts);
    return { windowMs, partsMs, ratio: windowMs / partsMs };
  }

  /** GFLOP/s of torch.mm on two size x size float32 matrices, per call. */
  async gemm(size: number, seconds: number): Promise<{ gflops: number[]; busyThreads: number }> {
    return (await this.request({ op: 'gemm', size, seconds })) as { gflops: number[]; busyThreads: number };
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

/** Every core of this machine. */
export const allCores = (): number => cpus().length;
