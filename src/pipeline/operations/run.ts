/**
 * A training run: the collection pipeline wired to the trainer.
 *
 *   task pool (environments × curriculum levels) → rollout worker pool (episodes + judges, one sandbox
 *   per worker) → collector (groups, stored one transaction per trajectory) → Trainer (GRPO, replay,
 *   safety monitor) → metrics, evaluations, checkpoints in the store → RunEvents to the UI / CLI.
 *
 * The model lives with the run (the engine worker in the browser, the main thread in Node) and
 * serves every worker's generation requests in batches. Rollouts for the next update start while the
 * trainer updates, up to `max_offpolicy_updates` ahead. Everything needed to resume after a reload is
 * in the store: the run record (with its config), every finished trajectory and a checkpoint taken after
 * every update (LoRA weights, optimizer moments, replay buffer, curriculum, RNG; the store keeps the
 * latest two). A resumed run therefore redoes only the update that was in progress, and the evaluation
 * of the last update when it was cut off; trajectory ids carry the step, so nothing stored is overwritten
 * but that unfinished update's own groups.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { ModelConfig } from '../../model/config.ts';
import type { EnvironmentSource, MetricsRecord, RunMarker, Split, Trajectory } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { evaluationSettings, evaluationTasks, summarizeLevel } from '../../rollout/evaluate.ts';
import { installedSources, installEnvironmentSource } from '../../envs/sources.ts';
import { createRng, deriveSeed } from '../../rng.ts';
import { groupLevel } from '../../train/curriculum.ts';
import type { TransformerModel } from '../../model/transformer.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import {
  appendMetrics,
  addMarker,
  createRun,
  getRun,
  listEvaluations,
  putEvaluation,
  putTrajectories,
  saveCheckpoint,
  setGroupAdvantages,
  setRunStatus,
  type Store,
} from '../../store/index.ts';
import { Trainer, type TrainerDeps } from '../../train/trainer.ts';
import { encodeCheckpoint, loadResumeCheckpoint } from './checkpoint-codec.ts';
import type { RunController, RunEvent, RunListener, RunStatus } from './events.ts';
import { GenerationService, linkedGenerator, type RemoteGenerator } from '../engine/generation.ts';
import {
  configuredWorker,
  episodeJob,
  groupJobs,
  rolloutSettings,
  type EpisodeJob,
  type RolloutWorker,
} from '../engine/rollout-protocol.ts';
import { WorkerPool, type Clock, type WorkerLink } from '../engine/worker-pool.ts';
import { storeGroup } from './store-group.ts';
import { createGroupStep, type GroupStep } from '../../judge/group-step.ts';
import { fixedLevel } from '../../config/levels.ts';

export interface RunDeps {
  store: Store;
  loadModel(config: RunConfig): Promise<{ model: TransformerModel; tokenizer: TextTokenizer }>;
  /** A rollout worker that asks `generator` for tokens; the run configures it before its first episode. */
  spawnWorker(index: number, generator: RemoteGenerator): RolloutWorker;
  /** Default pool size when the config says null. */
  cores: number;
  backend?: string;
  /**
   * A rollout worker that makes no progress of its own for this long is treated as hung (replaced, its
   * episode re-queued); time it spends waiting for the engine's tokens does not count (engine/worker-pool.ts).
   */
  hangTimeoutMs?: number;
  /** What the hang timeout is timed by: the real timers unless given (a test drives its own). */
  hangClock?: Clock;
  /** API keys of the group judges, which run here (the per-trajectory judges run in the workers, with their own keys). */
  getSecret?: (name: string) => string | null;
  /**
   * Called each time sampling or an update finds the run paused and waits for it to resume: the moment a
   * pause takes effect, which a test awaits instead of waiting some time and hoping it has.
   */
  onHeld?: () => void;
}

/** Said when a run starts with `judge.verifier_gate: false`. */
export const VERIFIER_GATE_OFF_WARNING =
  "judge.verifier_gate is off: the judges' combined score is used as it is, so a lenient judge can score a wrong answer above a right one and give it a positive advantage. Set judge.verifier_gate: true to keep the judges inside the environment's verdict.";

/** What the rollouts given up by `stop()` are rejected with: the run ends as stopped, not failed. */
export class RunStopped extends Error {
  constructor() {
    super('The run was stopped.');
    this.name = 'RunStopped';
  }
}

