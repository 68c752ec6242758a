/**
 * What crosses the boundary to a rollout worker, and the one place each of it is built. A worker is
 * configured once, as it starts, with the settings every episode of its run shares (budgets, tools,
 * judges, the verifier gate, the user environments' sources); a replacement for a crashed or hung worker
 * is configured the same way before it is given an episode, and a resumed run starts workers of its own.
 * An episode job then carries only what differs from one episode to the next, so a 2,000-row task file
 * is copied into each worker once, not into every episode's message.
 */
import type { RunConfig, JudgeConfig } from '../../config/schema.ts';
import type { EnvironmentSource, SamplingParams, Task, Trajectory } from '../../contracts.ts';
import { installedSources } from '../../envs/sources.ts';
import type { EpisodeEvent } from '../../rollout/events.ts';
import { episodeSeed } from '../../rollout/group.ts';
import type { WorkerHandle } from './worker-pool.ts';

/** The settings a rollout worker runs every episode under, sent once per worker (`configure`). */
export interface RolloutSettings {
  /** The run the episodes belong to (null: episodes of no run, such as the Playground's). */
  run_id: string | null;
  max_steps: number;
  tool_timeout_ms: number;
  /** Sandbox tools offered besides the environment's own (trajectory_collection.tools). */
  tools: string[];
  judges: JudgeConfig[];
  n_judges: number | null;
  min_votes: number;
  /** `judge.verifier_gate`: the environment's verdict bounds the judges' score (src/judge/verifier-gate.ts). */
  verifier_gate: boolean;
  /** The sources of the user environments among the run's (envs/sources.ts); built-ins travel by name. */
  environments: EnvironmentSource[];
}

/** One episode: what differs between the episodes a configured worker runs. */
export interface EpisodeJob {
  /** Fixed by the scheduler, so an episode re-run after a worker crash keeps its id (no duplicates). */
  trajectory_id: string;
  group_id: string;
  task: Task;
  seed: number;
  /** A run samples its training episodes with the config's settings and its evaluations greedily. */
  sampling: SamplingParams;
  /** `model` (default): the worker's engine-backed policy; `expert`: the environment's scripted expert (demonstrations, the Playground). */
  policy?: 'model' | 'expert';
  /**
   * `configured`: the settings' judges and their trimmed mean; `env`: the environment's own score only
   * (evaluation); `none`: unjudged (the Playground judges as a step of its own).
   */
  judging: 'configured' | 'env' | 'none';
}

/** How an episode is played and judged: a run's training episodes and its evaluations differ in these. */
export type EpisodePlay = Pick<EpisodeJob, 'sampling' | 'judging' | 'policy'>;

/** A rollout worker as its host holds it: configured once, then given episodes. */
export interface RolloutWorker extends WorkerHandle<EpisodeJob, Trajectory, EpisodeEvent> {
  configure(settings: RolloutSettings): Promise<void>;
}

/** A run's rollout settings: its config's budgets, tools and judges, and the sources of its user environments installed in this thread. */
export function rolloutSettings(
  config: Pick<RunConfig, 'trajectory_collection' | 'judge' | 'tasks'>,
  runId: string | null,
): RolloutSettings {
  const { trajectory_collection: tc, judge } = config;
  return {
    run_id: runId,
    max_steps: tc.max_steps_per_trajectory,
    tool_timeout_ms: tc.tool_timeout_ms,
    tools: tc.tools,
    judges: judge.judges,
    n_judges: judge.n_judges,
    min_votes: judge.min_votes,
    verifier_gate: judge.verifier_gate ?? true,
    environments: installedSources(config.tasks.environments),
  };
}

/** Episode `index` of group `groupId`: its id is the group's and its index, so the same episode always has the same id. */
export function episodeJob(task: Task, groupId: string, index: number, seed: number, play: EpisodePlay): EpisodeJob {
  return { trajectory_id: `${groupId}/${index}`, group_id: groupId, task, seed, ...play };
}

/**
 * The `size` episodes of a group of one task: sample i is seeded from the config's seed, the step
 * (-1 outside training), the group's index and i, never a run id or a clock (rollout/group.ts episodeSeed).
 */
export function groupJobs(
  task: Task,
  groupId: string,
  at: { seed: number; step: number; group: number },
  size: number,
  play: EpisodePlay,
): EpisodeJob[] {
  return Array.from({ length: size }, (_, i) =>
    episodeJob(task, groupId, i, episodeSeed(at.seed, at.step, at.group, i), play),
  );
}

/**
 * `worker` with `configure(settings)` sent now, as it starts; its episodes are sent once that is done. A
 * configuration that fails fails each episode given to it, so the pool replaces the worker like one that crashed.
 */
export function configuredWorker(
  worker: RolloutWorker,
  settings: RolloutSettings,
): WorkerHandle<EpisodeJob, Trajectory, EpisodeEvent> {
  const configured = worker.configure(settings);
  configured.catch(() => {}); // heard through the episodes that wait for it
  return {
    run: async (job, onEvent) => {
      await configured;
      return worker.run(job, onEvent);
    },
    terminate: () => worker.terminate(),
    onCrash: (callback) => worker.onCrash(callback),
  };
}
