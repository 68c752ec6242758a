/**
 * `spindle eval --env NAME --split test` (the seed's hermes_eval): greedy episodes on held-out items
 * of built-in environments, your own (--env-file) or ones kept in the store (`spindle envs add`),
 * scored by the environment, printed as a table (and written as JSON with --output). An adapter zip
 * from `spindle sft` / `spindle export adapter` can be applied on top of the model.
 */
import { CliError, type Command } from '../command.ts';
import { isSuccess, type Split } from '../../contracts.ts';
import { bestBlindSuccess } from '../../rollout/blind-policies.ts';
import { getEnvironment } from '../../envs/registry.ts';
import type { Environment } from '../../envs/types.ts';
import { evaluatePolicy, formatEvalTable } from '../../rollout/evaluate.ts';
import { LocalPolicy } from '../../rollout/local-policy.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import { Progress } from './progress.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  applyAdapter, choiceOption, configOrDefault, intOption, loadModel, modelOption, modelPath, noPositionals, storeOption, stringOption, writeOutput,
} from './shared.ts';

function parseLevels(raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  const levels = raw.split(',').map((s) => Number(s.trim()));
  if (levels.some((l) => !Number.isInteger(l) || l < 1)) throw new CliError(`--level must be a level or a list like 1,2,3, got "${raw}".`, 2);
  return levels;
}

/** A level an environment lacks would make its episodes silently zero: refuse it, listing the levels it has. */
function checkLevels(envs: Environment[], levels: number[]): void {
  for (const env of envs) {
    const missing = levels.filter((l) => !env.difficulties.includes(l));
    if (missing.length > 0) {
      throw new CliError(`eval: ${env.name} has no level ${missing.join(', ')}; its levels are ${env.difficulties.join(', ')}. Nothing was evaluated.`, 2);
    }
  }
}

export const evaluate: Command = {
  name: 'eval',
  summary: 'Evaluate the model (plus an optional adapter) on held-out items of an environment (the seed\'s hermes_eval).',
  options: {
    env: { type: 'string', description: 'environment(s), comma-separated', placeholder: 'name' },
    split: { type: 'string', default: 'test', description: 'test (held out) or train', placeholder: 'split' },
    items: { type: 'string', default: '16', description: 'items per environment and level', placeholder: 'n' },
    level: { type: 'string', description: 'difficulty level(s), e.g. 1 or 1,2,3 (default: the lowest)', placeholder: 'L' },
    model: modelOption,
    adapter: { type: 'string', description: 'a PEFT adapter zip to apply', placeholder: 'zip' },
    'max-steps': { type: 'string', description: 'assistant turns per episode (default: trajectory_collection.max_steps_per_trajectory)', placeholder: 'n' },
    'max-new-tokens': { type: 'string', description: 'tokens per turn (default: sampling.max_new_tokens)', placeholder: 'n' },
    seed: { type: 'string', description: 'item seed (default: the config\'s seed)', placeholder: 'n' },
    config: { type: 'string', description: 'run config for the defaults above', placeholder: 'file' },
    output: { type: 'string', description: 'write the results as JSON here', placeholder: 'file.json' },
    'env-file': envFileOption,
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'eval');
    const named = stringOption(values, 'env')?.split(',').map((n) => n.trim()).filter(Boolean) ?? [];
    if (!named.length && !values['env-file']) throw new CliError('--env is required (or --env-file FILE), e.g. --env arith_tool.', 2);
    const base = configOrDefault(ctx, stringOption(values, 'config'), DEFAULT_CONFIG, { userEnvironments: true });
    // Only the environments asked for here: the user's own come from --env-file or the store.
    const asked = { ...base, tasks: { ...base.tasks, environments: named, task_file: null, env_files: [] } };
    const { config: resolved } = await useUserEnvironments(ctx, values, asked);
    const envs: Environment[] = resolved.tasks.environments.map((name) => getEnvironment(name));
    const split = choiceOption<Split>(values, 'split', ['test', 'train'], 'test');
    const items = intOption(values, 'items') ?? 16;
    const levels = parseLevels(stringOption(values, 'level'));
    if (levels) checkLevels(envs, levels);
    const config = base;
    const maxSteps = intOption(values, 'max-steps') ?? config.trajectory_collection.max_steps_per_trajectory;
    const maxNewTokens = intOption(values, 'max-new-tokens') ?? config.sampling.max_new_tokens;
    const seed = intOption(values, 'seed', 0) ?? config.seed;
    const loaded = await loadModel(ctx, modelPath(ctx, values, config), config);
    try {
      const adapterPath = stringOption(values, 'adapter');
      if (adapterPath) {
        const peft = applyAdapter(ctx, loaded, adapterPath);
        ctx.err(`eval: applied ${adapterPath} (LoRA r=${peft.r})`);
      }
      const total = envs.reduce((n, e) => n + (levels ? levels.filter((l) => e.difficulties.includes(l)).length : 1) * items, 0);
      const progress = new Progress(ctx, 'eval: episodes', total);
      let solved = 0;
      const results = await evaluatePolicy(new LocalPolicy(loaded.model, loaded.tokenizer), envs, {
        split, levels, items, seed, maxSteps, toolTimeoutMs: config.trajectory_collection.tool_timeout_ms, signal: ctx.signal,
        sampling: { max_new_tokens: maxNewTokens },
        onEpisode: (_t, score) => {
          if (isSuccess(score)) solved++;
          progress.tick(1, `solved ${solved}`);
        },
      }).catch((e: unknown) => {
        if (ctx.signal.aborted) throw new CliError('eval: interrupted; no results written.', 130);
        throw e;
      });
      progress.finish();
      // Beside every rate: what the best task-blind policy scores on the same items.
      const blind = new Map<string, number>();
      for (const r of results) blind.set(`${r.env}/${r.level}`, (await bestBlindSuccess(getEnvironment(r.env), r.level, { items, seed, split })).success);
      ctx.out(formatEvalTable(results, blind));
      const output = stringOption(values, 'output');
      if (output) {
        const file = writeOutput(ctx, output, JSON.stringify({ model: modelPath(ctx, values, config), adapter: adapterPath ?? null, split, items, seed, results }, null, 2) + '\n');
        ctx.out(`wrote ${file}`);
      }
    } finally {
      loaded.model.dispose();
    }
  },
};
