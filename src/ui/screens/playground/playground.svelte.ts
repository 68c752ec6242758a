/**
 * Playground state: pick an environment, level and task (or type one), run the policy on it and
 * watch it live, judge it, re-run with the same seed, or sample a group of N to compare side by
 * side with their group-relative advantages.
 */
import type { Task, Trajectory } from '../../../contracts.ts';
import { errorMessage } from '../../lib/format.ts';
import { creditConfig, groupCredits, type TrajectoryCredit } from '../../../pipeline/app/episode-turns.ts';
import type { GroupStats } from '../../../pipeline/app/group-stats.ts';
import { modelPhaseText, type ModelPhase } from '../../lib/model-state.ts';
import { LiveEpisode } from './live-episode.svelte.ts';
import type { EnvironmentInfo, EpisodeEvent, PlaygroundSource, PolicyOption } from './source.ts';

const TASKS_TO_OFFER = 6;

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0] >>> 1;
}

export class PlaygroundState {
  environments = $state<EnvironmentInfo[]>([]);
  policies = $state<PolicyOption[]>([]);
  envId = $state('');
  difficulty = $state(1);
  policy = $state('');
  tasks = $state<Task[]>([]);
  taskId = $state<string | null>(null);
  /** When set, the typed task is used instead of the picked one. */
  customPrompt = $state('');
  useCustom = $state(false);
  seed = $state(randomSeed());
  groupSize = $state(4);

  loadError = $state<string | null>(null);
  taskError = $state<string | null>(null);
  episode = $state<LiveEpisode | null>(null);
  group = $state<LiveEpisode[]>([]);

  /**
   * The local model's state. The engine loads it with the first episode that plays it and keeps it, so
   * that episode's first text (or its end) says it is ready; a failure before then, that it did not load.
   */
  modelPhase = $state<ModelPhase>('idle');

  private controller: AbortController | null = null;

  constructor(private readonly source: PlaygroundSource) {}

  readonly env = $derived(this.environments.find((e) => e.id === this.envId) ?? null);
  readonly task = $derived(this.tasks.find((t) => t.id === this.taskId) ?? null);
  /** The model the chosen policy runs, or null (the scripted expert runs none). */
  readonly model = $derived(this.policies.find((p) => p.id === this.policy)?.model ?? null);
  readonly modelText = $derived(
    this.model
      ? modelPhaseText(this.modelPhase, this.model, {
          idle: 'loads with the first episode',
          failed: "did not load: see the episode's error",
        })
      : null,
  );
  readonly busy = $derived(
    (this.episode !== null && (this.episode.phase === 'running' || this.episode.phase === 'judging')) ||
      this.group.some((e) => e.phase === 'running' || e.phase === 'judging'),
  );
  /**
   * Each member's credit once every member is judged, as the trainer would give it with the default
   * settings (grpo.gamma, advantage mode, reward scale): unscored members leave the group, as in training.
   */
  readonly groupCredits = $derived.by((): TrajectoryCredit[] | null => {
    if (this.group.length === 0 || this.group.some((e) => e.phase !== 'done' || !e.judged)) return null;
    return groupCredits(
      this.group.map((e) => e.judged!),
      creditConfig(),
    );
  });
  readonly groupStats = $derived.by((): GroupStats | null => {
    const credits = this.groupCredits;
    if (!credits) return null;
    const g = credits.find((c) => c.group)?.group;
    const unscored = credits.filter((c) => c.status === 'unscored').length;
    return {
      mean: g?.mean ?? 0,
      std: g?.std ?? 0,
      zeroStd: !g || credits.some((c) => c.status === 'flat'),
      advantages: credits.map((c) => c.advantage ?? 0),
      unscored,
    };
  });

