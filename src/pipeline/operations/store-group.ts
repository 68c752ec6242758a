/**
 * Storing a finished group, as a training run and a collection both do: its trajectories in one
 * transaction, then its scored group (the Atropos fields a trainer reads) in another.
 */
import type { ScoredGroup, Trajectory } from '../../contracts.ts';
import { toScoredGroup } from '../../rollout/scored-group.ts';
import { putScoredGroup, putTrajectories, type Store } from '../../store/index.ts';

/** Where a group belongs: its run, the update it was rolled out for (-1: a collection's), and the config's reward scale. */
export interface GroupPlace {
  runId: string;
  step: number;
  rewardScale: number;
}

/** Stores `group`; its scored group too when every member is judged and tokenized (returned, else null). */
export async function storeGroup(store: Store, group: Trajectory[], place: GroupPlace): Promise<ScoredGroup | null> {
  await putTrajectories(store, group);
  if (!group.length || !group.every((t) => t.judge_score !== null && t.tokens.length > 0)) return null;
  const scored = toScoredGroup(group, { rewardScale: place.rewardScale });
  const first = group[0];
  await putScoredGroup(store, {
    group_id: first.group_id,
    run_id: place.runId,
    step: place.step,
    env: first.env,
    task_id: first.task_id,
    scored,
    trajectory_ids: group.map((t) => t.id),
  });
  return scored;
}
