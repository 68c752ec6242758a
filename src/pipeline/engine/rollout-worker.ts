/**
 * What a rollout worker does: take its run's settings once (rollout-protocol.ts), then for each job run
 * the episode (the agent loop and its QuickJS sandbox) with a policy that asks the engine for tokens (or
 * the environment's scripted expert), and judge it with the settings' judges. Runs, `spindle collect`
 * and the Playground all send their episodes here. Lives in a web worker or a Node worker_thread
 * (workers/rollout.*.ts) so that a sandbox that takes its host down takes only this worker; tests call it directly.
 */
import { isSuccess, type JudgeVote, type Task, type Trajectory } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { installEnvironmentSource } from '../../envs/sources.ts';
import { TrajectoryJudge } from '../../judge/ensemble.ts';
import type { Judge } from '../../judge/types.ts';
import { envVote, scoreFromVotes } from '../../judge/verifier-gate.ts';
import { buildEveryJudge } from './every-judge.ts';
import type { EpisodeJob, RolloutSettings } from './rollout-protocol.ts';
import { runEpisode } from '../../rollout/episode.ts';
import type { EpisodeEvent } from '../../rollout/events.ts';
import type { Policy } from '../../rollout/policy.ts';
import { ScriptedPolicy } from '../../rollout/scripted-policy.ts';

export interface JudgingDeps {
  getSecret?: (name: string) => string | null;
  loadModelJudge?: (id: string, path: string) => Promise<Judge>;
}

type EpisodeSettings = Omit<RolloutSettings, 'environments'>;

/** Scores with the environment's own `evaluate` (the rule judge's evaluator). */
const envEvaluator = (task: Task, trajectory: Trajectory) => getEnvironment(task.env).evaluate(task, trajectory);

export class RolloutWorkerCore {
  /** Without the environments' sources: the thread's registry of installed sources (envs/sources.ts) is the one that holds them. */
  private settings: EpisodeSettings | null = null;
  /** The settings' judges, built on the first episode judged with them (remote judges keep their cache and limits). */
  private judges: Promise<TrajectoryJudge> | null = null;

  constructor(
    private readonly policy: Policy,
    private readonly deps: JudgingDeps = {},
  ) {}

  /**
   * Takes the settings every later episode runs under and installs their user environments in this
   * thread (content already installed is not built again). Sent once per worker, before its first episode.
   */
  async configure(settings: RolloutSettings): Promise<void> {
    const { environments, ...episodes } = settings;
    for (const source of environments) await installEnvironmentSource(source);
    this.settings = episodes;
    this.judges = null;
  }

  async runEpisode(job: EpisodeJob, onEvent?: (event: EpisodeEvent) => void): Promise<Trajectory> {
    const settings = this.settings;
    if (!settings)
      throw new Error('This rollout worker was given an episode before it was configured; configure it first.');
    const env = getEnvironment(job.task.env);
    let policy = this.policy;
    let maxSteps = settings.max_steps;
    if (job.policy === 'expert') {
      if (!env.expert) throw new Error(`Environment "${env.name}" has no scripted expert.`);
      const turns = env.expert(job.task);
      // Small pieces, so a watched expert episode streams like a model's.
      policy = new ScriptedPolicy({ id: `expert:${env.name}`, turns, tokenizer: this.policy.tokenizer, pieceChars: 3 });
      maxSteps = Math.max(maxSteps, turns.length);
    }
    const tools = settings.tools.length ? [...new Set([...env.requiredTools, ...settings.tools])] : undefined;
    const trajectory = await runEpisode({
      policy,
      env,
      task: job.task,
      seed: job.seed,
      sampling: job.sampling,
      maxSteps,
      tools,
      toolTimeoutMs: settings.tool_timeout_ms,
      groupId: job.group_id,
      runId: settings.run_id,
      onEvent,
    });
    const withId = { ...trajectory, id: job.trajectory_id };
    if (job.judging === 'none') return withId;
    if (job.judging === 'env') {
      const started = performance.now();
      const score = await env.evaluate(job.task, withId);
      const vote: JudgeVote = {
        judge_id: `env:${env.name}`,
        score,
        rationale: 'environment evaluate()',
        latency_ms: performance.now() - started,
      };
      return { ...withId, votes: [vote], judge_score: score, success: isSuccess(score) };
    }
    const judgement = await (await this.ensemble(settings)).judge(withId, job.task);
    const started = performance.now();
    const envScore = await env.evaluate(job.task, withId);
    // The environment's verdict is kept as a vote of its own (`env:NAME`, shown beside the judges', never
    // averaged with them) and gates their score (src/judge/verifier-gate.ts); the group step adds the
    // group judges' votes and the group rule once the whole group is in (src/judge/group-step.ts).
    const votes =
      envScore === null
        ? judgement.votes
        : [...judgement.votes, envVote(env.name, envScore, performance.now() - started)];
    const judge_score = scoreFromVotes(votes, { minVotes: settings.min_votes, gate: settings.verifier_gate });
    // Success is the environment's verdict (the task was done), whatever the blend of judges says:
    // replay admission, the curriculum and every success rate read it.
    return { ...withId, votes, judge_score, success: isSuccess(envScore) };
  }

  /** The settings' per-episode judges, built once per configuration. */
  private ensemble(settings: EpisodeSettings): Promise<TrajectoryJudge> {
    if (this.judges) return this.judges;
    // Group judges see whole groups, in the group step (src/judge/group-step.ts), not one episode here.
    const chosen = (settings.n_judges === null ? settings.judges : settings.judges.slice(0, settings.n_judges)).filter(
      (j) => j.type !== 'group',
    );
    // A judge that cannot be set up votes null (the run counts and shows its failures) instead of failing every episode.
    this.judges = buildEveryJudge(chosen, { evaluator: envEvaluator, policy: this.policy, ...this.deps }).then(
      (judges) => new TrajectoryJudge({ judges, minVotes: settings.min_votes }),
    );
    return this.judges;
  }
}
