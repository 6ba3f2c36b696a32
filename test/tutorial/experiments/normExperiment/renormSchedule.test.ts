import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { renormSchedule } from '../../../../src/tutorial/experiments/normExperiment/renormSchedule';
import { assertThrowsMentioning, fcParameters } from '../../../helpers';

describe('renormSchedule', () => {
  test('long runs: 10 updates of warm-up and 10 of ramp at momentum 0.9, counted in calls', () => {
    assert.deepEqual(renormSchedule({ updates: 250, accumulationSteps: 16, movingMomentum: 0.9 }), { warmupSteps: 160, rampSteps: 160, openAfterUpdate: 20 });
  });

  test('short runs: the 16 updates that never opened the bounds now open them by update 8', () => {
    assert.deepEqual(renormSchedule({ updates: 16, accumulationSteps: 1, movingMomentum: 0.9 }), { warmupSteps: 4, rampSteps: 4, openAfterUpdate: 8 });
  });

  test('the bounds are always open by the middle of the run', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: 1, max: 64 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (updates, steps, m) => {
        const s = renormSchedule({ updates, accumulationSteps: steps, movingMomentum: m });
        return s.openAfterUpdate <= updates / 2 && s.warmupSteps + s.rampSteps === s.openAfterUpdate * steps && s.warmupSteps % steps === 0;
      }),
      fcParameters(200),
    );
  });

  test('names bad options', () => {
    assertThrowsMentioning(() => renormSchedule({ updates: 0, accumulationSteps: 1, movingMomentum: 0.9 }), 'renormSchedule', 'updates', 'positive integer');
    assertThrowsMentioning(() => renormSchedule({ updates: 8, accumulationSteps: 1.5, movingMomentum: 0.9 }), 'accumulationSteps');
    assertThrowsMentioning(() => renormSchedule({ updates: 8, accumulationSteps: 1, movingMomentum: 1 }), 'movingMomentum', '[0, 1)');
    assertThrowsMentioning(() => renormSchedule(null as never), 'args');
  });
});
