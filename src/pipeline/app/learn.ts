/**
 * The Learn screen's lesson from the store: the newest group a trainer consumed (step ≥ 0) in the newest
 * run that has one, with its trajectories. Ratios are not stored per sample, so the lesson shows the
 * first-pass ratio of 1 and says so.
 */
import { ByteTokenizer } from '../../model/byte-tokenizer.ts';
import { getTrajectories, listGroups, listRuns, type Store } from '../../store/index.ts';
import { groupStats } from './group-stats.ts';

const tokenizer = new ByteTokenizer();

/** The newest trained batch of the newest run that has one, or null. */
export async function latestLesson(store: Store) {
  const runs = (await listRuns(store)).sort((a, b) => b.updated - a.updated);
  for (const run of runs) {
    const groups = (await listGroups(store, run.id)).filter((g) => g.step >= 0 && g.scored);
    if (!groups.length) continue;
    const step = Math.max(...groups.map((g) => g.step));
    const batch = groups.filter((g) => g.step === step);
    const lessonGroups = await Promise.all(batch.map(async (g) => {
      const trajectories = (await getTrajectories(store, g.trajectory_ids)).filter((t) => t !== undefined);
      const stats = groupStats(trajectories.map((t) => t.judge_score), run.config.grpo.advantage, run.config.training.reward_scale);
      return {
        env: g.env,
        task: trajectories[0]?.task_description ?? g.task_id,
        samples: trajectories.map((t, i) => ({
          trajectory_id: t.id, final_response: t.final_response, score: t.judge_score, ratio: null,
          tokens: t.tokens.length ? t.tokens.map((id, k) => ({ text: tokenizer.decode([id]), value: t.assistant_mask[k] ? stats.advantages[i] : null })) : null,
        })),
      };
    }));
    return {
      run_id: run.id, step, groups: lessonGroups, advantage: run.config.grpo.advantage, reward_scale: run.config.training.reward_scale,
      clip_epsilon: run.config.grpo.clip_epsilon, clip_epsilon_high: run.config.grpo.clip_epsilon_high,
    };
  }
  return null;
}
