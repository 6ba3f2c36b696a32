import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Report, Stats } from '../../../scripts/bench/benchReport';
import { coresGiven, coresGivenLine, everyCoreSplits, everyCoreTable, rowOptions, splitLabel, warmUp, WARMUP_BLOCK, winner } from '../../../scripts/bench/everyCore';

const stats = (ms: number, threads: number, label = 'x'): Stats & { label: string; threads: number } => ({ label, threads, ms, minMs: ms - 1, maxMs: ms + 1, calls: 5, busyThreads: threads, cpuPerWall: threads, threadCpuMs: null, cpuMs: ms * threads });

test('everyCoreSplits: one worker per core, then every workers x BLAS threads that fills the cores, or 2 x 2 to show as refused', () => {
  assert.deepEqual(everyCoreSplits(2), [{ workers: 2, blasThreads: 1 }, { workers: 2, blasThreads: 2 }]);
  assert.deepEqual(everyCoreSplits(3), [{ workers: 3, blasThreads: 1 }, { workers: 2, blasThreads: 2 }], 'a prime count has no split: 2 x 2 is listed to be refused');
  assert.deepEqual(everyCoreSplits(4), [{ workers: 4, blasThreads: 1 }, { workers: 2, blasThreads: 2 }]);
  assert.deepEqual(everyCoreSplits(8), [{ workers: 8, blasThreads: 1 }, { workers: 2, blasThreads: 4 }, { workers: 4, blasThreads: 2 }]);
  for (const cores of [4, 6, 8, 12]) for (const s of everyCoreSplits(cores)) assert.ok(s.workers * s.blasThreads <= cores, `${cores} cores: ${JSON.stringify(s)}`);
  assert.equal(splitLabel({ workers: 2, blasThreads: 1 }), 'ParallelAccumulator, 2 workers x 1 BLAS thread');
  assert.equal(splitLabel({ workers: 1, blasThreads: 2 }), 'ParallelAccumulator, 1 worker x 2 BLAS threads');
});

/** A report with one native window row (one thread 10 ms, BLAS 8 ms, workers 6 ms, both refused; PyTorch 4 ms) and one row without worker options. */
function report(): Report {
  const row = (id: string, others: NonNullable<Report['rows'][number]['others']> | undefined): Report['rows'][number] => ({
    id,
    label: id,
    flops: 1,
    ours1: stats(10, 1),
    oursAll: stats(8, 2),
    torch1: null,
    torchAll: stats(4, 2),
    loadAverage: [1, 1],
    ...(others ? { others } : {}),
  });
  return {
    cpus: { count: 2, model: 'test' },
    config: { targets: { ratio: {}, ratioAll: {}, bookkeepingShare: {} }, accumulationSteps: 4, microBatchSize: 16 },
    rows: [
      row('mlp-64-native', undefined),
      row('mlp-window-4x16-native', [
        stats(6, 2, 'ParallelAccumulator, 2 workers x 1 BLAS thread'),
        { label: 'ParallelAccumulator, 2 workers x 2 BLAS threads', threads: 4, refused: 'ParallelAccumulator: nativeThreads must be …' },
      ]),
    ],
  } as unknown as Report;
}

test('rowOptions and winner: the timed options in order, the fastest median wins, a refused one never does', () => {
  const options = rowOptions(report().rows[1]);
  assert.deepEqual(options.map((o) => [o.label, o.threads, o.ms]), [
    ['one thread', 1, 10],
    ['BLAS at 2 threads, main thread', 2, 8],
    ['ParallelAccumulator, 2 workers x 1 BLAS thread', 2, 6],
    ['ParallelAccumulator, 2 workers x 2 BLAS threads', 4, null],
  ]);
  assert.equal(winner(options)?.label, 'ParallelAccumulator, 2 workers x 1 BLAS thread');
  assert.equal(winner(options.slice(0, 2))?.label, 'BLAS at 2 threads, main thread');
  assert.equal(winner(options.slice(3)), null, 'nothing timed, no winner');
});

