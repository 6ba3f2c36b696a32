/**
 * Refuses calls that would change an accumulator while one of its async calls is half-way:
 * a `setState` (it checks, awaits, then commits) or a `getState` that reads its optimizer through
 * the optimizer's own async `getWeights` (any optimizer not built into tfjs). Without it, a `step`
 * called before such a promise settles would land between the read and the write, and the state
 * saved or restored would mix two moments. A `getState` of a built-in optimizer takes its
 * snapshot at the call and needs no guard.
 */
export class PendingGuard {
  private readonly pending = new Map<string, number>();

  constructor(private readonly owner: string) {}

  /** Runs `body` (started now, synchronously) and marks `what` as pending until it settles. */
  async during<T>(what: string, body: () => Promise<T>): Promise<T> {
    this.pending.set(what, (this.pending.get(what) ?? 0) + 1);
    try {
      return await body();
    } finally {
      const left = (this.pending.get(what) ?? 1) - 1;
      if (left === 0) this.pending.delete(what);
      else this.pending.set(what, left);
    }
  }

  /** Throws a named error when anything is pending; `call` names the refused call. */
  check(call: string): void {
    const what = [...this.pending.keys()][0];
    if (what === undefined) return;
    throw new Error(`${this.owner}: ${call} was called while a ${what}() has not finished; await it first (the state would mix two moments). Nothing was changed.`);
  }
}
