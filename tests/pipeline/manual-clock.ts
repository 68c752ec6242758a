import type { Clock } from '../../src/pipeline/engine/worker-pool.ts';

/**
 * A clock that moves only when a test moves it. `advance(ms)` jumps the time forward at once, as a thread
 * busy all that while sees it, and then runs the timers that came due meanwhile, late, in the order they
 * were due (with any they set that are due by then).
 */
export class ManualClock implements Clock {
  private time = 0;
  private nextId = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): number {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimeout(timer: unknown): void {
    this.timers.delete(timer as number);
  }

  advance(ms: number): void {
    this.time += ms;
    for (;;) {
      const due = [...this.timers].filter(([, t]) => t.at <= this.time).sort(([a, x], [b, y]) => x.at - y.at || a - b)[0];
      if (!due) return;
      this.timers.delete(due[0]);
      due[1].callback();
    }
  }
}