/** One later step's groups, rolled out ahead of the trainer. */
interface Prefetch {
  /** The request it answers (group count, curriculum levels): a different request discards it. */
  key: string;
  groups: Promise<Trajectory[][]>;
  /** Groups of it already finished (the Train screen's "groups ready"). */
  finished: number;
}

export class PipelineRun implements RunController {
  private listeners = new Set<RunListener>();
  private status: RunStatus = 'idle';
  private runId = '';
  private config!: RunConfig;
  private trainer: Trainer | null = null;
  private pool: WorkerPool<EpisodeJob, Trajectory> | null = null;
  private generation: GenerationService | null = null;
  /** Metrics and marker writes in flight (queueWrite). */
  private pendingWrites: Promise<void> = Promise.resolve();
  private paused: { promise: Promise<void>; resolve(): void } | null = null;
  private stopRequested = false;
  /** By step: up to `max_offpolicy_updates` steps beyond the one being trained. */
  private readonly prefetched = new Map<number, Prefetch>();
  private loop: Promise<void> = Promise.resolve();
  private startedAt = 0;
  private stepsAtStart = 0;
  private inFlight = 0;
  /** Group judges and the verifier gate, applied to each group once it is rolled out. */
  private groupStep: GroupStep | null = null;
  /** Per judge: votes cast on training trajectories and how many of them were null (the judge could not score). */
  private judgeVotes = new Map<string, { failed: number; total: number }>();

  constructor(private readonly deps: RunDeps) {}

