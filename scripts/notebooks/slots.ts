/**
 * A first-come, first-served limit on what runs at once: `run(weight, task)` starts `task` once
 * `weight` of the capacity is free and every earlier caller has started. A task of the whole
 * capacity runs alone.
 */
export class Slots {
  private free: number;
  private readonly waiting: { weight: number; start: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.free = capacity;
  }

  async run<T>(weight: number, task: () => Promise<T>): Promise<T> {
    if (!(weight >= 1 && weight <= this.capacity)) throw new RangeError(`Slots.run: weight ${weight}, accepted 1 to ${this.capacity}`);
    await new Promise<void>((start) => {
      this.waiting.push({ weight, start });
      this.grant();
    });
    try {
      return await task();
    } finally {
      this.free += weight;
      this.grant();
    }
  }

  private grant(): void {
    while (this.waiting.length > 0 && this.waiting[0].weight <= this.free) {
      const next = this.waiting.shift()!;
      this.free -= next.weight;
      next.start();
    }
  }
}
