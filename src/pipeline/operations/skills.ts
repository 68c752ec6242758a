/**
 * The fourth workflow of docs/workflows.md, skills → instructions → SFT, as two operations
 * (export/skills.ts holds the document format and the rules):
 * - `distilSkills`: stored trajectories become one skill document per task type (environment and
 *   level), usage = successful episodes, success rate = successes / attempts, the successful episodes
 *   kept as worked examples; each skill is also kept in the store;
 * - `skillInstructions`: the examples of skills with enough successful uses and a
 *   high enough success rate become instruction rows in the agent's own chat format, which SFT trains on.
 */
import type { Trajectory } from '../../contracts.ts';
import { getEnvironment, hasEnvironment } from '../../envs/registry.ts';
import { exportFilter } from '../../export/from-store.ts';
import { toJsonl } from '../../export/jsonl.ts';
import { parseSkill, skillsFromTrajectories, skillsToInstructions } from '../../export/skills.ts';
import { iterateTrajectories, putSkill, type Store } from '../../store/index.ts';

/**
 * The skill documents of the stored trajectories (of one run and/or environment), kept in the store; empty
 * when none succeeded. Train-split episodes only unless `includeHeldOut`: a skill's worked examples become
 * SFT data, as any export's rows do (export/from-store.ts `exportFilter`).
 */
export async function distilSkills(
  store: Store,
  options: { runId?: string; env?: string; minSuccessRate: number; includeHeldOut?: boolean },
): Promise<{ name: string; markdown: string; usage_count: number }[]> {
  const all: Trajectory[] = [];
  const asked = { run_id: options.runId, envs: options.env ? [options.env] : undefined };
  const filter = exportFilter(asked, { includeHeldOut: options.includeHeldOut });
  for await (const t of iterateTrajectories(store, filter, { pageSize: 500 })) all.push(t);
  const made = skillsFromTrajectories(all, {
    minSuccessRate: options.minSuccessRate,
    describe: (name) => (hasEnvironment(name) ? getEnvironment(name).description : name),
  });
  for (const skill of made) await putSkill(store, skill);
  return made;
}

/**
 * Instruction-tuning chat JSONL from skill documents (`file` names each in errors): the rows, how many
 * there are, and how many of the skills gave some.
 */
export function skillInstructions(
  documents: { file: string; text: string }[],
  options: { minUsage: number; minSuccessRate: number },
): { jsonl: string; rows: number; used: number; skills: number } {
  const skills = documents.map((d) => parseSkill(d.text, d.file));
  const rows = skillsToInstructions(skills, options);
  return {
    jsonl: rows.length ? toJsonl(rows) : '',
    rows: rows.length,
    used: new Set(rows.map((r) => r.source)).size,
    skills: skills.length,
  };
}
