/**
 * The training loop, with every outside dependency injected so
 * it runs in a test without workers:
 *
 *   safety check (due?) → plan the online/replay mix → collectGroups(n, step, levels) (already judged)
 *   → advantages + replay draws (grpo-batch.ts) → GRPO update (update.ts) → replay admission
 *   → curriculum → metrics → checkpoint every N
 *
 * Plus `sftTrain` (SFT on good trajectories, or on instructions from skills) on token examples (sft-data.ts), and
 * transfer (model-setup.ts) via `transferFrom`: the model prepared once, the learning rate scaled there.
 *
 * Determinism: given the same weights, config, checkpoint and a `collectGroups` that depends only on
 * (n, step, levels), every step is reproduced exactly: the replay RNG, LoRA dropout seed (from
 * `config.seed` and the step), optimizer state and data mix are all in the checkpoint.
 *
 * A safety check runs at the START of step s when due (step 0 sets the baselines), so it measures the
 * weights after s updates. A regression restores the weights and optimizer state of the best checked
 * step (kept in memory and in the checkpoint) and lowers the online share to 1 − capability_ratio;
 * the step counter, replay buffer and curriculum carry on.
 */
import type { RunConfig } from '../config/schema.ts';
import type { Metrics, MetricsRecord, RunMarker, Trajectory } from '../contracts.ts';
import { createRng, deriveSeed, type Rng } from '../rng.ts';
import type { TransformerModel } from '../model/transformer.ts';
import type { TrainSample } from './batch.ts';
import {
  CHECKPOINT_VERSION,
  checkCheckpoint,
  restoreWeights,
  snapshotWeights,
  type PreparedModel,
  type TrainerCheckpoint,
  type WeightSnapshot,
} from './checkpoint.ts';
import { createCurriculum, levelOf, recordScores, type CurriculumState } from './curriculum.ts';
import { buildGrpoBatch, type BuiltBatch } from './grpo-batch.ts';
import { prepareModel, prepareResumed, type TransferStart } from './model-setup.ts';
import { Optimizer, type OptimizerState } from './optimizer.ts';
import { planBatch, ReplayBuffer } from './replay-buffer.ts';
import { SafetyMonitor, type BaselineEvaluator, type SafetyReport } from './safety-monitor.ts';
import { grpoUpdate, sftUpdate } from './update.ts';

/**
 * Fresh, judged groups: `n` groups of `group_size` samples of one task each. `levels` is the
 * curriculum's difficulty per environment, or null when the curriculum is off (use tasks.difficulty_range).
 */
export type CollectGroups = (n: number, step: number, levels: Record<string, number> | null) => Promise<Trajectory[][]>;

export interface TrainerDeps {
  model: TransformerModel;
  config: RunConfig;
  collectGroups: CollectGroups;
  /** Held-out benchmark scores for the safety monitor; without it the monitor is off. */
  evaluateBaselines?: BaselineEvaluator;
  onMetrics?: (record: MetricsRecord) => void;
  onMarker?: (marker: RunMarker) => void;
  runId?: string;
  /** Token id used to pad batches (any id: padding is masked). */
  padId?: number;
  now?: () => number;
  /** Continue a run exactly where this checkpoint left it. */
  resumeFrom?: TrainerCheckpoint;
  /** Transfer: start from a source-environment checkpoint (weights only) or an adapter already attached; ignored on resume. */
  transferFrom?: TransferStart;
  /** A promise while the run is paused, else null: updates wait on it between micro-batches. */
  held?: () => Promise<void> | null;
  /** The per-token advantages each online group of an update was trained with (grpo-batch.ts), after the update. */
  onGroupAdvantages?: (step: number, groups: BuiltBatch['groupAdvantages']) => void | Promise<void>;
}

interface RollbackPoint {
  step: number;
  weights: WeightSnapshot;
  optimizer: OptimizerState;
}

export class Trainer {
  readonly model: TransformerModel;
  readonly config: RunConfig;
  readonly runId: string;
  readonly setup: PreparedModel;
  readonly optimizer: Optimizer;
  private replay: ReplayBuffer;
  private curriculum: CurriculumState;
  private readonly safety: SafetyMonitor | null;
  private rng: Rng;
  private stepNo = 0;
  private sftStepNo = 0;
  private onlineRatio: number;
  private best: RollbackPoint | null = null;
  private readonly now: () => number;

