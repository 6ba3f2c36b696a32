import { argumentError, verbatim, describe, isPositiveInteger } from './errors';

/** Where training is when a new accumulation window starts. */
export interface TrainingProgress {
  /** Epochs completed so far (0 during the first epoch). */
  epoch: number;
  /** Optimizer updates applied so far. */
  updateStep: number;
}

/**
 * A schedule for the number of micro-batches per update, evaluated once at the start of every
 * window (like Lightning's `GradientAccumulationScheduler` and Optax's `every_k_schedule`).
 */
export type AccumulationSchedule = (progress: TrainingProgress) => number;

/**
 * A schedule that changes `accumulationSteps` at given epochs: `epochSchedule({ 0: 8, 4: 4 })`
 * accumulates 8 micro-batches per update in epochs 0-3 and 4 from epoch 4 on. Epochs before the
 * first key accumulate nothing (factor 1), as in Lightning's `GradientAccumulationScheduler`:
 * `epochSchedule({ 1: 2, 3: 4 })` is 1 in epoch 0, 2 in epochs 1-2 and 4 from epoch 3 on.
 *
 * @param table Maps a starting epoch to the `accumulationSteps` used from that epoch on: at
 *   least one entry, whole epochs ≥ 0 as keys, positive integers as values.
 */
export function epochSchedule(table: Record<number, number>): AccumulationSchedule {
  const owner = 'epochSchedule';
  if (table === null || typeof table !== 'object') {
    throw argumentError(owner, 'table', 'an object mapping starting epochs to accumulationSteps, e.g. { 0: 8, 4: 4 }', table);
  }
  const entries = Object.entries(table).map(([epoch, steps]) => [Number(epoch), steps] as const);
  for (const [epoch, steps] of entries) {
    if (!Number.isInteger(epoch) || epoch < 0) {
      throw argumentError(owner, 'table', 'keyed by whole epochs 0, 1, 2, …', verbatim(`a key ${describe(epoch)}`));
    }
    if (!isPositiveInteger(steps)) {
      throw argumentError(owner, `table[${epoch}]`, 'a positive integer (1, 2, 3, …)', steps);
    }
  }
  if (entries.length === 0) {
    throw argumentError(owner, 'table', 'an object with at least one entry { epoch: accumulationSteps }, e.g. { 0: 8, 4: 4 }', verbatim('an empty object'));
  }
  // Note: as Lightning does, a table without epoch 0 starts with factor 1 (no accumulation).
  if (!entries.some(([epoch]) => epoch === 0)) entries.push([0, 1]);
  const sorted = entries.sort((a, b) => a[0] - b[0]);
  const schedule: AccumulationSchedule = ({ epoch }) => {
    let steps = sorted[0][1];
    for (const [start, value] of sorted) if (epoch >= start) steps = value;
    return steps;
  };
  tables.set(schedule, Object.fromEntries(sorted));
  return schedule;
}

/** The tables of the schedules `epochSchedule` made, so that they can be saved with a model. */
const tables = new WeakMap<AccumulationSchedule, Record<number, number>>();

/** The table an `epochSchedule` was built from (a copy), or null for any other function. */
export function epochScheduleTable(schedule: AccumulationSchedule): Record<number, number> | null {
  const table = tables.get(schedule);
  return table === undefined ? null : { ...table };
}

/** Reads `accumulationSteps` for a window, checking what a schedule returned. */
export function resolveAccumulationSteps(
  owner: string,
  accumulationSteps: number | AccumulationSchedule,
  progress: TrainingProgress,
): number {
  if (typeof accumulationSteps === 'number') return accumulationSteps;
  const steps = accumulationSteps(progress);
  if (!isPositiveInteger(steps)) {
    throw argumentError(
      owner,
      `accumulationSteps (the schedule's value at epoch ${progress.epoch}, update step ${progress.updateStep})`,
      'a positive integer (1, 2, 3, …)',
      steps,
    );
  }
  return steps;
}

/** Checks the `accumulationSteps` argument itself: a positive integer or a schedule function. */
export function checkAccumulationSteps(owner: string, accumulationSteps: unknown): number | AccumulationSchedule {
  if (typeof accumulationSteps === 'function') return accumulationSteps as AccumulationSchedule;
  if (!isPositiveInteger(accumulationSteps)) {
    throw argumentError(
      owner,
      'accumulationSteps',
      'a positive integer (1, 2, 3, …) or a schedule function ({ epoch, updateStep }) => number',
      accumulationSteps,
    );
  }
  return accumulationSteps;
}