test('everyCoreTable: ratios to one thread and to PyTorch at every core, the refusal verbatim, a winner per row', () => {
  const lines = everyCoreTable(report());
  assert.ok(lines.includes('| mlp-window-4x16-native | one thread | 1 | 1.00 | 10.00 | 10.00 (9.00–11.00) | 1.00 | 2.50 |'), lines.join('\n'));
  assert.ok(lines.includes('| mlp-window-4x16-native | ParallelAccumulator, 2 workers x 1 BLAS thread | 2 | 2.00 | 12.00 | 6.00 (5.00–7.00) | 0.60 | 1.50 |'));
  assert.ok(lines.includes('| mlp-window-4x16-native | ParallelAccumulator, 2 workers x 2 BLAS threads | 4 | — | — | refused: ParallelAccumulator: nativeThreads must be … | — | — |'));
  assert.ok(lines.includes('mlp-window-4x16-native: ParallelAccumulator, 2 workers x 1 BLAS thread wins (6.00 ms, 0.60 x one thread, 1.50 x PyTorch at 2 threads).'));
  assert.ok(!lines.some((l) => l.includes('mlp-64-native')), 'rows without worker options stay out');
  // With an every-core target the verdict says whether the winner meets it.
  for (const [target, verdict] of [[1.5, 'met'], [1.3, 'missed']] as const) {
    const targeted = report();
    targeted.config.targets.ratioAll = { 'mlp-window-4x16-native': target };
    assert.ok(everyCoreTable(targeted).includes(`mlp-window-4x16-native: ParallelAccumulator, 2 workers x 1 BLAS thread wins (6.00 ms, 0.60 x one thread, 1.50 x PyTorch at 2 threads; target ≤ ${target} ${verdict}).`), `target ${target}`);
  }
  const none = report();
  none.rows = none.rows.slice(0, 1);
  assert.deepEqual(everyCoreTable(none), [], 'no table without worker options');
});

test('warmUp: blocks of windows until the time is up, at least one, each block its median', async () => {
  let calls = 0;
  // A clock that only the windows move, so that no assertion depends on the machine's speed:
  // windows that get faster, as V8 optimizes, 3 ms, then 1 ms from the 30th call on.
  let clock = 0;
  const now = () => clock;
  const window = async (): Promise<void> => {
    calls++;
    clock += calls < 30 ? 3 : 1;
  };
  const once = await warmUp(window, 0, now);
  assert.equal(calls, WARMUP_BLOCK, 'one block when no time is asked for');
  assert.equal(once.length, 1);
  calls = 0;
  const curve = await warmUp(window, 0.2, now);
  // 200 ms: a first block of 25 x 3 ms, then blocks of (4 x 3 + 21 x 1) ms and 25 x 1 ms until 200 ms.
  assert.deepEqual(curve, [3, 1, 1, 1, 1, 1], `${calls} calls, ${curve.length} blocks`);
  assert.equal(calls, curve.length * WARMUP_BLOCK);
  assert.ok(curve[0] >= 2.5 && curve[curve.length - 1] < 2, `the curve shows the speed-up: ${curve.join(', ')}`);

  const withCurve = report();
  (withCurve.rows[1].others![0] as { warmupCurve?: number[] }).warmupCurve = [22, 14.5, 12];
  assert.ok(everyCoreTable(withCurve).includes(`mlp-window-4x16-native, ParallelAccumulator, 2 workers x 1 BLAS thread: warm-up before its rounds, median ms per block of ${WARMUP_BLOCK} windows: 22.00, 14.50, 12.00 (first 22.00, last 12.00).`));
  assert.ok(!everyCoreTable(report()).some((l) => l.includes('warm-up before')), 'no warm-up line without a curve');
});

test('coresGiven: a run whose every-core options got under their cores less half a core is not judged, and says so', () => {
  const full = report();
  assert.deepEqual(coresGiven(full), { cores: 2, asked: 2, given: true });
  assert.equal(coresGivenLine(full), 'Every core: the options got up to 2.00 cores of CPU time per second of the 2 they asked for; the machine gave this run its cores.');
  // One core for the whole process, as Linux's autogroup gives a busy machine's session.
  const starved = report();
  const row = starved.rows[1];
  row.oursAll = { ...row.oursAll!, cpuPerWall: 1.02 };
  (row.others![0] as Stats).cpuPerWall = 1.1;
  assert.deepEqual(coresGiven(starved), { cores: 1.1, asked: 2, given: false });
  assert.equal(coresGivenLine(starved), 'Every core: the options got at most 1.10 cores of CPU time per second of the 2 they asked for: the machine did not give this run 2 cores, so no every-core target is judged.');
  starved.config.targets.ratioAll = { 'mlp-window-4x16-native': 1.5 };
  assert.ok(everyCoreTable(starved).includes('mlp-window-4x16-native: ParallelAccumulator, 2 workers x 1 BLAS thread wins (6.00 ms, 0.60 x one thread, 1.50 x PyTorch at 2 threads; target ≤ 1.5 not judged: the machine did not give this run its cores).'));
  const none = report();
  none.rows = none.rows.slice(0, 1);
  assert.equal(coresGiven(none), null);
  assert.match(coresGivenLine(none), /^Every core: no option of two or more threads was timed/);
});
