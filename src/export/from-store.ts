/** Exports straight from the store, streaming: the dataset filters pick what goes out. */
import type { ScoredGroup } from '../contracts.ts';
import type { Store } from '../store/db.ts';
import { iterateTrajectories, type TrajectoryFilter } from '../store/dataset.ts';
import { listGroups } from '../store/trajectories.ts';
import { trajectoryToChatRow } from './hf-chat.ts';
import { jsonlChunks, toJsonl } from './jsonl.ts';
import { trajectoriesToParquet } from './parquet.ts';
import { scoredGroupsToJsonl } from './atropos.ts';
import { dpoRows, sftRows, type PairOptions } from './pairs.ts';

export interface HeldOutOption {
  /** Also export held-out (test and validation split) trajectories when the filter names no split. */
  includeHeldOut?: boolean;
}

/**
 * Every trajectory export is training data (SFT, TRL, another trainer): unless the filter names a split,
 * or `includeHeldOut` is set, only train-split trajectories, so a held-out item never leaks into what a
 * model is fine-tuned on (a run's evaluation episodes are stored with their test or validation split).
 */
export function exportFilter(filter: TrajectoryFilter = {}, options: HeldOutOption = {}): TrajectoryFilter {
  return filter.split === undefined && !options.includeHeldOut ? { ...filter, split: 'train' } : filter;
}

/** HF chat JSONL, as text chunks (write them to a file or a Blob). */
export function exportChatJsonl(
  store: Store,
  filter: TrajectoryFilter = {},
  options: HeldOutOption = {},
): AsyncGenerator<string> {
  return jsonlChunks(iterateTrajectories(store, exportFilter(filter, options), { pageSize: 500 }), trajectoryToChatRow);
}

/** Full-trajectory JSONL (every field; what `importTrajectories` reads as 'trajectory-jsonl'). */
export function exportTrajectoryJsonl(
  store: Store,
  filter: TrajectoryFilter = {},
  options: HeldOutOption = {},
): AsyncGenerator<string> {
  return jsonlChunks(iterateTrajectories(store, exportFilter(filter, options), { pageSize: 500 }));
}

/** Parquet with every field. */
export function exportParquet(
  store: Store,
  filter: TrajectoryFilter = {},
  options: HeldOutOption = {},
): Promise<Uint8Array> {
  return trajectoriesToParquet(iterateTrajectories(store, exportFilter(filter, options), { pageSize: 1000 }));
}

async function scoredGroups(store: Store, runId: string): Promise<ScoredGroup[]> {
  return (await listGroups(store, runId)).flatMap((g) => (g.scored ? [g.scored] : []));
}

export async function exportScoredGroupsJsonl(store: Store, runId: string): Promise<string> {
  return scoredGroupsToJsonl(await scoredGroups(store, runId));
}

export async function exportSftJsonl(store: Store, runId: string, options?: PairOptions): Promise<string> {
  return toJsonl(sftRows(await scoredGroups(store, runId), options));
}

export async function exportDpoJsonl(store: Store, runId: string, options?: PairOptions): Promise<string> {
  return toJsonl(dpoRows(await scoredGroups(store, runId), options));
}
