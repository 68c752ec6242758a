/**
 * Trajectories and their groups. A completed trajectory is written in one transaction together with
 * its group's update, so a crash never leaves a group listing a trajectory that is not there (or the
 * reverse).
 */
import type { ScoredGroup, Trajectory } from '../contracts.ts';
import { write, type Store } from './db.ts';
import type { GroupRecord, TrajectoryRecord } from './records.ts';

function toRecord(t: Trajectory): TrajectoryRecord {
  return { ...t, n_steps: t.steps.length };
}

export function fromRecord(r: TrajectoryRecord): Trajectory {
  const { n_steps: _n, ...t } = r;
  return t;
}

function emptyGroup(t: Trajectory): GroupRecord {
  return {
    id: t.group_id,
    run_id: t.run_id,
    step: -1,
    env: t.env,
    task_id: t.task_id,
    trajectory_ids: [],
    scored: null,
    created_at: t.created_at,
  };
}

/**
 * Stores trajectories and adds each to its group (`group_id`; none when it is empty), all in one
 * transaction. Existing ids are overwritten (a re-judged trajectory replaces the old one).
 */
export async function putTrajectories(store: Store, trajectories: Trajectory[]): Promise<void> {
  if (trajectories.length === 0) return;
  const what = trajectories.length === 1 ? `trajectory ${trajectories[0].id}` : `${trajectories.length} trajectories`;
  await write(store, ['trajectories', 'groups'], what, async (tx) => {
    const groups = new Map<string, GroupRecord>();
    for (const t of trajectories) {
      await tx.objectStore('trajectories').put(toRecord(t));
      if (!t.group_id) continue;
      let group = groups.get(t.group_id) ?? (await tx.objectStore('groups').get(t.group_id));
      group ??= emptyGroup(t);
      if (!group.trajectory_ids.includes(t.id)) group = { ...group, trajectory_ids: [...group.trajectory_ids, t.id] };
      groups.set(t.group_id, group);
    }
    for (const group of groups.values()) await tx.objectStore('groups').put(group);
  });
}

export function putTrajectory(store: Store, trajectory: Trajectory): Promise<void> {
  return putTrajectories(store, [trajectory]);
}

export async function getTrajectory(store: Store, id: string): Promise<Trajectory | undefined> {
  const r = await store.db.get('trajectories', id);
  return r && fromRecord(r);
}

export async function getTrajectories(store: Store, ids: string[]): Promise<(Trajectory | undefined)[]> {
  const tx = store.db.transaction('trajectories');
  const records = await Promise.all(ids.map((id) => tx.objectStore('trajectories').get(id)));
  return records.map((r) => r && fromRecord(r));
}

export async function deleteTrajectories(store: Store, ids: string[]): Promise<void> {
  await write(store, ['trajectories', 'groups'], `the deletion of ${ids.length} trajectories`, async (tx) => {
    for (const id of ids) {
      const t = await tx.objectStore('trajectories').get(id);
      if (!t) continue;
      await tx.objectStore('trajectories').delete(id);
      const group = t.group_id ? await tx.objectStore('groups').get(t.group_id) : undefined;
      if (group)
        await tx.objectStore('groups').put({ ...group, trajectory_ids: group.trajectory_ids.filter((x) => x !== id) });
    }
  });
}

/** Records the scored group (Atropos fields) for `groupId`, and the step that trained on it. */
export async function putScoredGroup(
  store: Store,
  group: {
    group_id: string;
    run_id: string | null;
    step: number;
    env: string;
    task_id: string;
    scored: ScoredGroup;
    trajectory_ids?: string[];
  },
): Promise<void> {
  await write(store, ['groups'], `group ${group.group_id}`, async (tx) => {
    const old = await tx.objectStore('groups').get(group.group_id);
    const record: GroupRecord = {
      id: group.group_id,
      run_id: group.run_id,
      step: group.step,
      env: group.env,
      task_id: group.task_id,
      trajectory_ids: group.trajectory_ids ?? old?.trajectory_ids ?? [],
      scored: group.scored,
      created_at: old?.created_at ?? Date.now(),
    };
    await tx.objectStore('groups').put(record);
  });
}

/**
 * Records the per-token advantages an update trained a group with (by trajectory id; a member the update
 * did not use gets zeros) in its scored group, Atropos's `advantages` field. A group with no scored group
 * (an unjudged member) is left as it is.
 */
export async function setGroupAdvantages(
  store: Store,
  groupId: string,
  advantages: Record<string, number[]>,
): Promise<void> {
  await write(store, ['groups'], `the advantages of group ${groupId}`, async (tx) => {
    const record = await tx.objectStore('groups').get(groupId);
    if (!record?.scored) return;
    const perToken = record.trajectory_ids.map((id, i) => advantages[id] ?? record.scored!.tokens[i].map(() => 0));
    await tx.objectStore('groups').put({ ...record, scored: { ...record.scored, advantages: perToken } });
  });
}

export async function getGroup(store: Store, id: string): Promise<GroupRecord | undefined> {
  return store.db.get('groups', id);
}

/** Groups of a run with `fromStep ≤ step ≤ toStep`, by step (untrained groups have step -1). */
export async function listGroups(
  store: Store,
  runId: string,
  fromStep = -1,
  toStep = Infinity,
): Promise<GroupRecord[]> {
  return store.db.getAllFromIndex('groups', 'run_step', IDBKeyRange.bound([runId, fromStep], [runId, toStep]));
}
