import { argumentError, isPositiveInteger } from '../../../core/errors';

/** Options of {@link renormSchedule}. */
export interface RenormScheduleArgs {
  /** Optimizer updates the run will apply. Required, a positive integer. */
  updates: number;
  /** Training calls (micro-batches) per update. Required, a positive integer. */
  accumulationSteps: number;
  /** Momentum of the moving statistics per logical batch, in [0, 1). Required. */
  movingMomentum: number;
}

/** A Batch Renormalization clipping schedule, in training calls (what the layer counts). */
export interface RenormSchedule {
  /** Calls with r = 1 and d = 0 (plain BatchNorm) while the moving statistics settle. */
  warmupSteps: number;
  /** Calls over which the bounds then open linearly to (rMax, dMax). */
  rampSteps: number;
  /** The update after which the bounds are fully open: (warmupSteps + rampSteps) / accumulationSteps. */
  openAfterUpdate: number;
}

/**
 * The warm-up and ramp of the experiment's Batch Renormalization layers, scaled to the run.
 *
 * The moving statistics need about 1 / (1 - movingMomentum) updates to forget their initial
 * values (10 at 0.9); before that, correcting towards them would correct towards noise, hence
 * the warm-up; the ramp then opens the bounds over as many updates again, as Ioffe (2017) does
 * over longer spans. A fixed 10 + 10 updates never opened the bounds in a 16-update run, and
 * would leave Batch Renorm untested in any short run: so each phase is also capped at a quarter
 * of the run, and the bounds are fully open by its middle at the latest, leaving at least half
 * the updates to train with the corrections.
 *
 * @throws ArgumentError naming the field if one is not as documented.
 */
export function renormSchedule(args: RenormScheduleArgs): RenormSchedule {
  const owner = 'renormSchedule';
  if (args === null || typeof args !== 'object') throw argumentError(owner, 'args', 'an object of options', args);
  const { updates, accumulationSteps, movingMomentum } = args;
  if (!isPositiveInteger(updates)) throw argumentError(owner, 'updates', 'a positive integer', updates);
  if (!isPositiveInteger(accumulationSteps)) throw argumentError(owner, 'accumulationSteps', 'a positive integer', accumulationSteps);
  if (typeof movingMomentum !== 'number' || !(movingMomentum >= 0 && movingMomentum < 1)) {
    throw argumentError(owner, 'movingMomentum', 'a number in [0, 1)', movingMomentum);
  }
  const settle = Math.round(1 / (1 - movingMomentum));
  const phaseUpdates = Math.min(settle, Math.floor(updates / 4));
  return {
    warmupSteps: phaseUpdates * accumulationSteps,
    rampSteps: phaseUpdates * accumulationSteps,
    openAfterUpdate: 2 * phaseUpdates,
  };
}
