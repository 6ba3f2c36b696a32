import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { measureProcessLimit } from '../../src/parallel/processLimit';

const FIXTURES = join(__dirname, '..', 'fixtures', 'parallelLosses.ts');

describe('measureProcessLimit', () => {
  it('times the window alone and in two processes at once, and reports their throughput ratio', async () => {
    const limit = await measureProcessLimit({ model: { module: FIXTURES, export: 'tinyModel', args: { seed: 1 } }, accumulationSteps: 2, microBatchSize: 2, windows: 2, rounds: 1, warmupWindows: 0 });
    assert.equal(limit.processes, 2);
    assert.equal(limit.togetherMs.length, 2);
    assert.ok(limit.aloneMs > 0 && limit.togetherMs.every((t) => t > 0));
    const sorted = [...limit.togetherMs].sort((a, b) => a - b);
    assert.ok(Math.abs(limit.speedup - (2 * limit.aloneMs) / ((sorted[0] + sorted[1]) / 2)) < 1e-9);
  });

  it('rejects bad arguments by name, before starting a process', async () => {
    await assert.rejects(measureProcessLimit({ model: null as never }), /measureProcessLimit: model must be \{ module, export, args\? \}/);
    await assert.rejects(measureProcessLimit({ model: { module: FIXTURES, export: 'tinyModel' }, processes: 0 }), /processes must be a positive integer/);
  });
});