  constructor(private readonly deps: TrainerDeps) {
    const cfg = deps.config;
    this.model = deps.model;
    this.config = cfg;
    this.now = deps.now ?? Date.now;
    const resume = deps.resumeFrom ? checkCheckpoint(deps.resumeFrom) : null;
    this.runId = resume?.run_id ?? deps.runId ?? cfg.name;
    this.setup = resume
      ? prepareResumed(this.model, cfg, resume.setup)
      : prepareModel(this.model, cfg, deps.transferFrom);
    if (cfg.grpo.kl_beta > 0 && !this.setup.lora) {
      throw new Error(
        'grpo.kl_beta > 0 needs LoRA: the reference policy is the model with its adapters off; set lora.r > 0 or kl_beta: 0',
      );
    }
    this.optimizer = new Optimizer(this.model.trainableVariables(), {
      kind: cfg.training.optimizer,
      learningRate: this.setup.learningRate,
      warmupSteps: cfg.training.warmup_steps,
      weightDecay: cfg.training.weight_decay,
      gradClip: cfg.training.grad_clip,
    });
    this.replay = new ReplayBuffer(cfg.replay);
    this.curriculum = createCurriculum(cfg.tasks.environments, cfg.curriculum);
    this.rng = createRng(deriveSeed(cfg.seed, 0x7e91a7));
    this.onlineRatio = cfg.replay.online_ratio;
    this.safety =
      cfg.safety.enabled && deps.evaluateBaselines
        ? new SafetyMonitor(cfg.safety, deps.evaluateBaselines, resume?.safety)
        : null;
    if (resume) this.restore(resume);
  }

  get step(): number {
    return this.stepNo;
  }

  get replayBuffer(): ReplayBuffer {
    return this.replay;
  }

  get dataMix(): { online_ratio: number } {
    return { online_ratio: this.onlineRatio };
  }

  /** Difficulty per environment from the curriculum, or null when it is off. */
  levels(): Record<string, number> | null {
    if (!this.config.curriculum.enabled) return null;
    return Object.fromEntries(
      this.config.tasks.environments.map((e) => [e, levelOf(this.curriculum, e, this.config.curriculum)]),
    );
  }

  /** One GRPO step; returns its metrics (also sent to `onMetrics`). */
  async trainStep(): Promise<Metrics> {
    const cfg = this.config;
    const metrics: Metrics = {};
    if (this.safety?.due(this.stepNo)) Object.assign(metrics, await this.safetyCheck(this.stepNo));

    const plan = planBatch({
      batchSize: cfg.training.batch_size,
      groupSize: cfg.training.group_size,
      onlineRatio: this.onlineRatio,
      replayAvailable: this.replay.size,
    });
    const collectStart = performance.now();
    const groups = await this.deps.collectGroups(plan.onlineGroups, this.stepNo, this.levels());
    const updateStart = performance.now();
    // Where an update's time goes: waiting for rollouts (generation, tools, judges) and the optimizer passes.
    metrics['perf/rollout_seconds'] = (updateStart - collectStart) / 1000;
    const batch = buildGrpoBatch({
      groups,
      replay: this.replay,
      replayCount: plan.replayCount,
      rng: this.rng,
      config: cfg,
    });
    Object.assign(metrics, batch.metrics);

    // Each pass is one optimizer step on the same samples; the metrics are the last pass's (its clip
    // ratios show how far the earlier passes moved the policy off the sampling one).
    for (let pass = 0; pass < cfg.grpo.iterations && batch.samples.length > 0; pass++) {
      const r = await grpoUpdate(
        this.model,
        this.optimizer,
        batch.samples,
        {
          accumSteps: cfg.training.grad_accum_steps,
          padId: this.deps.padId ?? 0,
          temperature: batch.temperature,
          dropoutSeed: pass === 0 ? deriveSeed(cfg.seed, this.stepNo) : deriveSeed(cfg.seed, this.stepNo, pass),
          held: this.deps.held,
        },
        {
          clipEpsilon: cfg.grpo.clip_epsilon,
          clipEpsilonHigh: cfg.grpo.clip_epsilon_high,
          klBeta: cfg.grpo.kl_beta,
          useReference: cfg.grpo.kl_beta > 0,
        },
      );
      Object.assign(metrics, r.metrics, {
        'train/loss': r.loss,
        'train/grad_norm': r.step.gradNorm,
        'train/lr': r.step.lr,
        'train/tokens': r.tokens,
      });
    }
    metrics['perf/update_seconds'] = (performance.now() - updateStart) / 1000;
    await this.deps.onGroupAdvantages?.(this.stepNo, batch.groupAdvantages);
    for (const t of batch.scored) this.replay.offer(t);
    this.advanceCurriculum(batch.scored);

    this.stepNo++;
    metrics['replay/size'] = this.replay.size;
    metrics['data/online_ratio'] = this.onlineRatio;
    const levels = this.levels();
    if (levels) for (const [env, level] of Object.entries(levels)) metrics[`curriculum/${env}/level`] = level;
    this.deps.onMetrics?.({ run_id: this.runId, step: this.stepNo, time: this.now(), metrics });
    return metrics;
  }

  /** Steps until `training.max_steps` or until `signal` aborts (pause: take a checkpoint and resume later). */
  async run(signal?: AbortSignal): Promise<void> {
    while (this.stepNo < this.config.training.max_steps && !signal?.aborted) await this.trainStep();
  }

