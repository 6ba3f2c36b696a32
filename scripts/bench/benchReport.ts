import type { AccumulationMeasurement } from '../../src/tutorial/index';
import type { SimdPeak } from '../../src/backend/index';
import type { PartsRatio, PeerHello } from './benchPeer';
import type { StepBreakdown } from './benchNative';
import type { EveryCoreBreakdown, RoundMedians } from './everyCoreBreakdown';
import type { Pinning } from './corePin';

/** The bench's tables, from its JSON record (build/bench/bench.json has this shape). */

/** Wall-clock statistics of one contender in one row, ms per call. */
export interface Stats {
  ms: number;
  minMs: number;
  maxMs: number;
  calls: number;
  /** Threads of its process that ran ≥25% of the busiest one's CPU time, the most over rounds (null without /proc). */
  busyThreads: number | null;
  /** The process's CPU time over the wall time, median over rounds: cores kept busy on average. */
  cpuPerWall: number | null;
  /**
   * CPU ms per call of the process's busiest thread, median over rounds. For a run verified to
   * use one thread this is its time without the waits other processes caused: the steadiest
   * number on a loaded machine (it still includes their effect on caches).
   */
  threadCpuMs: number | null;
  /** CPU ms per call of the whole process, every thread included (workers, BLAS threads), median over rounds; ours only. */
  cpuMs?: number | null;
  /**
   * Minor page faults of the process per call, median over rounds: memory mapped and zeroed
   * anew on each call, which a long-running trainer should not pay (benchPeer.ts,
   * PEER_MALLOC_TUNABLES). Load does not change it.
   */
  faultsPerCall?: number | null;
}

/** An option the library refused, with its reason; shown in the table instead of a time. */
export interface Refusal {
  label: string;
  threads: number;
  refused: string;
}

/** A further contender of a row as the report keeps it: timed, or refused. */
export type OtherEntry = (Stats & { label: string; threads: number; workers?: number; warmupCurve?: number[]; round?: RoundMedians | null }) | Refusal;

export interface Report {
  date: string;
  command: string;
  quick: boolean;
  /** `--every-core-only`: only the every-core rows ran. */
  everyCoreOnly?: boolean;
  /**
   * Whether the every-core options got their cores (everyCore.ts, coresGiven): when not, no
   * every-core target of the run is judged, the steps' included. Null when none was timed.
   */
  coresGiven?: { cores: number; asked: number; given: boolean } | null;
  config: { targets: { ratio: Record<string, number>; ratioAll?: Record<string, number>; bookkeepingShare: Record<string, number>; partsRatio?: number }; accumulationSteps: number; microBatchSize: number } & Record<string, unknown>;
  cpus: { count: number; model: string };
  loadAverage: { start: number[]; end: number[] };
  torch: { one: PeerHello; all: PeerHello | null } | { unavailable: string };
  /** The core both one-thread sides took turns on (corePin.ts). */
  pinning?: Pinning;
  environments: Record<string, string>;
  rows: {
    id: string;
    label: string;
    flops: number;
    ours1: Stats & { label: string; threads: number };
    oursAll: (Stats & { label: string; threads: number }) | null;
    torch1: Stats | null;
    torchAll: Stats | null;
    /** More of ours timed in the same rounds, or refused with the library's reason: the native windows' worker options (everyCore.ts). */
    others?: OtherEntry[];
    /** 1-minute load average before and after the row. */
    loadAverage: number[];
  }[];
  roofline: {
    wasmSimd: SimdPeak | null;
    torchGemm: { size: number; one: number; all: number | null; busyThreads: { one: number; all: number | null } } | null;
    /** The native addon's own sgemm (the same OpenBLAS PyTorch uses here), at one thread and every core as the BLAS reported them. */
    nativeGemm?: { size: number; one: number; all: number | null; threads: { one: number | null; all: number | null } } | null;
  };
  /** Native rows that missed their one-thread target, with where their time goes (scripts/bench/benchNative.ts). */
  breakdowns?: { id: string; label: string; breakdown: StepBreakdown }[];
  /** Native window rows whose every-core target was missed: the winning option taken apart (everyCoreBreakdown.ts). */
  everyCoreBreakdowns?: EveryCoreBreakdown[];
  backends: { backend: string; id: string; flops: number; ms: number | null; minMs?: number; maxMs?: number; calls?: number; busyThreads?: number | null; cpuPerWall?: number | null; error?: string }[];
  accumulation: (Omit<AccumulationMeasurement, 'window' | 'step' | 'parts'> & {
    backend: string;
    model: string;
    windowSpread: number[];
    stepSpread: number[];
    /** Fastest and slowest call of the parts by hand, ms. */
    partsSpread?: number[];
    /** PyTorch's window against its parts for the same model (one thread), or null without the peer. */
    torchParts?: PartsRatio | null;
  })[];
}

