/**
 * `spindle collect`: roll out and judge without training (the seed's trajectory collection). Groups
 * of `group_size` samples per task, judged by the config's judges, stored in the file store as a run
 * (trajectories + Atropos scored groups), ready for `spindle export` and `spindle sft`.
 *
 * Runs in-process: the episodes of a group run concurrently and their generation requests are
 * batched by the same GenerationService the pipeline uses, so a group costs about one sequence of
 * forward passes. `--policy expert` replays each environment's scripted expert instead of the model
 * (demonstrations for SFT and skills). `--atropos URL` also streams each scored group to a running
 * Atropos trajectory API server, at its trainer's pace (src/pipeline/atropos-feed.ts). Ctrl-C stops
 * after the current group; what was collected stays.
 */
import type { Command, CommandContext } from '../command.ts';
import { CliError } from '../command.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { ScoredGroup, Trajectory } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { nodeGetWithBody } from '../../export/atropos-node.ts';
import { openAtroposFeed, type AtroposFeed } from '../../pipeline/atropos-feed.ts';
import { deriveSeed } from '../../rng.ts';
import { ByteTokenizer } from '../../model/byte-tokenizer.ts';
import type { TransformerModel } from '../../model/transformer.ts';
import { EnginePolicy, GenerationService } from '../../pipeline/generation.ts';
import { RolloutWorkerCore, type EpisodeJob } from '../../pipeline/rollout-worker.ts';
import { ScriptedPolicy } from '../../rollout/scripted-policy.ts';
import { toScoredGroup } from '../../rollout/scored-group.ts';
import type { TextTokenizer } from '../../model/tokenizer.ts';
import { createRun, putScoredGroup, putTrajectories, setRunStatus } from '../../store/index.ts';
import type { FileStore } from '../../store/file-store.ts';
import { Progress } from './progress.ts';
import {
  choiceOption, configOrDefault, formatScore, intOption, loadModel, modelOption, modelPath, noPositionals, percent, storeOption, stringOption, withStore,
  type Values,
} from './shared.ts';

interface Collector {
  /** Rolls out and judges one group. */
  group(jobs: EpisodeJob[]): Promise<Trajectory[]>;
  dispose(): void;
}

const secrets = { getSecret: (name: string) => process.env[name] ?? null };

function modelCollector(model: TransformerModel, tokenizer: TextTokenizer): Collector {
  const generation = new GenerationService(() => model, tokenizer);
  const core = new RolloutWorkerCore(new EnginePolicy('local', tokenizer, generation), secrets);
  return {
    group: (jobs) => Promise.all(jobs.map((job) => core.runEpisode(job))),
    dispose: () => model.dispose(),
  };
}

function expertCollector(tokenizer: TextTokenizer): Collector {
  return {
    async group(jobs) {
      const env = getEnvironment(jobs[0].task.env);
      if (!env.expert) throw new CliError(`Environment "${env.name}" has no scripted expert; use --policy model.`);
      const turns = env.expert(jobs[0].task);
      const core = new RolloutWorkerCore(new ScriptedPolicy({ id: `expert:${env.name}`, turns, tokenizer }), secrets);
      return Promise.all(jobs.map((job) => core.runEpisode({ ...job, max_steps: Math.max(job.max_steps, turns.length) })));
    },
    dispose: () => {},
  };
}

/** The jobs of group g: environments round-robin, levels cycling through the difficulty range. */
function groupJobs(config: RunConfig, runId: string, g: number, size: number): EpisodeJob[] {
  const { tasks, trajectory_collection: tc, judge } = config;
  const envName = tasks.environments[g % tasks.environments.length];
  const env = getEnvironment(envName);
  const [lo, hi] = tasks.difficulty_range;
  const level = lo + (Math.floor(g / tasks.environments.length) % (hi - lo + 1));
  const task = env.generate(deriveSeed(config.seed, 'collect', runId, g), level, 'train');
  const groupId = `${runId}/${g}`;
  return Array.from({ length: size }, (_, i) => ({
    trajectory_id: `${groupId}/${i}`, run_id: runId, task, seed: deriveSeed(config.seed, groupId, i), group_id: groupId,
    sampling: config.sampling, max_steps: tc.max_steps_per_trajectory, tool_timeout_ms: tc.tool_timeout_ms,
    judging: 'configured', judges: judge.judges, n_judges: judge.n_judges, min_votes: judge.min_votes,
  }));
}

/** Stores the group's trajectories, and its scored group when every member is judged and tokenized (returned). */
async function storeGroup(store: FileStore, config: RunConfig, runId: string, group: Trajectory[]): Promise<ScoredGroup | null> {
  await putTrajectories(store, group);
  if (!group.every((t) => t.judge_score !== null && t.tokens.length > 0)) return null;
  const scored = toScoredGroup(group, { rewardScale: config.training.reward_scale });
  await putScoredGroup(store, { group_id: group[0].group_id, run_id: runId, step: -1, env: group[0].env, task_id: group[0].task_id, scored, trajectory_ids: group.map((t) => t.id) });
  return scored;
}

