/**
 * The one dataset export, for the Models & export screen and `spindle export trajectories` alike:
 * stored trajectories as HF chat JSONL or Parquet (every field), the train split unless a split is asked
 * for (`all`: every split), so a held-out item never reaches training data; or Atropos
 * scored-group JSONL (one run's groups, or every run's in turn: training groups only). Callers name the
 * file and say what an empty export means to their user.
 */
import type { Split } from '../../contracts.ts';
import { exportChatJsonl, exportFilter, exportParquet, exportScoredGroupsJsonl } from '../../export/from-store.ts';
import { countTrajectories, listRuns, type Store, type TrajectoryFilter } from '../../store/index.ts';

export type DatasetFormat = 'jsonl' | 'parquet' | 'atropos';

/** Which trajectories go out (chat JSONL and Parquet; Atropos groups are chosen by run only). */
export interface DatasetQuery {
  runId?: string;
  minScore?: number;
  env?: string;
  /** `all`: every split (held-out evaluation episodes too); unset: the train split. */
  split?: Split | 'all';
}

export interface Dataset {
  data: string | Uint8Array;
  /** Trajectories (JSONL, Parquet) or scored groups (Atropos) written; 0: nothing matched. */
  count: number;
}

const lines = (text: string) => text.split('\n').filter(Boolean).length;

/** The dataset in `format`; `onProgress` hears the rows done so far, and `signal` stops a long JSONL export. */
export async function exportDataset(
  store: Store,
  format: DatasetFormat,
  query: DatasetQuery = {},
  options: { onProgress?: (rows: number) => void; signal?: AbortSignal } = {},
): Promise<Dataset> {
  if (format === 'atropos') {
    const runs = query.runId ? [query.runId] : (await listRuns(store)).map((r) => r.id);
    let text = '';
    for (const id of runs) text += await exportScoredGroupsJsonl(store, id);
    return { data: text, count: lines(text) };
  }
  const filter: TrajectoryFilter = {
    run_id: query.runId,
    min_score: query.minScore,
    envs: query.env ? [query.env] : undefined,
    split: query.split === 'all' ? undefined : query.split,
  };
  const heldOut = { includeHeldOut: query.split === 'all' };
  if (format === 'parquet') {
    options.onProgress?.(0);
    return {
      data: await exportParquet(store, filter, heldOut),
      count: await countTrajectories(store, exportFilter(filter, heldOut)),
    };
  }
  let text = '';
  let count = 0;
  for await (const chunk of exportChatJsonl(store, filter, heldOut)) {
    options.signal?.throwIfAborted();
    text += chunk;
    count += lines(chunk);
    options.onProgress?.(count);
  }
  return { data: text, count };
}
