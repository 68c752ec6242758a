/**
 * The Trajectories screen's operations over the store (src/store dataset API). Filters the store
 * understands go to it (indexed by run or env); search and judge disagreement are applied while streaming.
 */
import type { Trajectory } from '../../contracts.ts';
import { describeEnvironments } from '../../envs/index.ts';
import { ByteTokenizer } from '../../tokenizer/byte-tokenizer.ts';
import {
  countTrajectories,
  getGroup,
  getRun,
  getTrajectories,
  getTrajectory,
  iterateTrajectories,
  listRuns,
  queryTrajectories,
  type Store,
  type TrajectoryFilter as StoreFilter,
} from '../../store/index.ts';
import { tokenAdvantages } from '../../train/advantages.ts';
import { userEnvironments } from './environments.ts';
import {
  creditConfig,
  episodeTurns,
  groupCredits,
  uncredited,
  untrainedStatus,
  type EpisodeTurns,
  type TrajectoryCredit,
} from './episode-turns.ts';
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
  for await (const t of iterateTrajectories(await getStore(), toStoreFilter(f), { newestFirst: true }))
    if (matchesFilter(t, f)) yield t;
}

export function trajectoryOperations(getStore: () => Promise<Store>) {
  return {
    async facets() {
      const runs = await listRuns(await getStore());
      const own = await userEnvironments(getStore, () => ({})).names();
      return {
        envs: [...new Set([...describeEnvironments().map((e) => e.name), ...own])],
        runs: runs.map((r) => ({ id: r.id, name: r.name })),
      };
    },
    async count(f: TrajectoryFilter) {
      if (!needsScan(f)) return countTrajectories(await getStore(), toStoreFilter(f));
      let n = 0;
      for await (const _ of scan(getStore, f)) n++;
      return n;
    },
    async page(f: TrajectoryFilter, offset: number, limit: number): Promise<TrajectoryRow[]> {
      if (!needsScan(f)) {
        const page = await queryTrajectories(await getStore(), toStoreFilter(f), {
          offset,
          pageSize: limit,
          newestFirst: true,
        });
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
    /** Its turns and its tokens, each with the credit the trainer gave it (from its stored group and its run's config). */
    async detail(t: Trajectory) {
      const store = await getStore();
      const credit = await storedCredit(store, t);
      return { turns: episodeTurns(t, credit), tokens: tokenDetail(t, credit), group: await storedGroup(store, t) };
    },
  };
}

/**
 * A stored trajectory's credit: its group as the trainer consumed it (a scored group with a step), the
 * group's trajectories, and the config of the run that trained on it. Anything missing means it was
 * not trained on (yet), and the screen says so instead of showing a number.
 */
export async function storedCredit(store: Store, t: Trajectory): Promise<TrajectoryCredit> {
  const status = untrainedStatus(t);
  if (status !== 'not_trained') return uncredited(status);
  const group = await getGroup(store, t.group_id);
  if (!group?.scored || group.step < 0 || !group.run_id || !group.trajectory_ids.includes(t.id))
    return uncredited('not_trained');
  const run = await getRun(store, group.run_id);
  if (!run) return uncredited('not_trained');
  const members = (await getTrajectories(store, group.trajectory_ids)).filter((m) => m !== undefined);
  const credits = groupCredits(members, creditConfig(run.config));
  const credit = credits[members.findIndex((m) => m.id === t.id)] ?? uncredited('not_trained');
  // The advantages the update stored are the data; the turn credits above explain them.
  const stored = group.scored.advantages?.[group.trajectory_ids.indexOf(t.id)];
  return stored ? { ...credit, stored } : credit;
}

/**
 * The samples of a stored trajectory's group, it among them, in the group's order, each with its turns
 * credited as the trainer credited them (`storedCredit`); empty when it was sampled alone.
 */
export async function storedGroup(
  store: Store,
  t: Trajectory,
): Promise<{ trajectory: Trajectory; turns: EpisodeTurns }[]> {
  const group = await getGroup(store, t.group_id);
  if (!group || group.trajectory_ids.length < 2) return [];
  const members = (await getTrajectories(store, group.trajectory_ids)).filter((m) => m !== undefined);
  return Promise.all(
    members.map(async (m) => ({ trajectory: m, turns: episodeTurns(m, await storedCredit(store, m)) })),
  );
}

/** What each credit status says on the token view. */
const TOKEN_LABEL: Record<TrajectoryCredit['status'], string> = {
  trained: 'advantage',
  flat: 'advantage (flat group: skipped)',
  not_trained: 'not trained yet',
  held_out: 'held-out: never trained on',
  unscored: 'unscored: not trained on',
  no_tokens: 'no tokens',
};

/**
 * The trajectory's tokens (decoded one by one) with the credit of their turn on policy tokens
 * (`tokenAdvantages`, what the update used), 0 on policy tokens when it has none, null on prompt and
 * tool output. Null when it has no tokens.
 */
export function tokenDetail(t: Trajectory, credit: TrajectoryCredit) {
  if (t.tokens.length === 0) return null;
  const perToken = credit.stored ?? (credit.credits ? tokenAdvantages(t, credit.credits) : null);
  return {
    label: TOKEN_LABEL[credit.status],
    pieces: t.tokens.map((id, i) => ({
      text: tokenizer.decode([id]),
      value: t.assistant_mask[i] ? (perToken?.[i] ?? 0) : null,
    })),
  };
}