export const fmt = (v: number | null | undefined, digits = 2): string => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(2);
const spread = (s: Stats | null): string => (s ? `${fmt(s.ms)} (${fmt(s.minMs)}–${fmt(s.maxMs)})` : '—');
/** "busy threads / CPU over wall", e.g. "1 / 1.02". */
const busy = (s: Pick<Stats, 'busyThreads' | 'cpuPerWall'> | null): string =>
  s?.busyThreads === null || s?.busyThreads === undefined ? '?' : `${s.busyThreads} / ${fmt(s.cpuPerWall)}`;
const gflops = (flops: number, s: Stats | null): number | null => (s ? flops / s.ms / 1e6 : null);

/** The PyTorch peers' thread settings as they reported them. */
export function peerLine(report: Report, which: 'one' | 'all'): string {
  if ('unavailable' in report.torch) return `PyTorch: skipped (${report.torch.unavailable})`;
  const hello = which === 'one' ? report.torch.one : report.torch.all;
  if (!hello) return 'PyTorch at every core: not started';
  const pools = (hello.pools ?? []).map((p) => (p.error ? `threadpoolctl: ${p.error}` : `${p.api} ${p.threads}`)).join(', ');
  const env = Object.entries(hello.env ?? {}).map(([k, v]) => `${k}=${v ?? 'unset'}`).join(' ');
  return `torch ${hello.torch}: torch.get_num_threads() = ${hello.threads}; thread pools (threadpoolctl): ${pools}; ${env}`;
}

/** The busiest threads' CPU ms per call of both sides and their ratio. */
function threadCell(torch: Stats | null, ours: Stats): string {
  if (!torch || torch.threadCpuMs === null || ours.threadCpuMs === null) return '—';
  return `${fmt(torch.threadCpuMs)}, ${fmt(ours.threadCpuMs)}, ${fmt(ours.threadCpuMs / torch.threadCpuMs)}`;
}

/** Minor page faults per call of both sides at one thread. */
function faultCell(torch: Stats | null, ours: Stats): string {
  const f = (s: Stats | null) => fmt(s?.faultsPerCall);
  return `${f(torch)}, ${f(ours)}`;
}

