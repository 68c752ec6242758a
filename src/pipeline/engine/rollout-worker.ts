/**
 * What a rollout worker does with one job: run the episode (the agent loop and its QuickJS sandbox)
 * with a policy that asks the engine for tokens (or the environment's scripted expert), then judge it
 * with the run's judges. Runs, `spindle collect` and the Playground all send their episodes here. Lives in a web
 * worker or a Node worker_thread (workers/rollout.*.ts) so that a sandbox that takes its host down takes
 * only this worker; tests call it directly.
 */
import type { JudgeConfig } from '../../config/schema.ts';
import { isSuccess, type EnvironmentSource, type JudgeVote, type SamplingParams, type Task, type Trajectory } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { installEnvironmentSource } from '../../envs/sources.ts';
import { TrajectoryJudge } from '../../judge/ensemble.ts';
import type { Judge } from '../../judge/types.ts';
import { envVote, scoreFromVotes } from '../../judge/verifier-gate.ts';
import { buildEveryJudge } from './every-judge.ts';
import { runEpisode } from '../../rollout/episode.ts';
import type { EpisodeEvent } from '../../rollout/events.ts';
import type { Policy } from '../../rollout/policy.ts';
import { ScriptedPolicy } from '../../rollout/scripted-policy.ts';

export interface EpisodeJob {
  /** Fixed by the scheduler, so an episode re-run after a worker crash keeps its id (no duplicates). */
  trajectory_id: string;
  run_id: string | null;
  task: Task;
  seed: number;
  group_id: string;
  sampling: SamplingParams;
  max_steps: number;
  tool_timeout_ms: number;
  /** `model` (default): the worker's engine-backed policy; `expert`: the environment's scripted expert (demonstrations, the Playground). */
  policy?: 'model' | 'expert';
  /**
   * `configured`: the run's judges and their trimmed mean; `env`: the environment's own score only
   * (evaluation); `none`: unjudged (the Playground judges as a step of its own).
   */
  judging: 'configured' | 'env' | 'none';
  judges: JudgeConfig[];
  n_judges: number | null;
  min_votes: number;
  /** `judge.verifier_gate` (default true): the environment's verdict bounds the judges' score (src/judge/verifier-gate.ts). */
  verifier_gate?: boolean;
  /** Sandbox tools offered besides the environment's own (trajectory_collection.tools). */
  tools?: string[];
  /** A user environment's source (envs/sources.ts), installed in the worker before the episode; absent for built-ins. */
  environment?: EnvironmentSource;
  /** That source's digest (sources.ts jobEnvironment); the worker hashes the source itself without it. */
  environment_digest?: string;
}

export interface JudgingDeps {
  getSecret?: (name: string) => string | null;
  loadModelJudge?: (id: string, path: string) => Promise<Judge>;
}

/** Scores with the environment's own `evaluate` (the rule judge's evaluator). */
const envEvaluator = (task: Task, trajectory: Trajectory) => getEnvironment(task.env).evaluate(task, trajectory);

export class RolloutWorkerCore {
  private readonly ensembles = new Map<string, Promise<TrajectoryJudge>>();

  constructor(
    private readonly policy: Policy,
    private readonly deps: JudgingDeps = {},
  ) {}

  async runEpisode(job: EpisodeJob, onEvent?: (event: EpisodeEvent) => void): Promise<Trajectory> {
    if (job.environment) await installEnvironmentSource(job.environment, job.environment_digest);
    const env = getEnvironment(job.task.env);
    let policy = this.policy;
    let maxSteps = job.max_steps;
    if (job.policy === 'expert') {
      if (!env.expert) throw new Error(`Environment "${env.name}" has no scripted expert.`);
      const turns = env.expert(job.task);
      // Small pieces, so a watched expert episode streams like a model's.
      policy = new ScriptedPolicy({ id: `expert:${env.name}`, turns, tokenizer: this.policy.tokenizer, pieceChars: 3 });
      maxSteps = Math.max(maxSteps, turns.length);
    }
    const tools = job.tools?.length ? [...new Set([...env.requiredTools, ...job.tools])] : undefined;
    const trajectory = await runEpisode({
      policy, env, task: job.task, seed: job.seed, sampling: job.sampling, maxSteps, tools,
      toolTimeoutMs: job.tool_timeout_ms, groupId: job.group_id, runId: job.run_id, onEvent,
    });
    const withId = { ...trajectory, id: job.trajectory_id };
    if (job.judging === 'none') return withId;
    if (job.judging === 'env') {
      const started = performance.now();
      const score = await env.evaluate(job.task, withId);
      const vote: JudgeVote = { judge_id: `env:${env.name}`, score, rationale: 'environment evaluate()', latency_ms: performance.now() - started };
      return { ...withId, votes: [vote], judge_score: score, success: isSuccess(score) };
    }
    const judgement = await (await this.ensemble(job)).judge(withId, job.task);
    const started = performance.now();
    const envScore = await env.evaluate(job.task, withId);
    // The environment's verdict is kept as a vote of its own (`env:NAME`, shown beside the judges', never
    // averaged with them) and gates their score (src/judge/verifier-gate.ts); the group step adds the
    // group judges' votes and the group rule once the whole group is in (src/judge/group-step.ts).
    const votes = envScore === null ? judgement.votes : [...judgement.votes, envVote(env.name, envScore, performance.now() - started)];
    const judge_score = scoreFromVotes(votes, { minVotes: job.min_votes, gate: job.verifier_gate ?? true });
    // Success is the environment's verdict (the task was done), whatever the blend of judges says:
    // replay admission, the curriculum and every success rate read it.
    return { ...withId, votes, judge_score, success: isSuccess(envScore) };
  }

  /** One ensemble per judge configuration, built once (remote judges keep their cache and limits). */
  private ensemble(job: EpisodeJob): Promise<TrajectoryJudge> {
    // Group judges see whole groups, in the group step (src/judge/group-step.ts), not one episode here.
    const chosen = (job.n_judges === null ? job.judges : job.judges.slice(0, job.n_judges)).filter((j) => j.type !== 'group');
    const key = JSON.stringify([chosen, job.min_votes]);
    let ensemble = this.ensembles.get(key);
    if (!ensemble) {
      // A judge that cannot be set up votes null (the run counts and shows its failures) instead of failing every episode.
      ensemble = buildEveryJudge(chosen, { evaluator: envEvaluator, policy: this.policy, ...this.deps }).then(
        (judges) => new TrajectoryJudge({ judges, minVotes: job.min_votes }),
      );
      this.ensembles.set(key, ensemble);
    }
    return ensemble;
  }
}
