/**
 * The skills → instructions → SFT workflow, over the operations of pipeline/operations/skills.ts:
 * - `spindle skills from-trajectories`: one skill document per task type with a successful stored
 *   trajectory (usage = successful episodes), written as Markdown files here and kept in the store;
 * - `spindle skills to-instructions`: the examples of skills with at least
 *   --min-usage successes and a success rate of at least --min-success-rate become instruction rows in the
 *   agent's own chat format, which `spindle sft --data` trains on.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, type Command } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import {
  choiceOption,
  inputPath,
  intOption,
  noPositionals,
  numberOption,
  outputDir,
  readText,
  storeOption,
  stringOption,
  withStore,
  writeOutput,
} from './shared.ts';

const rateOption = (what: string) => ({
  type: 'string' as const,
  default: '0',
  description: `${what} (a share in [0, 1])`,
  placeholder: 'x',
});

export const skillsFromTrajectories: Command = {
  name: 'skills from-trajectories',
  summary:
    'Write one skill document (Markdown) per task type with a successful stored trajectory; usage counts the successes.',
  options: {
    store: storeOption,
    run: { type: 'string', description: 'only this run', placeholder: 'id' },
    env: { type: 'string', description: 'only this environment', placeholder: 'name' },
    'min-success-rate': rateOption('skip task types whose episodes succeeded less often than this'),
    split: {
      type: 'string',
      default: 'train',
      description: 'train, or all to learn from held-out episodes too',
      placeholder: 'split',
    },
    output: {
      type: 'string',
      default: 'skills',
      description: 'folder for the <skill>.md files (skills to-instructions reads it)',
      placeholder: 'dir',
    },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'skills from-trajectories');
    const out = outputDir(ctx, stringOption(values, 'output') ?? 'skills');
    const runId = stringOption(values, 'run');
    const includeHeldOut = choiceOption(values, 'split', ['train', 'all'] as const, 'train') === 'all';
    const skills = await withStore(ctx, values, (store) =>
      pipeline().distilSkills(store, {
        runId,
        env: stringOption(values, 'env'),
        minSuccessRate: numberOption(values, 'min-success-rate') ?? 0,
        includeHeldOut,
      }),
    );
    if (!skills.length)
      throw new CliError(
        `No stored trajectory succeeded${runId ? ` in run ${runId}` : ''} (at the success rate asked); no skills written.`,
      );
    for (const s of skills) writeOutput(ctx, join(out, `${s.name}.md`), s.markdown);
    ctx.out(
      `wrote ${skills.length} skill(s) to ${out} (successful uses ${Math.min(...skills.map((s) => s.usage_count))}–${Math.max(...skills.map((s) => s.usage_count))})`,
    );
  },
};

export const skillsToInstructionsCommand: Command = {
  name: 'skills to-instructions',
  summary:
    'Turn the worked examples of skills used successfully at least --min-usage times into instruction-tuning chat JSONL.',
  options: {
    skills: {
      type: 'string',
      default: 'skills',
      description: 'a folder of skill .md files (or one file), as from-trajectories writes',
      placeholder: 'dir',
    },
    'min-usage': {
      type: 'string',
      default: '5',
      description: 'skip skills with fewer successful uses',
      placeholder: 'n',
    },
    'min-success-rate': rateOption('skip skills that succeed less often than this'),
    output: {
      type: 'string',
      default: 'instructions.jsonl',
      description: 'the JSONL file to write (sft --data trains on it)',
      placeholder: 'file.jsonl',
    },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'skills to-instructions');
    const dir = stringOption(values, 'skills') ?? 'skills';
    const output = stringOption(values, 'output') ?? 'instructions.jsonl';
    const minUsage = intOption(values, 'min-usage', 0) ?? 5;
    const full = inputPath(ctx, dir, 'skills folder');
    const files = statSync(full).isDirectory()
      ? readdirSync(full)
          .filter((f) => f.endsWith('.md'))
          .sort()
          .map((f) => join(full, f))
      : [full];
    if (!files.length) throw new CliError(`${dir} holds no .md skill documents.`);
    const made = pipeline().skillInstructions(
      files.map((f) => ({ file: f, text: readText(ctx, f) })),
      { minUsage, minSuccessRate: numberOption(values, 'min-success-rate') ?? 0 },
    );
    if (!made.rows)
      throw new CliError(
        `None of the ${made.skills} skills has ${minUsage} successful uses and the success rate asked, with examples (lower --min-usage).`,
      );
    const file = writeOutput(ctx, output, made.jsonl);
    ctx.out(`wrote ${made.rows} instruction rows from ${made.used} of ${made.skills} skills to ${file}`);
  },
};
