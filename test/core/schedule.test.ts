import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAccumulationSteps, epochSchedule, resolveAccumulationSteps } from '../../src/core/schedule';
import { assertThrowsMentioning } from '../helpers';

describe('accumulation schedules', () => {
  it('epochSchedule switches at the given epochs', () => {
    const schedule = epochSchedule({ 0: 8, 4: 4, 10: 1 });
    const at = (epoch: number) => schedule({ epoch, updateStep: 0 });
    assert.deepEqual([0, 3, 4, 9, 10, 50].map(at), [8, 8, 4, 4, 1, 1]);
  });

  it('epochSchedule({ 1: 2, 3: 4 }): factor 1 before the first key, as Lightning\'s GradientAccumulationScheduler (issue 23, item 16)', () => {
    const schedule = epochSchedule({ 1: 2, 3: 4 });
    const at = (epoch: number) => schedule({ epoch, updateStep: 0 });
    assert.deepEqual([0, 1, 2, 3, 9].map(at), [1, 2, 2, 4, 4]);
  });

  it('epochSchedule rejects bad tables', () => {
    assertThrowsMentioning(() => epochSchedule({}), 'table', 'at least one entry', 'got an empty object');
    assertThrowsMentioning(() => epochSchedule({ 0: 0 }), 'table[0]', 'positive integer');
    assertThrowsMentioning(() => epochSchedule({ 0: 2, 1.5: 3 } as never), 'table', 'whole epochs');
    assertThrowsMentioning(() => epochSchedule(null as never), 'table');
  });

  it('checks the number or schedule a caller passes', () => {
    assert.equal(checkAccumulationSteps('X', 3), 3);
    const f = () => 2;
    assert.equal(checkAccumulationSteps('X', f), f);
    assertThrowsMentioning(() => checkAccumulationSteps('X', 0), 'X: accumulationSteps must be', 'positive integer', 'got 0');
    assertThrowsMentioning(() => checkAccumulationSteps('X', NaN), 'got NaN');
  });

  it('checks what a schedule returns, naming where it was evaluated', () => {
    assert.equal(resolveAccumulationSteps('X', () => 5, { epoch: 0, updateStep: 0 }), 5);
    assertThrowsMentioning(() => resolveAccumulationSteps('X', () => 1.5, { epoch: 2, updateStep: 7 }), 'epoch 2', 'update step 7', 'got 1.5');
  });
});
