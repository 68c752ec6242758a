/**
 * The seed's fourth workflow, skills → instructions → SFT:
 * - `spindle skills from-trajectories`: successful stored trajectories become skill documents (one per
 *   task; `usage_count` = attempts at that task, `success_rate` = the share that succeeded), written as
 *   Markdown files and kept in the store;
 * - `spindle skills to-instructions` (skill_to_instruction): skills used at least --min-usage times
 *   become instruction rows in chat JSONL, which `spindle sft --data` trains on.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, type Command } from '../command.ts';
import type { Trajectory } from '../../contracts.ts';
import { parseSkill, renderSkill, skillBody, skillFromTrajectory, skillsToInstructions } from '../../export/skills.ts';
import { toJsonl } from '../../export/jsonl.ts';
import { iterateTrajectories, putSkill, type SkillRecord, type TrajectoryFilter } from '../../store/index.ts';
import {
  inputPath, intOption, noPositionals, numberOption, outputDir, readText, requireOption, storeOption, stringOption, withStore, writeOutput,
} from './shared.ts';

export const skillsFromTrajectories: Command = {
  name: 'skills from-trajectories',
  summary: 'Write a skill document (Markdown) for each task with a successful stored trajectory; usage counts every attempt.',
  options: {
    store: storeOption,
    run: { type: 'string', description: 'only this run', placeholder: 'id' },
    env: { type: 'string', description: 'only this environment', placeholder: 'name' },
    'min-score': { type: 'string', default: '1', description: 'a trajectory scoring at least this counts as a success', placeholder: 'x' },
    output: { type: 'string', description: 'folder for the <skill>.md files', placeholder: 'dir' },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'skills from-trajectories');
    const out = outputDir(ctx, requireOption(values, 'output', '--output skills/'));
    const minScore = numberOption(values, 'min-score') ?? 1;
    const env = stringOption(values, 'env');
    const filter: TrajectoryFilter = { run_id: stringOption(values, 'run'), envs: env ? [env] : undefined };
    const skills = await withStore(ctx, values, async (store) => {
      const byTask = new Map<string, { best: Trajectory | null; attempts: number; successes: number }>();
      for await (const t of iterateTrajectories(store, filter, { pageSize: 500 })) {
        const key = `${t.env}\u0000${t.task_description}`;
        const entry = byTask.get(key) ?? { best: null, attempts: 0, successes: 0 };
        entry.attempts++;
        if (t.judge_score !== null && t.judge_score >= minScore) {
          entry.successes++;
          if (!entry.best || t.steps.length < entry.best.steps.length) entry.best = t;
        }
        byTask.set(key, entry);
      }
      const made: SkillRecord[] = [];
      const names = new Set<string>();
      for (const { best, attempts, successes } of byTask.values()) {
        if (!best) continue;
        const first = skillFromTrajectory({ ...best, success: true });
        let name = first.name;
        for (let i = 2; names.has(name); i++) name = `${first.name}-${i}`;
        names.add(name);
        const made1 = name === first.name ? first : skillFromTrajectory({ ...best, success: true }, { name });
        const counted: SkillRecord = { ...made1, usage_count: attempts, success_rate: successes / attempts };
        const record = { ...counted, markdown: renderSkill(counted, skillBody(made1)) };
        await putSkill(store, record);
        made.push(record);
      }
      return made;
    });
    if (!skills.length) throw new CliError(`No stored trajectory scores ≥ ${minScore}${filter.run_id ? ` in run ${filter.run_id}` : ''}; no skills written.`);
    for (const s of skills) writeOutput(ctx, join(out, `${s.name}.md`), s.markdown);
    ctx.out(`wrote ${skills.length} skill(s) to ${out} (usage ${Math.min(...skills.map((s) => s.usage_count))}–${Math.max(...skills.map((s) => s.usage_count))})`);
  },
};

export const skillsToInstructionsCommand: Command = {
  name: 'skills to-instructions',
  summary: 'Turn skill documents used at least --min-usage times into instruction-tuning chat JSONL (the seed\'s skill_to_instruction).',
  options: {
    skills: { type: 'string', description: 'a folder of skill .md files (or one file)', placeholder: 'dir' },
    'min-usage': { type: 'string', default: '5', description: 'skip skills used fewer times', placeholder: 'n' },
    system: { type: 'string', description: 'a system message for every row', placeholder: 'text' },
    output: { type: 'string', description: 'the JSONL file to write', placeholder: 'file.jsonl' },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'skills to-instructions');
    const dir = requireOption(values, 'skills', '--skills skills/');
    const output = requireOption(values, 'output', '--output instructions.jsonl');
    const minUsage = intOption(values, 'min-usage', 0) ?? 5;
    const full = inputPath(ctx, dir, 'skills folder');
    const files = statSync(full).isDirectory() ? readdirSync(full).filter((f) => f.endsWith('.md')).sort().map((f) => join(full, f)) : [full];
    if (!files.length) throw new CliError(`${dir} holds no .md skill documents.`);
    const skills = files.map((f) => {
      try {
        return parseSkill(readText(ctx, f), f);
      } catch (e) {
        throw new CliError((e as Error).message);
      }
    });
    const rows = skillsToInstructions(skills, { minUsage, system: stringOption(values, 'system') });
    if (!rows.length) throw new CliError(`None of the ${skills.length} skills was used ${minUsage} times or more (lower --min-usage).`);
    const file = writeOutput(ctx, output, toJsonl(rows));
    ctx.out(`wrote ${rows.length} instruction rows from ${skills.length} skills (${skills.length - rows.length} used fewer than ${minUsage} times) to ${file}`);
  },
};
