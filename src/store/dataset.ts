/**
 * The trajectory dataset (`TrajectoryCommons`): filtered reads, stats and streaming over the
 * trajectories store. Nothing here holds more than one page in memory, so 100k trajectories stream
 * through an async iterator or page by page with a cursor token.
 *
 * Order: by `created_at` (then id) — oldest first, or newest first with `newestFirst`. A run or a
 * single env filter walks the [run_id, created_at] / [env, created_at] index; other filters are
 * applied to the records as they stream past.
 */
import type { Split, Trajectory } from '../contracts.ts';
import type { Store } from './db.ts';
import type { TrajectoryRecord } from './records.ts';
import { fromRecord } from './trajectories.ts';

export interface TrajectoryFilter {
  /** Task types: environment names. */
  envs?: string[];
  task_ids?: string[];
  /** Task-id prefix, e.g. `arith_tool/test/3/`. */
  task_prefix?: string;
  /** Inclusive bounds on `judge_score`; unscored trajectories fail any score bound. */
  min_score?: number;
  max_score?: number;
  /** Inclusive bounds on the number of steps (tool calls). */
  min_steps?: number;
  max_steps?: number;
  split?: Split;
  run_id?: string;
  success?: boolean;
  model_id?: string;
}

export interface PageOptions {
  /** Records per page (default 100). */
  pageSize?: number;
  /** Continue after this token (from the previous page's `next`). */
  cursor?: string | null;
  /** Skip this many matching records first (offset pagination; the cursor is cheaper for deep pages). */
  offset?: number;
  newestFirst?: boolean;
}

export interface Page {
  items: Trajectory[];
  /** Token for the next page, or null at the end. */
  next: string | null;
}

export interface DatasetStats {
  count: number;
  /** Mean judge score over scored trajectories; null when none is scored. */
  avg_score: number | null;
  scored: number;
  avg_steps: number | null;
  success_rate: number | null;
  by_env: Record<string, number>;
}

export function matches(t: TrajectoryRecord, f: TrajectoryFilter): boolean {
  if (f.run_id !== undefined && t.run_id !== f.run_id) return false;
  if (f.envs && !f.envs.includes(t.env)) return false;
  if (f.task_ids && !f.task_ids.includes(t.task_id)) return false;
  if (f.task_prefix !== undefined && !t.task_id.startsWith(f.task_prefix)) return false;
  if (f.split !== undefined && t.split !== f.split) return false;
  if (f.success !== undefined && t.success !== f.success) return false;
  if (f.model_id !== undefined && t.model_id !== f.model_id) return false;
  if (f.min_score !== undefined && (t.judge_score === null || t.judge_score < f.min_score)) return false;
  if (f.max_score !== undefined && (t.judge_score === null || t.judge_score > f.max_score)) return false;
  const steps = t.n_steps ?? t.steps.length;
  if (f.min_steps !== undefined && steps < f.min_steps) return false;
  if (f.max_steps !== undefined && steps > f.max_steps) return false;
  return true;
}

type IndexName = 'run_created' | 'env_created' | 'created_at';

function plan(f: TrajectoryFilter): { index: IndexName; range: IDBKeyRange | null } {
  if (f.run_id !== undefined)
    return { index: 'run_created', range: IDBKeyRange.bound([f.run_id, -Infinity], [f.run_id, Infinity]) };
  if (f.envs?.length === 1)
    return { index: 'env_created', range: IDBKeyRange.bound([f.envs[0], -Infinity], [f.envs[0], Infinity]) };
  return { index: 'created_at', range: null };
}

interface CursorToken {
  k: IDBValidKey;
  p: string;
}

function encodeToken(t: CursorToken): string {
  return JSON.stringify(t);
}

function decodeToken(s: string): CursorToken {
  try {
    const t = JSON.parse(s) as CursorToken;
    if (typeof t.p !== 'string' || t.k === undefined) throw new Error('fields');
    return t;
  } catch {
    throw new Error(`dataset: "${s.slice(0, 40)}" is not a page cursor from this API; start again without a cursor`);
  }
}

