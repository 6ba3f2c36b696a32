import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headToHeadTable, overheadTable, type Report, type Stats } from '../../../scripts/bench/benchReport';

const stats = (ms: number, threads: number): Stats & { label: string; threads: number } => ({ label: 'x', threads, ms, minMs: ms - 1, maxMs: ms + 1, calls: 5, busyThreads: threads, cpuPerWall: threads, threadCpuMs: null, cpuMs: ms * threads });

/** A report with one native step row at every core (ours 4 ms, PyTorch 5 ms, target ≤ 1.3) and two accumulation entries. */
function report(): Report {
  return {
    cpus: { count: 2, model: 'test' },
    torch: { unavailable: 'test' },
    config: { targets: { ratio: {}, ratioAll: { 'mlp-64-native': 1.3 }, bookkeepingShare: {}, partsRatio: 1.05 }, accumulationSteps: 4, microBatchSize: 16 },
    rows: [{ id: 'mlp-64-native', label: 'MLP step', flops: 1, ours1: stats(6, 1), oursAll: stats(4, 2), torch1: null, torchAll: stats(5, 2), loadAverage: [1, 1] }],
    accumulation: [
      { backend: 'native (CBLAS)', model: 'mlp', windowMs: 6, partsMs: 5, partsRatio: 1.2, windowSpread: [5.5, 7], partsSpread: [4.5, 6], torchParts: { windowMs: 3, partsMs: 2.5, ratio: 1.2 } },
      { backend: 'native (CBLAS)', model: 'cnn', windowMs: 20, partsMs: 20, partsRatio: 1, windowSpread: [19, 21], partsSpread: [19, 22], torchParts: null },
    ],
  } as unknown as Report;
}

test('overheadTable: window against its parts per model and backend, the target, and PyTorch\'s same ratio', () => {
  const lines = overheadTable(report());
  assert.match(lines[0], /^Accumulator overhead: a GradientAccumulator window of 4 x 16 against its parts by hand/);
  assert.ok(lines.includes('| mlp | native (CBLAS) | 6.00 (5.50–7.00) | 5.00 (4.50–6.00) | 1.20 | ≤ 1.05 missed | 1.20 (3.00 / 2.50) |'), lines.join('\n'));
  assert.ok(lines.includes('| cnn | native (CBLAS) | 20.00 (19.00–21.00) | 20.00 (19.00–22.00) | 1.00 | ≤ 1.05 met | — |'));
  assert.deepEqual(overheadTable({ ...report(), accumulation: [] }), [], 'no table without accumulation entries');
});

test('headToHeadTable judges an every-core target only when the run got its cores', () => {
  const row = (r: Report) => headToHeadTable(r).find((l) => l.startsWith('| MLP step |')) as string;
  assert.match(row(report()), /\| 0\.80 \(≤ 1\.3 met\) \|$/);
  assert.match(row({ ...report(), coresGiven: { cores: 1.9, asked: 2, given: true } }), /\| 0\.80 \(≤ 1\.3 met\) \|$/);
  assert.match(row({ ...report(), coresGiven: { cores: 0.4, asked: 2, given: false } }), /\| 0\.80 \(≤ 1\.3 not judged\) \|$/);
});
