import { spawn, ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface, Interface } from 'node:readline';
import type { BackendPreference } from '../backend/selectBackend';
import { argumentError, isPositiveInteger } from '../core/errors';
import type { TFJS_LOSS_NAMES } from './loss';

/**
 * What two cores give this work on this machine, measured without the trainer: P independent
 * Node processes, each training the same single-thread window, timed alone and all at once.
 * Their throughput together over one process's alone, `P · aloneMs / togetherMs`, is the most
 * P workers of one process could reach; a trainer is judged against it in the same run, since a
 * shared or virtual machine's memory path can keep two copies of a step from running at full
 * speed (see docs/parallel.md).
 */

/** Options of {@link measureProcessLimit}. */
export interface ProcessLimitArgs {
  /** How each process builds the model: a module (absolute path or package), its export, and the argument it is called with. Required. */
  model: { module: string; export: string; args?: unknown };
  /** A `tf.losses` name. Default `"softmaxCrossEntropy"`. */
  loss?: (typeof TFJS_LOSS_NAMES)[number];
  /** Micro-batches per window. Default 8. */
  accumulationSteps?: number;
  /** Samples per micro-batch. Default 16. */
  microBatchSize?: number;
  /** Independent processes. Default 2. */
  processes?: number;
  /** Timed windows per phase and process. Default 5. */
  windows?: number;
  /** Alternations of the two phases (alone, then together), so that load from elsewhere falls on both. Default 3. */
  rounds?: number;
  /** Untimed windows in each process first. Default 2. */
  warmupWindows?: number;
  /** The backend each process asks `selectBackend` for. Default `"wasm"`. */
  backend?: BackendPreference;
}

/** What a child process is told (its command-line argument). */
export interface ProcessLimitChildArgs {
  model: ProcessLimitArgs['model'];
  loss: (typeof TFJS_LOSS_NAMES)[number];
  accumulationSteps: number;
  microBatchSize: number;
  warmupWindows: number;
  backend: string;
}

/** What {@link measureProcessLimit} found. */
export interface ProcessLimit {
  processes: number;
  /** Median window time of one process running alone, ms. */
  aloneMs: number;
  /** Median window time of each process while all ran at once, ms. */
  togetherMs: number[];
  /** `processes · aloneMs / median(togetherMs)`: the throughput of all together over one alone. */
  speedup: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** A child process and its line reader. */
interface Child {
  process: ChildProcess;
  next: () => Promise<{ ready?: boolean; ms?: number[] }>;
  lines: Interface;
}

function startChild(args: ProcessLimitChildArgs): Child {
  const ts = __filename.endsWith('.ts');
  const script = join(__dirname, ts ? 'processLimitChild.ts' : 'processLimitChild.js');
  // The same wasm feature flags as this process (e.g. relaxed SIMD), so the kernels are the same.
  const flags = process.execArgv.filter((a) => a.startsWith('--experimental-wasm'));
  const child = spawn(process.execPath, [...flags, ...(ts ? ['--import', 'tsx'] : []), script, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => (waiting.length > 0 ? (waiting.shift() as (l: string) => void)(line) : queue.push(line)));
  const exited = new Promise<never>((_, reject) => child.on('exit', (code) => reject(new Error(`measureProcessLimit: a child process exited (code ${code})`))));
  exited.catch(() => undefined);
  const next = () => Promise.race([new Promise<string>((resolve) => (queue.length > 0 ? resolve(queue.shift() as string) : waiting.push(resolve))), exited]).then((line) => JSON.parse(line));
  return { process: child, next, lines };
}

/**
 * Times the window in `processes` independent processes: alone (the first one) and all at once,
 * alternating `rounds` times, and returns the medians and the throughput ratio.
 */
export async function measureProcessLimit(args: ProcessLimitArgs): Promise<ProcessLimit> {
  const owner = 'measureProcessLimit';
  const m = args?.model;
  if (m === null || typeof m !== 'object' || typeof m.module !== 'string' || typeof m.export !== 'string') {
    throw argumentError(owner, 'model', '{ module, export, args? } naming a function that builds the model', m);
  }
  const processes = args.processes ?? 2;
  const windows = args.windows ?? 5;
  const rounds = args.rounds ?? 3;
  for (const [name, value] of [['processes', processes], ['windows', windows], ['rounds', rounds]] as const) {
    if (!isPositiveInteger(value)) throw argumentError(owner, name, 'a positive integer', value);
  }
  const childArgs: ProcessLimitChildArgs = {
    model: { module: require.resolve(m.module, { paths: [process.cwd()] }), export: m.export, args: m.args },
    loss: args.loss ?? 'softmaxCrossEntropy',
    accumulationSteps: args.accumulationSteps ?? 8,
    microBatchSize: args.microBatchSize ?? 16,
    warmupWindows: args.warmupWindows ?? 2,
    backend: args.backend ?? 'wasm',
  };
  const children = Array.from({ length: processes }, () => startChild(childArgs));
  try {
    await Promise.all(children.map((c) => c.next()));
    const alone: number[] = [];
    const together: number[][] = children.map(() => []);
    const run = async (c: Child) => {
      c.process.stdin?.write(`run ${windows}\n`);
      return (await c.next()).ms as number[];
    };
    for (let r = 0; r < rounds; r++) {
      alone.push(...(await run(children[r % processes])));
      const times = await Promise.all(children.map(run));
      times.forEach((t, i) => together[i].push(...t));
    }
    const aloneMs = median(alone);
    const togetherMs = together.map(median);
    return { processes, aloneMs, togetherMs, speedup: (processes * aloneMs) / median(togetherMs) };
  } finally {
    for (const c of children) {
      c.process.stdin?.end('exit\n');
      c.lines.close();
    }
  }
}
