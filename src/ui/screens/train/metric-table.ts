/**
 * The metrics of one run as a table keyed by step, kept outside Svelte's reactivity: streamed
 * updates land here cheaply, and charts read aligned columns once per animation frame.
 */
import type { Metrics } from '../../../contracts.ts';

/** uPlot's aligned data: x values, then one y column per series (null where missing). */
export type AlignedColumns = [number[], ...(number | null)[][]];

export class MetricTable {
  private readonly rows = new Map<number, Metrics>();
  private steps: number[] = [];
  private readonly keys = new Set<string>();

  add(step: number, metrics: Metrics): void {
    let row = this.rows.get(step);
    if (!row) {
      row = {};
      this.rows.set(step, row);
      // Steps almost always arrive in order; insert in place otherwise.
      if (this.steps.length === 0 || step > this.steps[this.steps.length - 1]) this.steps.push(step);
      else
        this.steps.splice(
          this.steps.findIndex((s) => s > step),
          0,
          step,
        );
    }
    for (const [key, value] of Object.entries(metrics)) {
      if (!Number.isFinite(value)) continue;
      row[key] = value;
      this.keys.add(key);
    }
  }

  clear(): void {
    this.rows.clear();
    this.steps = [];
    this.keys.clear();
  }

  get size(): number {
    return this.steps.length;
  }

  /** Every metric name seen, in first-seen order. */
  keyList(): string[] {
    return [...this.keys];
  }

  latest(key: string): number | null {
    for (let i = this.steps.length - 1; i >= 0; i--) {
      const v = this.rows.get(this.steps[i])![key];
      if (v !== undefined) return v;
    }
    return null;
  }

  /** Columns for `keys` over the steps where at least one of them has a value. */
  columns(keys: readonly string[]): AlignedColumns {
    const xs: number[] = [];
    const ys: (number | null)[][] = keys.map(() => []);
    for (const step of this.steps) {
      const row = this.rows.get(step)!;
      if (!keys.some((k) => row[k] !== undefined)) continue;
      xs.push(step);
      keys.forEach((k, i) => ys[i].push(row[k] ?? null));
    }
    return [xs, ...ys];
  }
}