/** One page of matching trajectories, and the token for the next. One short readonly transaction. */
export async function queryTrajectories(
  store: Store,
  filter: TrajectoryFilter = {},
  options: PageOptions = {},
): Promise<Page> {
  const pageSize = options.pageSize ?? 100;
  if (!(pageSize >= 1)) throw new Error(`dataset: pageSize must be ≥ 1 (got ${pageSize})`);
  const { index, range } = plan(filter);
  const direction = options.newestFirst ? 'prev' : 'next';
  const tx = store.db.transaction('trajectories');
  let cursor = await tx.store.index(index).openCursor(range, direction);
  if (cursor && options.cursor) {
    const token = decodeToken(options.cursor);
    cursor = await cursor.continuePrimaryKey(token.k as never, token.p);
    if (cursor && cursor.primaryKey === token.p) cursor = await cursor.continue();
  }
  let skip = options.offset ?? 0;
  const items: Trajectory[] = [];
  let last: CursorToken | null = null;
  for (; cursor; cursor = await cursor.continue()) {
    if (!matches(cursor.value, filter)) continue;
    if (skip > 0) {
      skip--;
      continue;
    }
    items.push(fromRecord(cursor.value));
    last = { k: cursor.key as IDBValidKey, p: cursor.primaryKey };
    if (items.length === pageSize) break;
  }
  // Peek past the page's last record so the final page reports next = null.
  let more = false;
  if (cursor && items.length === pageSize) {
    for (cursor = await cursor.continue(); cursor; cursor = await cursor.continue()) {
      if (matches(cursor.value, filter)) {
        more = true;
        break;
      }
    }
  }
  return { items, next: more && last ? encodeToken(last) : null };
}

/** Every matching trajectory, streamed page by page (`pageSize` records in memory at a time). */
export async function* iterateTrajectories(
  store: Store,
  filter: TrajectoryFilter = {},
  options: { pageSize?: number; newestFirst?: boolean } = {},
): AsyncGenerator<Trajectory> {
  let cursor: string | null = null;
  do {
    const page: Page = await queryTrajectories(store, filter, { ...options, cursor });
    yield* page.items;
    cursor = page.next;
  } while (cursor);
}

/** Count, average score and steps, success rate and per-env counts of the matching trajectories. */
export async function trajectoryStats(store: Store, filter: TrajectoryFilter = {}): Promise<DatasetStats> {
  let count = 0,
    scored = 0,
    scoreSum = 0,
    stepSum = 0,
    judged = 0,
    successes = 0;
  const by_env: Record<string, number> = {};
  for await (const t of iterateTrajectories(store, filter, { pageSize: 500 })) {
    count++;
    stepSum += t.steps.length;
    if (t.judge_score !== null) {
      scored++;
      scoreSum += t.judge_score;
    }
    if (t.success !== null) {
      judged++;
      if (t.success) successes++;
    }
    by_env[t.env] = (by_env[t.env] ?? 0) + 1;
  }
  return {
    count,
    scored,
    by_env,
    avg_score: scored ? scoreSum / scored : null,
    avg_steps: count ? stepSum / count : null,
    success_rate: judged ? successes / judged : null,
  };
}

/** Number of matching trajectories; uses the index count alone when the filter needs no record. */
export async function countTrajectories(store: Store, filter: TrajectoryFilter = {}): Promise<number> {
  const onlyIndexed = Object.entries(filter)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k)
    .every((k) => k === 'run_id' || (k === 'envs' && filter.envs?.length === 1));
  if (onlyIndexed) {
    const { index, range } = plan(filter);
    return store.db.countFromIndex('trajectories', index, range ?? undefined);
  }
  return (await trajectoryStats(store, filter)).count;
}

/**
 * The dataset as one handle over the store: `load(filters)` streams the trajectories that pass them.
 * `for await (const t of commons.load({ envs: ['arith_tool'], min_score: 0.8 }))`.
 */
export class TrajectoryCommons {
  constructor(private readonly store: Store) {}
  load(
    filter: TrajectoryFilter = {},
    options: { pageSize?: number; newestFirst?: boolean } = {},
  ): AsyncGenerator<Trajectory> {
    return iterateTrajectories(this.store, filter, options);
  }
  page(filter: TrajectoryFilter = {}, options: PageOptions = {}): Promise<Page> {
    return queryTrajectories(this.store, filter, options);
  }
  stats(filter: TrajectoryFilter = {}): Promise<DatasetStats> {
    return trajectoryStats(this.store, filter);
  }
  count(filter: TrajectoryFilter = {}): Promise<number> {
    return countTrajectories(this.store, filter);
  }
}
