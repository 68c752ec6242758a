import type { Clock } from '../../src/pipeline/engine/worker-pool.ts';

/** A clock that moves only when a test moves it, for code that takes its timers from a Clock. */
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

  /** Moves the time on by `ms` as an idle thread sees it: each timer due meanwhile runs at its time. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (let due = this.nextDue(end); due; due = this.nextDue(end)) {
      this.time = Math.max(this.time, due.at);
      due.callback();
    }
    this.time = end;
  }

  /**
   * Moves the time on by `ms` at once, as a thread busy all that while sees it: the timers that came due
   * meanwhile run only then, late, in the order they were due.
   */
  jump(ms: number): void {
    this.time += ms;
    this.advance(0);
  }

  /** The earliest timer due by `end` (taken off the list), or null. */
  private nextDue(end: number): { at: number; callback: () => void } | null {
    let first: [number, { at: number; callback: () => void }] | null = null;
    for (const entry of this.timers) if (entry[1].at <= end && (!first || entry[1].at < first[1].at)) first = entry;
    if (!first) return null;
    this.timers.delete(first[0]);
    return first[1];
  }
}
