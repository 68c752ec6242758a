/**
 * Collection without training (`spindle collect`): groups of
 * `groupSize` samples per task, environments round-robin and levels cycling through the difficulty
 * range, rolled out and judged by the config's judges through the rollout worker core, stored as a run
 * (trajectories + Atropos scored groups), and optionally streamed to an Atropos trajectory API server at
 * its trainer's pace (atropos-feed.ts).
 *
 * In-process: the episodes of a group run concurrently and their generation requests are batched by the
 * same GenerationService a run uses, so a group costs about one sequence of forward passes. The
 * `expert` policy replays each environment's scripted expert instead (demonstrations for SFT and skills),
 * and a `remote` one asks a model served by an OpenAI-compatible endpoint (rollout/remote-policy.ts): its
 * episodes carry text, not tokens, so they train SFT and store no scored groups.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { Trajectory } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { installedSources } from '../../envs/sources.ts';
import { ByteTokenizer } from '../../tokenizer/byte-tokenizer.ts';
import { deriveSeed } from '../../rng.ts';
import { createRun, setRunStatus, type Store } from '../../store/index.ts';
import { describeDelivery, openAtroposFeed, type AtroposFeedOptions, type AtroposFeedSummary } from './atropos-feed.ts';
import { EnginePolicy, EXPERT_GENERATOR, GenerationService } from '../engine/generation.ts';
import type { LoadedPolicyModel } from '../engine/engine-api.ts';
import { groupJobs, rolloutSettings, type EpisodeJob } from '../engine/rollout-protocol.ts';
import { RolloutWorkerCore, type JudgingDeps } from '../engine/rollout-worker.ts';
import { storeGroup } from './store-group.ts';
import { createGroupStep } from '../../judge/group-step.ts';
import { RemotePolicy, type RemotePolicyOptions } from '../../rollout/remote-policy.ts';

export interface CollectOptions {
  store: Store;
  config: RunConfig;
  /** The model to sample (`null`: each environment's scripted expert, or `remote` when given). */
  model: LoadedPolicyModel | null;
  /** A model served by an OpenAI-compatible endpoint, sampled instead of `model`. */
  remote?: RemotePolicyOptions | null;
  groups: number;
  groupSize: number;
  runName: string;
  judging: JudgingDeps;
  /** Also stream each scored group to this Atropos server (the feed's window is the model's context; `signal` stops it too). */
  atropos: Omit<AtroposFeedOptions, 'config' | 'maxTokenLength' | 'signal'> | null;
  signal: AbortSignal;
  /** After each stored group, with everything collected so far. */
  onGroup?(all: readonly Trajectory[]): void;
}

export interface CollectSummary {
  runId: string;
  groups: number;
  trajectories: Trajectory[];
  interrupted: boolean;
  /** With an Atropos server: what became of the groups sent to it. */
  atropos: AtroposFeedSummary | null;
}

/** The environments of `config` that have no scripted expert (the expert policy cannot collect them). */
export function environmentsWithoutExpert(config: RunConfig): string[] {
  return config.tasks.environments.filter((name) => !getEnvironment(name).expert);
}

/** The jobs of group g: environments round-robin, levels cycling through the difficulty range (or the environment's `tasks.levels`). */
export function collectJobs(
  config: RunConfig,
  runId: string,
  g: number,
  size: number,
  policy: EpisodeJob['policy'],
): EpisodeJob[] {
  const { tasks } = config;
  const env = getEnvironment(tasks.environments[g % tasks.environments.length]);
  const [lo, hi] = tasks.difficulty_range;
  // Only the levels of the range the environment offers: a user's module with one level is collected at it.
  const offered = env.difficulties.filter((l) => l >= lo && l <= hi);
  const cycle = offered.length ? offered : [env.difficulties[0]];
  const level = tasks.levels[env.name] ?? cycle[Math.floor(g / tasks.environments.length) % cycle.length];
  // Seeds come from the config's seed and the group's index, never the run id: the same config collects the same data.
  const task = env.generate(deriveSeed(config.seed, 'collect', g), level, 'train');
  return groupJobs(task, `${runId}/${g}`, { seed: config.seed, step: -1, group: g }, size, {
    sampling: config.sampling,
    judging: 'configured',
    policy,
  });
}

/** Collects `groups` groups into a new run of `store`; a fired `signal` stops after the current group, keeping what was collected. */
export async function collectGroups(options: CollectOptions): Promise<CollectSummary> {
  const { store, config, model, groupSize: size } = options;
  const tokenizer = model?.tokenizer ?? new ByteTokenizer();
  const batching = GenerationService.forRun(config.trajectory_collection.reproducible);
  const generator = model ? new GenerationService(() => model.model, tokenizer, batching) : EXPERT_GENERATOR;
  const remote = options.remote ? new RemotePolicy(options.remote) : null;
  const core = new RolloutWorkerCore(remote ?? new EnginePolicy('local', tokenizer, generator), options.judging);
  // Group judges and the verifier gate, once per group, as in a training run (src/judge/group-step.ts).
  const groupStep = createGroupStep(config.judge, { getSecret: options.judging.getSecret });
  const feed = options.atropos
    ? openAtroposFeed({
        ...options.atropos,
        config,
        maxTokenLength: model?.model.config.maxPositions ?? null,
        signal: options.signal,
      })
    : null;
  // The user environments it used (installed by the caller) are stored with it, as a training run's are.
  const run = await createRun(
    store,
    { ...config, name: options.runName },
    { environments: installedSources(config.tasks.environments) },
  );
  await setRunStatus(store, run.id, 'running');
  const all: Trajectory[] = [];
  try {
    // Configured once, as a run's workers are: the episodes below carry only what differs between them.
    await core.configure(rolloutSettings(config, run.id));
    for (let g = 0; g < options.groups && !options.signal.aborted; g++) {
      const jobs = collectJobs(config, run.id, g, size, model || remote ? 'model' : 'expert');
      const rolled = await Promise.all(jobs.map((job) => core.runEpisode(job)));
      const group = jobs.length ? await groupStep.judge(jobs[0].task, rolled) : rolled;
      const scored = await storeGroup(store, group, {
        runId: run.id,
        step: -1,
        rewardScale: config.training.reward_scale,
      });
      if (scored && feed) await feed.send(scored);
      all.push(...group);
      options.onGroup?.(all);
    }
  } catch (error) {
    // Say what the server got before the failure; everything collected is stored with the run either way.
    const delivery = feed ? { ...(await feed.finish({ wait: false })), stopped: null } : null;
    const sent = delivery && options.atropos ? ` ${describeDelivery(delivery, options.atropos.url)}` : '';
    await setRunStatus(store, run.id, 'failed', (error as Error).message);
    throw sent ? new Error(`${(error as Error).message}${sent}`, { cause: error }) : error;
  }
  const atropos = feed ? await feed.finish() : null;
  const interrupted = options.signal.aborted;
  await setRunStatus(store, run.id, interrupted ? 'stopped' : 'completed');
  return { runId: run.id, groups: all.length / size, trajectories: all, interrupted, atropos };
}
