/**
 * The Trajectories screen's operations over the store (src/store dataset API). Filters the store
 * understands go to it (indexed by run or env); search and judge disagreement are applied while streaming.
 */
import type { Trajectory } from '../../contracts.ts';
import { describeEnvironments } from '../../envs/index.ts';
import { ByteTokenizer } from '../../model/byte-tokenizer.ts';
import { countTrajectories, getGroup, getTrajectory, iterateTrajectories, listRuns, queryTrajectories, type Store, type TrajectoryFilter as StoreFilter } from '../../store/index.ts';
import { creditTurns, tokenAdvantages, turnCredits } from '../../train/advantages.ts';
import { matchesFilter, toRow, type TrajectoryFilter, type TrajectoryRow } from './trajectory-filter.ts';

const tokenizer = new ByteTokenizer();

function toStoreFilter(f: TrajectoryFilter): StoreFilter {
  const out: StoreFilter = {};
  if (f.env) out.envs = [f.env];
  if (f.split) out.split = f.split;
  if (f.runId) out.run_id = f.runId;
  if (f.minScore !== null) out.min_score = f.minScore;
  if (f.maxScore !== null) out.max_score = f.maxScore;
  if (f.minSteps !== null) out.min_steps = f.minSteps;
  if (f.maxSteps !== null) out.max_steps = f.maxSteps;
  return out;
}

const needsScan = (f: TrajectoryFilter) => f.search.trim() !== '' || f.minDisagreement !== null;

async function* scan(getStore: () => Promise<Store>, f: TrajectoryFilter): AsyncGenerator<Trajectory> {
  for await (const t of iterateTrajectories(await getStore(), toStoreFilter(f), { newestFirst: true })) if (matchesFilter(t, f)) yield t;
}

export function trajectoryOperations(getStore: () => Promise<Store>) {
  return {
    async facets() {
      const runs = await listRuns(await getStore());
      return { envs: describeEnvironments().map((e) => e.name), runs: runs.map((r) => ({ id: r.id, name: r.name })) };
    },
    async count(f: TrajectoryFilter) {
      if (!needsScan(f)) return countTrajectories(await getStore(), toStoreFilter(f));
      let n = 0;
      for await (const _ of scan(getStore, f)) n++;
      return n;
    },
    async page(f: TrajectoryFilter, offset: number, limit: number): Promise<TrajectoryRow[]> {
      if (!needsScan(f)) {
        const page = await queryTrajectories(await getStore(), toStoreFilter(f), { offset, pageSize: limit, newestFirst: true });
        return page.items.map(toRow);
      }
      const rows: TrajectoryRow[] = [];
      let index = 0;
      for await (const t of scan(getStore, f)) {
        if (index++ < offset) continue;
        rows.push(toRow(t));
        if (rows.length === limit) break;
      }
      return rows;
    },
    async get(id: string) {
      return (await getTrajectory(await getStore(), id)) ?? null;
    },
    async tokens(t: Trajectory) {
      if (t.tokens.length === 0) return null;
      // The advantage the trainer gave it, when its group was scored; otherwise the tokens, uncoloured.
      const group = await getGroup(await getStore(), t.group_id);
      const index = group?.trajectory_ids.indexOf(t.id) ?? -1;
      const advantages = index >= 0 ? group?.scored?.advantages?.[index] : undefined;
      const perToken = advantages ?? (group?.scored ? Array.from(tokenAdvantages(t, turnCredits(creditTurns(t), group.scored.scores[index] ?? 0, { gamma: 1 }))) : null);
      return {
        label: perToken ? 'advantage' : 'not trained yet',
        pieces: t.tokens.map((id, i) => ({ text: tokenizer.decode([id]), value: perToken && t.assistant_mask[i] ? (perToken[i] ?? 0) : t.assistant_mask[i] ? 0 : null })),
      };
    },
  };
}