export interface CollectSummary {
  runId: string;
  groups: number;
  trajectories: Trajectory[];
  interrupted: boolean;
  /** With --atropos: groups the server took and refused. */
  atropos: { delivered: number; rejected: number } | null;
}

async function collectInto(store: FileStore, ctx: CommandContext, values: Values, config: RunConfig): Promise<CollectSummary> {
  const policy = choiceOption(values, 'policy', ['model', 'expert'] as const, 'model');
  const groups = intOption(values, 'groups') ?? config.training.batch_size;
  const size = intOption(values, 'group-size') ?? (policy === 'expert' ? 1 : config.training.group_size);
  let collector: Collector;
  let window: number | null = null;
  if (policy === 'expert') collector = expertCollector(new ByteTokenizer());
  else {
    const { model, tokenizer } = await loadModel(ctx, modelPath(ctx, values, config), config);
    collector = modelCollector(model, tokenizer);
    window = model.config.maxPositions;
  }
  const atroposUrl = stringOption(values, 'atropos');
  const feed: AtroposFeed | null = atroposUrl ? openAtroposFeed({
    url: atroposUrl, config, maxTokenLength: window, getWithBody: nodeGetWithBody,
    onEvent: (e) => { if (e.kind === 'waiting-for-trainer' || e.kind === 'unreachable') ctx.err(`collect: Atropos at ${atroposUrl}: ${e.kind.replace(/-/g, ' ')}, retrying`); },
  }) : null;
  const run = await createRun(store, { ...config, name: stringOption(values, 'name') ?? `${config.name}-collect` });
  await setRunStatus(store, run.id, 'running');
  const all: Trajectory[] = [];
  const progress = new Progress(ctx, 'collect: groups', groups);
  try {
    for (let g = 0; g < groups && !ctx.signal.aborted; g++) {
      const group = await collector.group(groupJobs(config, run.id, g, size));
      const scored = await storeGroup(store, config, run.id, group);
      if (scored && feed) await feed.send(scored);
      all.push(...group);
      progress.tick(1, `mean score ${formatScore(mean(all.map((t) => t.judge_score)))}`);
    }
  } catch (error) {
    await setRunStatus(store, run.id, 'failed', (error as Error).message);
    throw error;
  } finally {
    progress.finish();
    collector.dispose();
  }
  const atropos = feed ? await feed.finish() : null;
  const interrupted = ctx.signal.aborted;
  await setRunStatus(store, run.id, interrupted ? 'stopped' : 'completed');
  return { runId: run.id, groups: all.length / size, trajectories: all, interrupted, atropos };
}

function mean(xs: (number | null)[]): number | null {
  const scored = xs.filter((x): x is number => x !== null);
  return scored.length ? scored.reduce((a, b) => a + b, 0) / scored.length : null;
}

export const collect: Command = {
  name: 'collect',
  summary: 'Roll out and judge without training; stores the trajectories (and Atropos groups) as a run in the store.',
  options: {
    config: { type: 'string', description: 'run config (environments, judges, sampling, group_size); default: built-in defaults', placeholder: 'file' },
    groups: { type: 'string', description: 'tasks to roll out (default: training.batch_size)', placeholder: 'n' },
    'group-size': { type: 'string', description: 'samples per task (default: training.group_size; 1 with --policy expert)', placeholder: 'n' },
    policy: { type: 'string', default: 'model', description: 'model (the local policy) or expert (each environment\'s scripted expert)', placeholder: 'kind' },
    model: modelOption,
    name: { type: 'string', description: 'run name (default: <config name>-collect)', placeholder: 'name' },
    atropos: { type: 'string', description: 'also stream each scored group to this Atropos trajectory API server, waiting while its queue is full', placeholder: 'url' },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'collect');
    const config = configOrDefault(ctx, stringOption(values, 'config'));
    const summary = await withStore(ctx, values, (store) => collectInto(store, ctx, values, config), true);
    const ts = summary.trajectories;
    const scored = ts.filter((t) => t.judge_score !== null);
    const successes = ts.filter((t) => t.success === true).length;
    ctx.out(`run ${summary.runId}: ${ts.length} trajectories in ${summary.groups} groups (${scored.length} scored)`);
    ctx.out(`mean score ${formatScore(mean(ts.map((t) => t.judge_score)))}, success ${ts.length ? percent(successes / ts.length) : '—'}`);
    if (summary.atropos) ctx.out(`sent ${summary.atropos.delivered} scored groups to ${stringOption(values, 'atropos')}${summary.atropos.rejected ? ` (${summary.atropos.rejected} refused by the server)` : ''}`);
    if (summary.interrupted) ctx.out(`interrupted: kept the ${summary.groups} finished groups`);
  },
};
