import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as ts from 'typescript';
import type { ParallelMeasurement, ProcessLimit } from '../../../src/parallel/index';
import { RECORDED_PARALLEL_WINDOW } from '../../../src/tutorial/index';
import type { RecordedParallelRun } from '../../../src/tutorial/index';
import { parallelRunRecord, RecordArgsError, recordModule, recordRefusal } from '../../../scripts/bench/parallelRecord';
import { assertThrowsMentioning } from '../../helpers';

const measurement = {
  accumulationSteps: 8,
  microBatchSize: 16,
  singleThreadMs: 120,
  parallel: [
    { workers: 2, sync: 'window', windowMs: 70, speedup: 120 / 70, coresUsed: 1.9, cpuMs: 133 },
    { workers: 2, sync: 'round', windowMs: 90, speedup: 120 / 90, coresUsed: 1.7, cpuMs: 150 },
  ],
} as unknown as ParallelMeasurement;
const limit = { processes: 2, speedup: 1.8 } as unknown as ProcessLimit;
const args = { command: 'node --import tsx scripts/bench/benchParallel.ts --record', recordedAt: new Date('2026-12-04T09:00:00Z'), cpu: 'AMD EPYC', cores: 2, loadAverage: 0.12, backend: 'wasm', model: 'CNN with BatchNorm' };

describe('parallelRunRecord', () => {
  test('keeps what chapter 8 shows, each trainer with its sync, speed-up and cores', () => {
    const r = parallelRunRecord(measurement, limit, args);
    assert.equal(r.recordedAt, '2026-12-04T09:00:00.000Z');
    assert.deepEqual(r.trainers.map((t) => [t.workers, t.sync, t.windowMs, t.coresUsed]), [[2, 'window', 70, 1.9], [2, 'round', 90, 1.7]]);
    assert.equal(r.processLimitSpeedup, 1.8);
    assert.equal(r.torchMs, null);
  });

  test('refuses a record without its command, date or trainers, naming what is accepted', () => {
    assertThrowsMentioning(() => parallelRunRecord(measurement, limit, { ...args, command: ' ' }), 'the command line that ran the bench');
    assertThrowsMentioning(() => parallelRunRecord(measurement, limit, { ...args, recordedAt: new Date('no date') }), 'a valid Date');
    assertThrowsMentioning(() => parallelRunRecord({ ...measurement, parallel: [] }, limit, args), 'at least one parallel trainer');
    assert.throws(() => parallelRunRecord(measurement, limit, { ...args, command: '' }), RecordArgsError);
  });

  test('is written as a module that holds the same record, and says the command that made it', () => {
    const r = parallelRunRecord(measurement, limit, args);
    const js = ts.transpileModule(recordModule(r), { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
    const exports: { RECORDED_PARALLEL_WINDOW?: RecordedParallelRun } = {};
    new Function('exports', 'require', js)(exports, require);
    assert.deepEqual(exports.RECORDED_PARALLEL_WINDOW, r);
    assert.match(recordModule(r), /Written by `node --import tsx scripts\/bench\/benchParallel\.ts --record`/);
  });
});

describe('the recorded run chapter 8 shows (src/tutorial/recorded/parallelWindow.ts)', () => {
  test('is one the bench would keep: 2 workers that had two cores, made by --record', () => {
    assert.equal(recordRefusal(RECORDED_PARALLEL_WINDOW), null);
    assert.match(RECORDED_PARALLEL_WINDOW.command, /^node --import tsx scripts\/bench\/benchParallel\.ts --record$/);
    assert.ok(!Number.isNaN(Date.parse(RECORDED_PARALLEL_WINDOW.recordedAt)));
  });

  test('a run whose workers did not get two cores, or without 2 workers, is refused by name (the negative case)', () => {
    const starved = parallelRunRecord({ ...measurement, parallel: [{ ...measurement.parallel[0], coresUsed: 1.01 }] } as ParallelMeasurement, limit, args);
    assert.match(recordRefusal(starved) ?? '', /got 1\.01 cores \(1\.5 needed\)/);
    const single = parallelRunRecord({ ...measurement, parallel: [{ ...measurement.parallel[0], workers: 1 }] } as ParallelMeasurement, limit, args);
    assert.match(recordRefusal(single) ?? '', /no 2-worker window/);
  });
});