  subscribe(listener: RunListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when the run has finished, stopped or failed. */
  done(): Promise<void> {
    return this.loop;
  }

  /**
   * `environments`: the sources of the user environments `config` names (installed here, stored with the
   * run; a resumed run installs the ones it stored). `transferFrom`: where a transfer starts (the trainer
   * prepares the model from it, once); a resumed run has its own weights.
   */
  async start(
    config: RunConfig,
    options: {
      resumeRunId?: string;
      environments?: EnvironmentSource[];
      transferFrom?: TrainerDeps['transferFrom'];
    } = {},
  ): Promise<string> {
    if (this.status === 'running' || this.status === 'starting')
      throw new Error('This run is already going; stop it before starting another.');
    // A run trains with GRPO; saying otherwise used to run GRPO anyway.
    if (config.training.method === 'sft')
      throw new Error(
        'training.method is sft, but a run trains with GRPO: fine-tune with `spindle sft --data FILE` (the CLI), or set training.method: grpo.',
      );
    this.stopRequested = false;
    this.judgeVotes.clear();
    this.config = config;
    const { store } = this.deps;
    if (options.resumeRunId) {
      const record = await getRun(store, options.resumeRunId);
      if (!record) throw new Error(`There is no run "${options.resumeRunId}" to resume in this store.`);
      this.runId = record.id;
      this.config = record.config;
      for (const source of record.environments ?? []) await installEnvironmentSource(source);
    } else {
      for (const source of options.environments ?? []) await installEnvironmentSource(source);
      for (const name of config.tasks.environments) getEnvironment(name); // an unknown name fails here, listing the known ones
      // Stored running: a page reloaded (or a process killed) while the run starts leaves a run to resume.
      this.runId = (
        await createRun(store, config, { environments: installedSources(config.tasks.environments), status: 'running' })
      ).id;
    }
    // Which weights a run trains is said, not assumed: a base is only ever the one its config names.
    this.setStatus('starting', `training base model ${this.config.model.base_model}`);
    if (this.config.judge.verifier_gate === false)
      this.emit({ type: 'error', run_id: this.runId, fatal: false, message: VERIFIER_GATE_OFF_WARNING });
    try {
      this.groupStep = createGroupStep(this.config.judge, { getSecret: this.deps.getSecret });
      const { model, tokenizer } = await this.deps.loadModel(this.config);
      const batching = GenerationService.forRun(this.config.trajectory_collection.reproducible);
      this.generation = new GenerationService(
        () => model,
        tokenizer,
        batching,
        () => this.held(),
      );
      const checkpoint = options.resumeRunId ? await loadResumeCheckpoint(store, this.runId) : undefined;
      this.trainer = new Trainer({
        model,
        config: this.config,
        runId: this.runId,
        padId: tokenizer.padId,
        collectGroups: (n, step, levels) => this.collectGroups(n, step, levels),
        // The safety monitor chooses checkpoints, so it looks at validation items, never at test ones.
        evaluateBaselines: this.config.safety.enabled
          ? (step) => this.evaluate(step, this.config.safety.eval_items, 'validation')
          : undefined,
        onMetrics: (record) => this.queueWrite(() => this.recordMetrics(record)),
        onMarker: (marker) => this.queueWrite(() => this.recordMarker(marker)),
        resumeFrom: checkpoint,
        transferFrom: options.resumeRunId ? undefined : options.transferFrom,
        held: () => this.held(),
        // What the update used is stored with each group (and exported): views read it, never re-derive it.
        onGroupAdvantages: async (_step, groups) => {
          for (const g of groups) await setGroupAdvantages(this.deps.store, g.group_id, g.advantages);
        },
      });
      this.pool = this.makePool(model.config);
    } catch (error) {
      await this.fail(error);
      throw error;
    }
    this.loop = this.trainLoop();
    return this.runId;
  }

  async pause(): Promise<void> {
    if (this.status !== 'running' || this.paused) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.paused = { promise, resolve };
    this.setStatus('paused');
    await setRunStatus(this.deps.store, this.runId, 'paused');
  }

  /** While paused, the promise that resuming resolves (what sampling and updates wait on); else null. */
  private held(): Promise<void> | null {
    if (this.paused) this.deps.onHeld?.();
    return this.paused?.promise ?? null;
  }

  async resume(): Promise<void> {
    if (!this.paused) return;
    this.paused.resolve();
    this.paused = null;
    this.setStatus('running');
    await setRunStatus(this.deps.store, this.runId, 'running');
  }

  /**
   * Stops promptly: the rollouts in flight (and the engine's generation for them) are given up now rather
   * than awaited, which on a slow backend could take minutes; an update already computing finishes and is
   * checkpointed. The update whose rollouts were given up is redone when the run is resumed.
   */
  async stop(): Promise<void> {
    this.stopRequested = true;
    if (this.paused) await this.resume();
    this.setStatus('stopping');
    this.pool?.close(new RunStopped());
    await this.loop;
  }

  private makePool(model: ModelConfig): WorkerPool<EpisodeJob, Trajectory> {
    const size = this.config.trajectory_collection.n_workers ?? Math.max(1, this.deps.cores);
    // Where turns are batched, each worker runs several episodes at once, so the engine has turns to batch.
    const batched = GenerationService.forRun(this.config.trajectory_collection.reproducible).maxBatch > 1;
    const { training } = this.config;
    const inFlight = GenerationService.episodesInFlight(training.batch_size * training.group_size, model);
    const jobsPerWorker = batched ? Math.ceil(inFlight / size) : 1;
    // Each worker's generator tells the pool's watchdog when the worker waits on the engine (engine/worker-pool.ts).
    const generator = (link: WorkerLink): RemoteGenerator => linkedGenerator(this.generation!, link);
    // Every worker the pool starts, a replacement too, is configured once before its first episode; a
    // resumed run builds its pool afresh, with the environments it reinstalled (engine/rollout-protocol.ts).
    const settings = rolloutSettings(this.config, this.runId);
    const spawn = (i: number, link: WorkerLink) =>
      configuredWorker(this.deps.spawnWorker(i, generator(link)), settings);
    return new WorkerPool(
      spawn,
      {
        size,
        jobsPerWorker,
        hangTimeoutMs: this.deps.hangTimeoutMs ?? 120_000,
        clock: this.deps.hangClock,
        maxAttempts: 3,
        paused: () => this.paused !== null,
      },
      (index, reason) =>
        this.emit({
          type: 'error',
          run_id: this.runId,
          fatal: false,
          message: `Rollout worker ${index} ${reason}; it was replaced and its episode re-queued.`,
        }),
    );
  }

  private async trainLoop(): Promise<void> {
    const trainer = this.trainer!;
    const { training } = this.config;
    this.startedAt = performance.now();
    this.stepsAtStart = trainer.step;
    this.setStatus('running');
    await setRunStatus(this.deps.store, this.runId, 'running');
    let failure: { error: unknown } | null = null;
    /** Set when a stop cut the run short: even after its last update, a skipped evaluation is still owed. */
    let cutShort = false;
    try {
      if (await this.evaluationOwed(trainer.step)) await this.evaluate(trainer.step, this.config.tasks.eval_items);
      while (trainer.step < training.max_steps && !this.stopRequested) {
        if (this.paused) await this.paused.promise;
        if (this.stopRequested) break;
        await trainer.trainStep();
        await this.saveResumePoint();
        this.emitProgress();
        // A stop during the update keeps it (checkpointed above); its evaluation is owed and done on resume.
        if (this.stopRequested) {
          cutShort = true;
          break;
        }
        if (trainer.step % training.eval_interval === 0 || trainer.step === training.max_steps)
          await this.evaluate(trainer.step, this.config.tasks.eval_items);
      }
    } catch (error) {
      // Rollouts given up by stop() reject with RunStopped: that is the stop, not a failure.
      if (error instanceof RunStopped && this.stopRequested) cutShort = true;
      else failure = { error };
    } finally {
      this.pool?.close();
      // The model is free for the next run only once the engine has ended what it sampled for given-up
      // rollouts (a forward pass stops at its next token).
      await this.generation?.idle();
      // Turn caches of episodes whose worker was given up (the others were released as they ended).
      this.generation?.turnCaches?.clear();
      this.prefetched.clear();
      // The run's Adam moments: the adapter stays on the model, the optimizer state would outlive the run
      // (140 tensors per run of the shipped model, one more set for every run started in the same page).
      trainer.dispose();
    }
    if (failure) return this.fail(failure.error);
    const finished = trainer.step >= training.max_steps && !cutShort;
    try {
      await setRunStatus(this.deps.store, this.runId, finished ? 'completed' : 'stopped');
      this.setStatus(finished ? 'finished' : 'stopped');
    } catch (error) {
      await this.fail(error);
    }
  }

  /**
   * An evaluation owed at `step` and not stored yet: the baseline before the first update, or the one a
   * resumed run's last update was due when the page went away during it.
   */
  private async evaluationOwed(step: number): Promise<boolean> {
    const { eval_interval, max_steps, eval_at_start } = this.config.training;
    // Step 0 is the baseline a rise is read against: the base model (or the transfer source) before any update.
    if (step === 0 ? !eval_at_start : step % eval_interval !== 0 && step !== max_steps) return false;
    const stored = await listEvaluations(this.deps.store, this.runId);
    return !this.config.tasks.environments.every((env) => stored.some((e) => e.step === step && e.benchmark === env));
  }

  /**
   * A checkpoint after every update: a reload then costs at most the update in progress. It is small for
   * a LoRA run: the adapter, its Adam moments, and the replay buffer as ids. The store keeps the latest
   * two, and those of every `training.checkpoint_every`-th update (to export or compare later).
   */
  private async saveResumePoint(): Promise<void> {
    // The update's metrics and markers are stored before the checkpoint that says the update happened:
    // a resumed run does not redo it, so a crash between the two would lose them (the store orders them too).
    await this.pendingWrites;
    const ckpt = await this.trainer!.checkpoint();
    const id = await saveCheckpoint(this.deps.store, encodeCheckpoint(ckpt), this.config.training.checkpoint_every);
    this.emit({ type: 'checkpoint', run_id: this.runId, step: ckpt.step, checkpoint_id: id });
  }

  /**
   * The trainer's `collectGroups`: n fresh groups for `step`, plus a head start on the next
   * `max_offpolicy_updates` steps' (their rollouts run on the weights of the update they started in).
   */
  private async collectGroups(n: number, step: number, levels: Record<string, number> | null): Promise<Trajectory[][]> {
    const key = JSON.stringify([n, levels]);
    const ahead = this.prefetched.get(step);
    this.prefetched.delete(step);
    const ready = ahead?.key === key ? ahead.groups : this.rollGroups(n, step, levels);
    for (const [later, prefetch] of this.prefetched) if (prefetch.key !== key) this.prefetched.delete(later); // the curriculum moved on
    const tc = this.config.trajectory_collection;
    // Rollouts ahead of the trainer see the weights change mid-episode at a moment timing decides: a
    // reproducible run rolls each step out on the weights it is trained from.
    const depth = tc.reproducible ? 0 : tc.max_offpolicy_updates;
    for (
      let later = step + 1;
      later <= step + depth && later < this.config.training.max_steps && !this.stopRequested;
      later++
    ) {
      if (this.prefetched.has(later)) continue;
      const prefetch: Prefetch = { key, finished: 0, groups: Promise.resolve([]) };
      prefetch.groups = this.rollGroups(n, later, levels, () => prefetch.finished++);
      prefetch.groups.catch(() => {}); // a failed prefetch is retried when asked for
      this.prefetched.set(later, prefetch);
    }
    const groups = await ready;
    for (const group of groups) {
      // A finished group is stored before training on it, and then shown.
      await storeGroup(this.deps.store, group, {
        runId: this.runId,
        step,
        rewardScale: this.config.training.reward_scale,
      });
      this.announceGroup(group);
    }
    return groups;
  }

  /** Rolls out `step`'s groups, calling `onGroup` as each one finishes. */
  private rollGroups(
    n: number,
    step: number,
    levels: Record<string, number> | null,
    onGroup?: () => void,
  ): Promise<Trajectory[][]> {
    const { tasks, training, seed } = this.config;
    return Promise.all(
      Array.from({ length: n }, async (_, g) => {
        const envName = tasks.environments[(step * n + g) % tasks.environments.length];
        const env = getEnvironment(envName);
        const current = Math.min(
          Math.max(levels?.[envName] ?? fixedLevel(tasks, envName), tasks.difficulty_range[0]),
          tasks.difficulty_range[1],
        );
        const level = levels
          ? groupLevel(
              current,
              this.config.curriculum.next_level_share,
              createRng(deriveSeed(seed, 'next-level', step, g)).next(),
              Math.min(this.config.curriculum.max_level, tasks.difficulty_range[1]),
            )
          : current;
        const task = env.generate(deriveSeed(seed, 'task', step, g), level, 'train');
        const jobs = groupJobs(task, `${this.runId}/${step}/${g}`, { seed, step, group: g }, training.group_size, {
          sampling: this.config.sampling,
          judging: 'configured',
        });
        const rolled = await Promise.all(jobs.map((job) => this.rollout(job)));
        // The group step: group judges, then every score gated by the environment's verdict (src/judge/group-step.ts).
        const group = await this.groupStep!.judge(task, rolled);
        onGroup?.();
        return group;
      }),
    );
  }

  private async rollout(job: EpisodeJob): Promise<Trajectory> {
    this.inFlight++;
    this.emit({
      type: 'episode-start',
      run_id: this.runId,
      trajectory_id: job.trajectory_id,
      task: job.task,
      worker: -1,
    });
    try {
      return await this.pool!.submit(job);
    } finally {
      this.inFlight--;
    }
  }

  /** Tells the listeners of a stored group's steps, trajectories and votes. */
  private announceGroup(group: Trajectory[]): void {
    for (const t of group) {
      for (const s of t.steps) this.emit({ type: 'rollout-step', run_id: this.runId, trajectory_id: t.id, step: s });
      this.emit({ type: 'trajectory', run_id: this.runId, trajectory: t });
      this.emit({ type: 'judged', run_id: this.runId, trajectory_id: t.id, score: t.judge_score, votes: t.votes });
    }
    this.countJudgeFailures(group);
  }

  /** Says (once per group, only when it grew) how often each judge failed to score; the others' votes carry the run on. */
  private countJudgeFailures(group: Trajectory[]): void {
    const reasons = new Map<string, string>();
    for (const vote of group.flatMap((t) => t.votes)) {
      const count = this.judgeVotes.get(vote.judge_id) ?? { failed: 0, total: 0 };
      count.total++;
      if (vote.score === null) {
        count.failed++;
        reasons.set(vote.judge_id, vote.rationale);
      }
      this.judgeVotes.set(vote.judge_id, count);
    }
    for (const [judge_id, last_reason] of reasons) {
      const { failed, total } = this.judgeVotes.get(judge_id)!;
      this.emit({ type: 'judge-failures', run_id: this.runId, judge_id, failed, total, last_reason });
    }
  }

  /**
   * Held-out success per environment, for `eval_interval` and the safety monitor: the one evaluation
   * (rollout/evaluate.ts: the same distinct items, greedy settings and summary as `spindle eval --run`),
   * its episodes run by the run's rollout workers.
   */
  private async evaluate(step: number, items: number, split: Split = 'test'): Promise<Record<string, number>> {
    const settings = evaluationSettings(this.config);
    const results: Record<string, number> = {};
    for (const envName of this.config.tasks.environments) {
      const env = getEnvironment(envName);
      const level = fixedLevel(this.config.tasks, envName);
      const tasks = evaluationTasks(env, level, { items, seed: settings.seed, split });
      const groupId = `${this.runId}/eval/${step}/${split}/${envName}`;
      let done = 0;
      const progress = () =>
        this.emit({
          type: 'evaluation-progress',
          run_id: this.runId,
          step,
          env: envName,
          split,
          done,
          total: tasks.length,
        });
      progress();
      const runs = await Promise.all(
        tasks.map((task, i) =>
          this.rollout(episodeJob(task, groupId, i, task.seed, { sampling: settings.sampling, judging: 'env' })).then(
            (t) => {
              done++;
              progress();
              return t;
            },
          ),
        ),
      );
      // Stored so they can be browsed (their split is test or validation, their group …/eval/… is never
      // trained on, so it keeps step -1); a dataset export filtered to split=train leaves them out.
      await putTrajectories(this.deps.store, runs);
      const result = summarizeLevel(
        envName,
        level,
        split,
        items,
        runs.map((t) => t.judge_score),
      );
      results[envName] = result.success;
      const benchmark = split === 'test' ? envName : `${envName}/${split}`;
      await putEvaluation(this.deps.store, {
        run_id: this.runId,
        step,
        benchmark,
        results: {
          success: result.success,
          mean_score: result.mean_score,
          n: result.n,
          level,
          unscored: result.unscored,
        },
      });
      this.emit({
        type: 'evaluation',
        run_id: this.runId,
        step,
        env: envName,
        split,
        success: result.success,
        n: result.n,
      });
    }
    return results;
  }

  /** The trainer's metrics and markers, written in order without holding the update up; awaited before a checkpoint. */
  private queueWrite(write: () => Promise<void>): void {
    this.pendingWrites = this.pendingWrites.then(write).catch((error: unknown) =>
      this.emit({
        type: 'error',
        run_id: this.runId,
        fatal: false,
        message: `Could not store the run's metrics: ${error instanceof Error ? error.message : String(error)}`,
      }),
    );
  }

  private async recordMetrics(record: MetricsRecord): Promise<void> {
    const generation = this.generation?.stats;
    if (generation && generation.seconds > 0)
      record.metrics['perf/tokens_per_second'] = generation.generatedTokens / generation.seconds;
    this.emit({ type: 'update', run_id: this.runId, step: record.step, metrics: record.metrics });
    await appendMetrics(this.deps.store, record);
  }

  private async recordMarker(marker: RunMarker): Promise<void> {
    this.emit({ type: 'marker', run_id: this.runId, marker });
    await addMarker(this.deps.store, marker);
  }

  private emitProgress(): void {
    const done = this.trainer!.step;
    const total = this.config.training.max_steps;
    const elapsed = (performance.now() - this.startedAt) / 1000;
    const rate = (done - this.stepsAtStart) / Math.max(elapsed, 1e-9);
    const stats = this.pool!.stats();
    const g = this.generation!.stats;
    this.emit({
      type: 'progress',
      run_id: this.runId,
      done,
      total,
      eta_seconds: rate > 0 ? (total - done) / rate : null,
      tokens_per_second: g.seconds > 0 ? g.generatedTokens / g.seconds : null,
      queue: {
        pending_tasks: stats.queued,
        in_flight: this.inFlight,
        offpolicy_updates: this.prefetched.size,
        ready_groups: [...this.prefetched.values()].reduce((n, p) => n + p.finished, 0),
      },
    });
  }

  private async fail(error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    if (typeof process !== 'undefined' && process.env?.SPINDLE_DEBUG) console.error(error);
    this.emit({ type: 'error', run_id: this.runId, message, fatal: true });
    this.setStatus('error', message);
    if (this.runId) await setRunStatus(this.deps.store, this.runId, 'failed', message).catch(() => {});
  }

  private setStatus(status: RunStatus, message?: string): void {
    this.status = status;
    this.emit({ type: 'status', run_id: this.runId, status, message, backend: this.deps.backend });
  }

  private emit(event: RunEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