  async load(): Promise<void> {
    try {
      [this.environments, this.policies] = await Promise.all([this.source.environments(), this.source.policies()]);
      this.loadError = null;
      this.policy = this.policies.find((p) => !p.unavailable)?.id ?? this.policies[0]?.id ?? '';
      if (this.environments.length) await this.selectEnv(this.environments[0].id);
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  async selectEnv(id: string): Promise<void> {
    this.envId = id;
    const levels = this.env?.levels ?? [1];
    if (!levels.includes(this.difficulty)) this.difficulty = levels[0];
    await this.refreshTasks();
  }

  async refreshTasks(): Promise<void> {
    try {
      this.tasks = await this.source.tasks(this.envId, this.difficulty, TASKS_TO_OFFER);
      this.taskId = this.tasks[0]?.id ?? null;
      this.taskError = null;
    } catch (err) {
      this.tasks = [];
      this.taskId = null;
      this.taskError = errorMessage(err);
    }
  }

  private async resolveTask(): Promise<Task | null> {
    try {
      if (this.useCustom) {
        if (!this.customPrompt.trim()) throw new Error('Type a task first, or switch back to a generated task.');
        return await this.source.customTask(this.envId, this.difficulty, this.customPrompt.trim());
      }
      if (!this.task) throw new Error('Pick a task (or type one) before running.');
      this.taskError = null;
      return this.task;
    } catch (err) {
      this.taskError = errorMessage(err);
      return null;
    }
  }

  /** Runs one episode; `sameSeed` replays the last seed (same weights + task + seed = same episode). */
  async run(sameSeed = false): Promise<void> {
    const task = sameSeed && this.episode ? this.episode.task : await this.resolveTask();
    if (!task) return;
    if (!sameSeed) this.seed = randomSeed();
    this.cancel();
    this.group = [];
    const episode = new LiveEpisode(task, this.seed);
    this.episode = episode;
    const signal = this.newSignal();
    if (await this.play(episode, signal)) await this.judge([episode], signal);
  }

  /** Samples `groupSize` episodes of one task with consecutive seeds, as a GRPO group would, and judges them as one group. */
  async sampleGroup(): Promise<void> {
    const task = await this.resolveTask();
    if (!task) return;
    this.cancel();
    this.seed = randomSeed();
    this.episode = null;
    this.group = Array.from({ length: this.groupSize }, (_, i) => new LiveEpisode(task, this.seed + i));
    const signal = this.newSignal();
    // One after another: the local policy has one engine; the views fill in as each finishes.
    const finished: LiveEpisode[] = [];
    for (const episode of this.group) {
      if (signal.aborted) episode.phase = 'cancelled';
      else if (await this.play(episode, signal)) finished.push(episode);
    }
    await this.judge(finished, signal);
  }

  cancel(): void {
    this.controller?.abort();
    this.controller = null;
  }

  private newSignal(): AbortSignal {
    this.controller = new AbortController();
    return this.controller.signal;
  }

  /** Runs one episode; true when it finished (it then waits to be judged). */
  private async play(episode: LiveEpisode, signal: AbortSignal): Promise<boolean> {
    const loading = this.model !== null && this.modelPhase !== 'ready';
    if (loading) this.modelPhase = 'loading';
    const ready = () => {
      if (loading) this.modelPhase = 'ready';
    };
    try {
      // Sources get plain objects: a $state proxy cannot be structured-cloned into IndexedDB or a worker.
      const task = $state.snapshot(episode.task) as Task;
      const onEvent = (event: EpisodeEvent) => {
        ready();
        episode.onEvent(event);
      };
      episode.finish(await this.source.runEpisode({ task, seed: episode.seed, policy: this.policy }, onEvent, signal));
      ready();
      return true;
    } catch (err) {
      episode.phase = signal.aborted ? 'cancelled' : 'error';
      episode.error = signal.aborted ? null : errorMessage(err);
      if (loading && this.modelPhase === 'loading') this.modelPhase = signal.aborted ? 'idle' : 'failed';
      return false;
    }
  }

  /** Judges finished episodes together (group judges see them all at once); a judge failure is shown, the episodes kept. */
  private async judge(episodes: LiveEpisode[], signal: AbortSignal): Promise<void> {
    if (episodes.length === 0) return;
    if (signal.aborted) {
      for (const e of episodes) e.phase = 'cancelled';
      return;
    }
    try {
      const results = await this.source.judge(
        episodes.map((e) => $state.snapshot(e.trajectory!) as Trajectory),
        signal,
      );
      episodes.forEach((e, i) => {
        e.votes = results[i].votes;
        e.score = results[i].score;
        e.phase = 'done';
      });
    } catch (err) {
      for (const e of episodes) {
        e.judgeError = errorMessage(err);
        e.phase = signal.aborted ? 'cancelled' : 'done';
      }
    }
  }
}
