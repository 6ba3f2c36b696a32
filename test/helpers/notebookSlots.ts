import { measuresTime } from '../../scripts/notebooks/measuresTime';
import type { Slots } from '../../scripts/notebooks/slots';

// Running the tutorial's notebooks two at a time, as test:jupyter and test:deno do: one
// nbconvert run keeps about one of CI's two cores busy (a kernel, then Python between cells),
// so two runs side by side take little more than one. The chapters that measure time run alone
// (scripts/notebooks/measuresTime.ts).

/** The runs of one e2e part: two at a time, a notebook that measures time alone. */
export const NOTEBOOK_SLOTS = 2;

/** Runs `task` for `notebookFile` in `slots`: alone if the notebook measures time, else beside one other. */
export function inSlots<T>(slots: Slots, notebookFile: string, task: () => Promise<T>): Promise<T> {
  return slots.run(measuresTime(notebookFile) ? slots.capacity : 1, task);
}