/** Ours against PyTorch at one thread and at every core, with the targets. */
export function headToHeadTable(report: Report): string[] {
  const lines = [
    'Wall-clock ms per call: median (min–max) over rounds that alternate ours and PyTorch. "busy" is the number of threads',
    'of each process that ran ≥25% of its busiest thread\'s CPU time, then its CPU time over wall time (/proc/self/task/*/schedstat):',
    'the pinning, verified. Targets compare the medians. On a loaded machine the ratio of the fastest calls and that of the busiest',
    "thread's CPU time per call (one-thread runs only) are the least disturbed estimates. Page faults per call (getrusage, one thread)",
    'show a side that maps and zeroes its memory anew on each call.',
    `PyTorch, 1 thread: ${peerLine(report, 'one')}`,
    `PyTorch, ${report.cpus.count} threads: ${peerLine(report, 'all')}`,
    '',
    `| row | PyTorch 1 thread | busy | ours 1 thread | busy | ours / PyTorch (median, min) | thread CPU ms: PyTorch, ours, ratio | page faults per call: PyTorch, ours | target | PyTorch ${report.cpus.count} threads | busy | ours ${report.cpus.count} threads | busy | ours / PyTorch |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of report.rows) {
    const target = report.config.targets.ratio[r.id];
    const ratio1 = r.torch1 ? r.ours1.ms / r.torch1.ms : null;
    // The ratio of the fastest calls: on a loaded machine, the least disturbed estimate.
    const ratioMin = r.torch1 ? r.ours1.minMs / r.torch1.minMs : null;
    const verdict = target === undefined ? '' : ratio1 === null ? `≤ ${target}` : `≤ ${target} ${ratio1 <= target ? 'met' : 'missed'}`;
    // Without a multi-core path, ours at every core is ours at one thread: say so.
    const oursAll = r.oursAll ?? null;
    const allCell = oursAll ? spread(oursAll) : `${spread(r.ours1)}, 1 thread (no multi-core path)`;
    const ratioAll = r.torchAll ? (oursAll ?? r.ours1).ms / r.torchAll.ms : null;
    const targetAll = report.config.targets.ratioAll?.[r.id];
    // A row with worker options is judged by its best option, in "Every core: which wins".
    const judgedBelow = (r.others ?? []).some((o) => !('refused' in o));
    // A step's BLAS threads leave part of the step on one thread, so its own CPU over wall cannot tell
    // a starved run; the window rows' options can, and they speak for the whole run.
    const starved = report.coresGiven?.given === false;
    const verdictAll =
      targetAll === undefined || ratioAll === null ? '' : judgedBelow ? ` (≤ ${targetAll}: best option below)` : ` (≤ ${targetAll} ${starved ? 'not judged' : ratioAll <= targetAll ? 'met' : 'missed'})`;
    lines.push(
      `| ${r.label} | ${spread(r.torch1)} | ${busy(r.torch1)} | ${spread(r.ours1)} | ${busy(r.ours1)} | ${fmt(ratio1)} (min ${fmt(ratioMin)}) | ${threadCell(r.torch1, r.ours1)} | ${faultCell(r.torch1, r.ours1)} | ${verdict} | ` +
        `${spread(r.torchAll)} | ${busy(r.torchAll)} | ${allCell} | ${busy(oursAll ?? r.ours1)} | ${fmt(ratioAll)}${verdictAll} |`,
    );
  }
  return lines;
}

/** Useful GFLOP/s of each row against each side's peak. */
export function rooflineTable(report: Report): string[] {
  const peak = report.roofline.wasmSimd;
  const gemm = report.roofline.torchGemm;
  const native = report.roofline.nativeGemm ?? null;
  const lines = [
    'Roofline, one thread. FLOPs per call: 2 x multiply-adds of the forward pass, the weight gradients and the input gradients',
    'except the first layer\'s (src/tutorial/measure.ts, stepFlops); elementwise work is not counted.',
    `Peaks: wasm SIMD f32x4 mul + add loop ${fmt(peak?.gflops, 1)} GFLOP/s` +
      (peak ? `, relaxed SIMD madd ${peak.relaxedGflops === null ? 'not available in this engine (Node 20: --experimental-wasm-relaxed-simd)' : `${fmt(peak.relaxedGflops, 1)} GFLOP/s`}` : ' (no wasm SIMD)') +
      `; PyTorch GEMM ${gemm ? `${gemm.size}x${gemm.size}` : ''} ${fmt(gemm?.one, 1)} GFLOP/s at 1 thread (busy ${gemm?.busyThreads.one ?? '?'}), ${fmt(gemm?.all ?? null, 1)} at ${report.cpus.count} (busy ${gemm?.busyThreads.all ?? '?'}).`,
    native
      ? `Native path: the addon's cblas_sgemm ${native.size}x${native.size} ${fmt(native.one, 1)} GFLOP/s at 1 thread (BLAS reports ${native.threads.one ?? '?'}), ${fmt(native.all, 1)} at ${report.cpus.count} (BLAS reports ${native.threads.all ?? '?'}): its rows are compared with this OpenBLAS peak.`
      : 'Native path: not run (no addon).',
    peak && gemm
      ? `At both peaks ours would take ${fmt(gemm.one / peak.gflops)} x PyTorch's time: the floor of the one-thread ratio for a wasm row bound by its products.`
      : '',
    '',
    '| row | MFLOP / call | PyTorch GFLOP/s | % of its GEMM peak | ours GFLOP/s | % of our peak (wasm SIMD, or OpenBLAS for native) |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of report.rows) {
    const t = gflops(r.flops, r.torch1);
    const o = gflops(r.flops, r.ours1);
    const isNative = r.id.endsWith('-native');
    const ours = isNative ? native?.one ?? null : peak?.gflops ?? null;
    const oursCell = o !== null && ours ? `${fmt((100 * o) / ours, 0)}% of ${isNative ? 'OpenBLAS' : 'wasm SIMD'}` : '—';
    lines.push(`| ${r.label} | ${fmt(r.flops / 1e6, 1)} | ${fmt(t, 1)} | ${t !== null && gemm ? fmt((100 * t) / gemm.one, 0) : '—'}% | ${fmt(o, 1)} | ${oursCell} |`);
  }
  return lines;
}