  /**
   * Supervised fine-tuning for `epochs` passes over the examples, shuffled each epoch by the run's RNG;
   * each update takes `batch_size × grad_accum_steps` examples in `grad_accum_steps` micro-batches.
   * Returns the loss of every update.
   */
  async sftTrain(
    examples: TrainSample[],
    epochs = this.config.training.epochs,
    signal?: AbortSignal,
  ): Promise<number[]> {
    if (examples.length === 0) throw new Error('sft: no examples');
    const cfg = this.config.training;
    const perUpdate = cfg.batch_size * cfg.grad_accum_steps;
    const losses: number[] = [];
    for (let epoch = 0; epoch < epochs && !signal?.aborted; epoch++) {
      const order = this.rng.shuffle(examples);
      for (let i = 0; i < order.length && !signal?.aborted; i += perUpdate) {
        const r = await sftUpdate(this.model, this.optimizer, order.slice(i, i + perUpdate), {
          accumSteps: cfg.grad_accum_steps,
          padId: this.deps.padId ?? 0,
          temperature: 1,
          dropoutSeed: deriveSeed(this.config.seed, 1 << 20, this.sftStepNo),
          held: this.deps.held,
        });
        this.sftStepNo++;
        losses.push(r.loss);
        this.deps.onMetrics?.({
          run_id: this.runId,
          step: this.sftStepNo,
          time: this.now(),
          metrics: {
            'train/loss': r.loss,
            'train/grad_norm': r.step.gradNorm,
            'train/lr': r.step.lr,
            'train/epoch': epoch + i / order.length,
            'train/tokens': r.tokens,
          },
        });
      }
    }
    return losses;
  }

  async checkpoint(): Promise<TrainerCheckpoint> {
    return {
      version: CHECKPOINT_VERSION,
      run_id: this.runId,
      step: this.stepNo,
      config: structuredClone(this.config),
      setup: structuredClone(this.setup),
      weights: await snapshotWeights(this.model),
      optimizer: await this.optimizer.exportState(),
      replay: this.replay.state(),
      curriculum: structuredClone(this.curriculum),
      safety: this.safety?.state() ?? { baselines: null, best: null, lastCheck: null },
      rng: this.rng.state(),
      online_ratio: this.onlineRatio,
      rollback: this.best ? { step: this.best.step, weights: this.best.weights, optimizer: this.best.optimizer } : null,
      sft_step: this.sftStepNo,
      created_at: this.now(),
    };
  }

  dispose(): void {
    this.optimizer.dispose();
  }

  private restore(c: TrainerCheckpoint): void {
    restoreWeights(this.model, c.weights);
    this.optimizer.importState(c.optimizer);
    this.replay = ReplayBuffer.fromState(c.replay);
    this.curriculum = structuredClone(c.curriculum);
    this.rng = createRng(c.rng);
    this.stepNo = c.step;
    this.sftStepNo = c.sft_step;
    this.onlineRatio = c.online_ratio;
    this.best = c.rollback;
  }

  private advanceCurriculum(scored: Trajectory[]): void {
    if (!this.config.curriculum.enabled) return;
    const byEnv = new Map<string, number[]>();
    // The curriculum follows the success rate (the environment's verdict), not the blended score: a
    // level is mastered when its tasks are done, not when the judges are pleased.
    // Only the current level's episodes count: those drawn a level above (curriculum.next_level_share) do not.
    const levels = this.levels();
    for (const t of scored)
      if (!levels || t.difficulty === levels[t.env])
        byEnv.set(t.env, [...(byEnv.get(t.env) ?? []), t.success === true ? 1 : 0]);
    for (const [env, scores] of byEnv) {
      const r = recordScores(this.curriculum, env, scores, this.config.curriculum);
      this.curriculum = r.state;
      for (const c of r.changes) {
        this.deps.onMarker?.({
          kind: 'curriculum',
          run_id: this.runId,
          step: this.stepNo,
          env,
          from: c.from,
          to: c.to,
          time: this.now(),
        });
      }
    }
  }

  private async safetyCheck(step: number): Promise<Metrics> {
    const report: SafetyReport = await this.safety!.check(step);
    const metrics: Metrics = {};
    for (const [name, score] of Object.entries(report.scores)) metrics[`safety/${name}/validation_success`] = score;
    if (report.isBest)
      this.best = { step, weights: await snapshotWeights(this.model), optimizer: await this.optimizer.exportState() };
    for (const m of SafetyMonitor.markers(report, this.runId, this.now())) this.deps.onMarker?.(m);
    if (report.regressions.length > 0) {
      metrics['safety/regressions'] = report.regressions.length;
      if (report.rollbackTo !== null && this.best && this.best.step === report.rollbackTo) {
        restoreWeights(this.model, this.best.weights);
        this.optimizer.importState(this.best.optimizer);
      }
      if (report.capabilityRatio !== null) this.onlineRatio = Math.min(this.onlineRatio, 1 - report.capabilityRatio);
    }
    return metrics;
  }
}
