/**
 * Trajectory explorer state: filters, a paged row cache for the windowed list (only the pages in
 * view are fetched), and the opened trajectory with its turns and tokens.
 */
import type { Trajectory } from '../../../contracts.ts';
import { errorMessage } from '../../lib/format.ts';
import { EMPTY_FILTER, type TrajectoryFilter, type TrajectoryRow } from '../../../pipeline/app/trajectory-filter.ts';
import type { RunLabel, TrajectoryDetailData, TrajectorySource } from './source.ts';

const PAGE_SIZE = 50;

export class TrajectoriesState {
  filter = $state<TrajectoryFilter>({ ...EMPTY_FILTER });
  envs = $state<string[]>([]);
  runs = $state<RunLabel[]>([]);
  count = $state(0);
  selected = $state<number | null>(null);
  opened = $state<Trajectory | null>(null);
  detail = $state<TrajectoryDetailData | null>(null);
  listError = $state<string | null>(null);
  detailError = $state<string | null>(null);
  loading = $state(false);
  /** Bumped when a page arrives; rows read it so the list re-renders. */
  pageVersion = $state(0);

  // Deliberately not reactive: rows are read through `row()`, which tracks `pageVersion` instead.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private pages = new Map<number, TrajectoryRow[]>();
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private pending = new Set<number>();
  private generation = 0;
  /** The rows the list last showed: a refresh reloads them itself (the list asks again only when its range changes). */
  private shown: [number, number] = [0, PAGE_SIZE];
  private searchTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly source: TrajectorySource) {}

  /** The run's name (several runs may share one, so the date-stamped id stays in its tooltip). */
  runName(id: string | null): string {
    if (id === null) return '—';
    return this.runs.find((r) => r.id === id)?.name ?? id;
  }

  async load(): Promise<void> {
    try {
      const facets = await this.source.facets();
      this.envs = facets.envs;
      this.runs = facets.runs;
    } catch (err) {
      this.listError = errorMessage(err);
    }
    await this.refresh();
  }

  /** Changes one filter; text search waits for a pause in typing. */
  setFilter<K extends keyof TrajectoryFilter>(key: K, value: TrajectoryFilter[K]): void {
    this.filter[key] = value;
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => void this.refresh(), key === 'search' ? 250 : 0);
  }

  clearFilters(): void {
    this.filter = { ...EMPTY_FILTER };
    void this.refresh();
  }

  async refresh(): Promise<void> {
    const generation = ++this.generation;
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    this.pages = new Map();
    this.pending.clear();
    this.selected = null;
    this.loading = true;
    try {
      const count = await this.source.count($state.snapshot(this.filter));
      if (generation !== this.generation) return;
      this.count = count;
      this.listError = null;
    } catch (err) {
      this.listError = errorMessage(err);
      this.count = 0;
    } finally {
      if (generation === this.generation) this.loading = false;
    }
    this.pageVersion++;
    // Pages of the previous generation were dropped; with an unchanged count the list would not ask again
    // and its rows would stay placeholders (a second visit, or a refresh while a run writes).
    if (generation === this.generation) this.ensureRange(...this.shown);
  }

  row(index: number): TrajectoryRow | undefined {
    void this.pageVersion;
    return this.pages.get(Math.floor(index / PAGE_SIZE))?.[index % PAGE_SIZE];
  }

  /** Called by the windowed list with the rows in view. */
  ensureRange = (start: number, end: number): void => {
    this.shown = [start, end];
    for (let page = Math.floor(start / PAGE_SIZE); page <= Math.floor(Math.max(start, end - 1) / PAGE_SIZE); page++)
      void this.loadPage(page);
  };

  private async loadPage(page: number): Promise<void> {
    if (this.pages.has(page) || this.pending.has(page) || page * PAGE_SIZE >= this.count) return;
    const generation = this.generation;
    this.pending.add(page);
    try {
      const rows = await this.source.page($state.snapshot(this.filter), page * PAGE_SIZE, PAGE_SIZE);
      if (generation !== this.generation) return;
      this.pages.set(page, rows);
      this.pageVersion++;
    } catch (err) {
      this.listError = errorMessage(err);
    } finally {
      this.pending.delete(page);
    }
  }

  async open(index: number): Promise<void> {
    this.selected = index;
    const row = this.row(index);
    if (!row) return;
    this.detailError = null;
    this.detail = null;
    try {
      const trajectory = await this.source.get(row.id);
      if (!trajectory)
        throw new Error(`Trajectory ${row.id} is no longer stored (deleted with its run?). Refresh the list.`);
      this.opened = trajectory;
      this.detail = await this.source.detail(trajectory);
    } catch (err) {
      this.detailError = errorMessage(err);
    }
  }

  close(): void {
    this.opened = null;
    this.detail = null;
  }
}