/** The accumulator's own work and the window's memory. */
export function accumulationTable(report: Report): string[] {
  const { accumulationSteps: k, microBatchSize: b } = report.config;
  const lines = [
    `Accumulation: a window of ${k} x ${b} against one step of ${k * b}, timed in turns (median wall ms); bookkeeping is the accumulator's`,
    "own work per window (adding, the finiteness check, averaging): addGradients on fixed gradients minus the applyGradients a plain step also pays;",
    'its share of a window is a share of CPU time (steady under load), its ms a difference of wall-clock medians.',
    '',
    `| model | backend | window / step (time) | bookkeeping share of a window | target | peak memory window / step | theory |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const a of report.accumulation) {
    const target = report.config.targets.bookkeepingShare[a.model];
    const verdict = target === undefined ? '' : `≤ ${100 * target}% ${a.bookkeepingShare <= target ? 'met' : 'missed'}`;
    lines.push(
      `| ${a.model} | ${a.backend} | ${fmt(a.timeRatio)} (${fmt(a.windowMs)} / ${fmt(a.stepMs)} ms) | ${fmt(100 * a.bookkeepingShare, 1)}% (${fmt(a.bookkeepingMs)} ms) | ${verdict} | ` +
        `${fmt(a.memoryRatio)} (${mib(a.peakBytes.window)} / ${mib(a.peakBytes.step)} MiB) | ${fmt(a.memoryRatioTheory)} |`,
    );
  }
  lines.push('', 'Theoretical memory ratio = (peak of a plain micro-batch step + 2 x parameter bytes) / peak of the plain big step (src/tutorial/measure.ts).');
  return lines;
}

/**
 * The accumulator's overhead read directly (issue 35): each window against its parts by hand,
 * timed in turns in one run, beside PyTorch's window against its own parts.
 */
export function overheadTable(report: Report): string[] {
  const { accumulationSteps: k, microBatchSize: b } = report.config;
  const rows = report.accumulation.filter((a) => a.partsMs !== undefined);
  if (rows.length === 0) return [];
  const target = report.config.targets.partsRatio;
  const lines = [
    `Accumulator overhead: a GradientAccumulator window of ${k} x ${b} against its parts by hand, timed in turns (median wall ms):`,
    `${k} x (the micro-batch's tf.variableGrads, loss read back) + one optimizer.applyGradients. PyTorch, one thread: its window`,
    `(loss / ${k}, .grad accumulated in place by backward) against ${k} backward passes with .grad set to None before each + one step.`,
    '',
    '| model | backend | window ms (min–max) | parts ms (min–max) | window / parts | target | PyTorch window / parts (ms) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const a of rows) {
    const verdict = target === undefined ? '' : `≤ ${target} ${a.partsRatio <= target ? 'met' : 'missed'}`;
    const torch = a.torchParts ? `${fmt(a.torchParts.ratio)} (${fmt(a.torchParts.windowMs)} / ${fmt(a.torchParts.partsMs)})` : '—';
    lines.push(
      `| ${a.model} | ${a.backend} | ${fmt(a.windowMs)} (${fmt(a.windowSpread[0])}–${fmt(a.windowSpread[1])}) | ${fmt(a.partsMs)} (${fmt(a.partsSpread?.[0])}–${fmt(a.partsSpread?.[1])}) | ${fmt(a.partsRatio)} | ${verdict} | ${torch} |`,
    );
  }
  return lines;
}

/** Step times on the other backends. */
export function backendTable(report: Report): string[] {
  if (report.backends.length === 0) return [];
  const lines = ['Other backends (not interleaved with PyTorch; median wall ms per step):', '', '| row | backend | ms / step (min–max) | busy | GFLOP/s |', '|---|---|---|---|---|'];
  for (const s of report.backends) {
    const cell = s.ms === null ? `fails: ${s.error}` : `${fmt(s.ms)} (${fmt(s.minMs)}–${fmt(s.maxMs)})`;
    lines.push(`| ${s.id} | ${s.backend} | ${cell} | ${busy({ busyThreads: s.busyThreads ?? null, cpuPerWall: s.cpuPerWall ?? null })} | ${s.ms === null ? '—' : fmt(s.flops / s.ms / 1e6, 1)} |`);
  }
  return lines;
}
