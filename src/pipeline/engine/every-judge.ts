/**
 * Every configured judge, each built on its own: one that cannot be built (its key is not saved, its
 * model files are missing, a self-judge without a policy here) still takes part and votes null with the
 * reason. A run then warns with that judge's failure count and goes on with the others' votes, and the
 * Playground shows it instead of dropping it.
 */
import type { JudgeConfig } from '../../config/schema.ts';
import { createGroupJudges, createJudges, type JudgeDeps } from '../../judge/from-config.ts';
import { groupJudgeAsJudge } from '../../judge/group-judge.ts';
import { noScore, type Judge } from '../../judge/types.ts';

/** A group judge (`type: 'group'`) takes part here on one trajectory at a time (a group of one); runs leave it to the group step. */
export async function buildEveryJudge(configs: JudgeConfig[], deps: JudgeDeps): Promise<Judge[]> {
  return Promise.all(
    configs.map(async (config) => {
      try {
        if (config.type === 'group') return groupJudgeAsJudge(createGroupJudges([config], deps)[0]);
        return (await createJudges([config], deps))[0];
      } catch (err) {
        const reason = `could not be set up: ${err instanceof Error ? err.message : String(err)}`;
        return { id: config.id, score: async () => noScore(reason) } satisfies Judge;
      }
    }),
  );
}
