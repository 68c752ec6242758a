/**
 * Bootstrapping a policy on an environment it cannot solve yet: GRPO learns only from the spread of
 * rewards inside a group, so where the policy never succeeds every group scores 0 and no update moves
 * it. The flow, one operation for the CLI (`spindle bootstrap`) and the app (the Environments screen):
 *
 *   held-out success of the policy → demonstrations (demonstrations.ts: the expert, stored episodes or an
 *   OpenAI-compatible model), the successful ones only → SFT on them (sft.ts) → held-out success again →
 *   GRPO from the fine-tuned weights (run.ts, the platform's run) → its final held-out success.
 *
 * Every held-out figure is the one evaluation (rollout/evaluate.ts) on the same distinct test items of the
 * environment's entry level (the run's `tasks.eval_items`, its seed, greedy), so the three are item-matched.
 * The model is trained in place: the caller owns it and disposes it.
 */
import type { RunConfig } from '../../config/schema.ts';
import { fixedLevel } from '../../config/levels.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import type { Environment } from '../../envs/types.ts';
import { evaluatePolicy, evaluationSettings } from '../../rollout/evaluate.ts';
import { LocalPolicy } from '../../rollout/local-policy.ts';
import { formatSuccessCount, wilsonInterval } from '../../rollout/success-interval.ts';
import { getRun, type Store } from '../../store/index.ts';
import { chatExample } from '../../train/sft-data.ts';
import type { LoadedPolicyModel } from '../engine/engine-api.ts';
import type { JudgingDeps } from '../engine/rollout-worker.ts';
import {
  describeSource,
  gatherDemonstrations,
  type DemonstrationSource,
  type Demonstrations,
} from './demonstrations.ts';
import type { RunEvent } from './events.ts';
import type { PipelineRun } from './run.ts';
import { fitToContext, runSft } from './sft.ts';

export interface BootstrapSettings {
  source: DemonstrationSource;
  /** Demonstration tasks to collect (expert, remote). */
  demonstrations: number;
  sftEpochs: number;
  sftLearningRate: number;
  /** Examples per SFT update. */
  sftBatchSize: number;
}

/** What the Environments screen's bootstrap sends the engine: the GRPO run's config (one environment), its user environments, the flow's settings. */
export interface EngineBootstrapRequest {
  config: RunConfig;
  environments: EnvironmentSource[];
  settings: BootstrapSettings;
}

export interface BootstrapRequest {
  store: Store;
  /** The GRPO run's config; its one environment is bootstrapped (the run's steps, eval items and seed apply). */
  config: RunConfig;
  /** The user environments it names, stored with each run. */
  environments: EnvironmentSource[];
  /** The policy to bootstrap, trained in place (SFT, then GRPO). */
  model: LoadedPolicyModel;
  /** What the baseline's adapter names as its base (`base_model_name_or_path`). */
  baseModel: string;
  settings: BootstrapSettings;
  /** The platform's GRPO run over `model` (Node: worker_threads; the app: the engine's rollout workers). */
  newRun(model: LoadedPolicyModel): PipelineRun;
  judging: JudgingDeps;
  signal: AbortSignal;
  onEvent?: (event: BootstrapEvent) => void;
}

export type BootstrapStage = 'baseline' | 'demonstrations' | 'sft' | 'after-sft' | 'grpo';

export type BootstrapEvent =
  | { type: 'stage'; stage: BootstrapStage; line: string }
  | { type: 'held-out'; stage: 'baseline' | 'after-sft' | 'after-grpo'; result: HeldOut }
  | { type: 'demonstration'; done: number; good: number; total: number }
  | { type: 'sft-update'; done: number; total: number; loss: number }
  | { type: 'run'; event: RunEvent };

/** A held-out success count on distinct items, with its Wilson 95% interval. */
export interface HeldOut {
  successes: number;
  n: number;
  interval: [number, number];
}

export interface BootstrapReport {
  env: string;
  level: number;
  baseline: HeldOut;
  demonstrations: { source: string; good: number; total: number; runId: string | null };
  sft: { losses: number[]; adapter: Uint8Array | null; examples: number };
  afterSft: HeldOut | null;
  /** The GRPO run and its last held-out figure (null when it was stopped before its evaluation, or training.max_steps is 0). */
  /** The GRPO run: its id and the name the store gave it (a taken name gets a number), for `runLabel`. */
  grpo: { runId: string; runName: string; steps: number; heldOut: HeldOut | null } | null;
  stopped: boolean;
}

export function heldOut(successes: number, n: number): HeldOut {
  return { successes, n, interval: wilsonInterval(successes, n) };
}

/** "3/32 = 9% [3, 24]": the shared counts-with-interval form the app also shows. */
export function formatHeldOut(h: HeldOut): string {
  return formatSuccessCount(h.successes, h.n);
}

/** The flow's config checks: one environment, GRPO, sizes above 0; throws a sentence naming the fix. */
export function checkBootstrapRequest(config: RunConfig, settings: BootstrapSettings): void {
  if (config.tasks.environments.length !== 1) {
    throw new Error(
      `bootstrap works on one environment at a time; the config names ${config.tasks.environments.length} (${config.tasks.environments.join(', ') || 'none'}). Name one with --env or --env-file.`,
    );
  }
  if (config.training.method !== 'grpo')
    throw new Error('bootstrap ends in a GRPO run; set training.method: grpo (the SFT step has its own settings).');
  for (const [name, value] of [
    ['demonstrations', settings.demonstrations],
    ['SFT epochs', settings.sftEpochs],
    ['SFT batch size', settings.sftBatchSize],
  ] as const) {
    if (!(Number.isInteger(value) && value >= 1))
      throw new Error(`bootstrap: ${name} must be a whole number ≥ 1, got ${value}.`);
  }
  if (!(settings.sftLearningRate > 0))
    throw new Error(`bootstrap: the SFT learning rate must be above 0, got ${settings.sftLearningRate}.`);
}

export async function bootstrapPolicy(request: BootstrapRequest): Promise<BootstrapReport> {
  const { config, settings, signal } = request;
  checkBootstrapRequest(config, settings);
  const emit = request.onEvent ?? (() => {});
  const env = getEnvironment(config.tasks.environments[0]);
  const level = fixedLevel(config.tasks, env.name);

  emit({
    type: 'stage',
    stage: 'baseline',
    line: `held-out success of the policy on ${env.name} level ${level} (${config.tasks.eval_items} distinct test items, greedy)`,
  });
  const baseline = await evaluateHeldOut(request, env, level, 'baseline', emit);

  const source = describeSource(settings.source);
  emit({ type: 'stage', stage: 'demonstrations', line: `demonstrations from ${source}` });
  const demos = await gatherDemonstrations({
    store: request.store,
    config,
    source: settings.source,
    tasks: settings.demonstrations,
    judging: request.judging,
    signal,
    onEpisode: (done, good) => emit({ type: 'demonstration', done, good, total: settings.demonstrations }),
  });
  const demonstrations = { source, good: demos.good.length, total: demos.total, runId: demos.runId };
  const report: BootstrapReport = {
    env: env.name,
    level,
    baseline,
    demonstrations,
    sft: { losses: [], adapter: null, examples: 0 },
    afterSft: null,
    grpo: null,
    stopped: false,
  };
  if (signal.aborted) return { ...report, stopped: true };

  report.sft = await sftOnDemonstrations(request, demos, emit);
  if (signal.aborted || report.sft.losses.length === 0) return { ...report, stopped: true };

  emit({ type: 'stage', stage: 'after-sft', line: 'held-out success after SFT, on the same items' });
  report.afterSft = await evaluateHeldOut(request, env, level, 'after-sft', emit);
  if (signal.aborted) return { ...report, stopped: true };
  if (config.training.max_steps === 0) return report;

  emit({
    type: 'stage',
    stage: 'grpo',
    line: `GRPO from the fine-tuned weights: ${config.training.max_steps} updates`,
  });
  // The run's step-0 evaluation would repeat the after-SFT one: same weights, same items.
  const runConfig: RunConfig = { ...config, training: { ...config.training, eval_at_start: false } };
  const grpo = await runGrpo(request, runConfig, emit);
  return { ...report, grpo, stopped: signal.aborted };
}

/** The policy's held-out success on the level: the run's evaluation (its items, seed, greedy sampling and budgets). */
async function evaluateHeldOut(
  request: BootstrapRequest,
  env: Environment,
  level: number,
  stage: 'baseline' | 'after-sft',
  emit: (e: BootstrapEvent) => void,
): Promise<HeldOut> {
  const { model } = request;
  const s = evaluationSettings(request.config);
  const [result] = await evaluatePolicy(new LocalPolicy(model.model, model.tokenizer), [env], {
    levels: [level],
    items: s.items,
    seed: s.seed,
    sampling: s.sampling,
    maxSteps: s.maxSteps,
    toolTimeoutMs: s.toolTimeoutMs,
    signal: request.signal,
  });
  const h = heldOut(Math.round(result.success * result.n), result.n);
  emit({ type: 'held-out', stage, result: h });
  return h;
}

/** SFT of the policy's LoRA on the successful demonstrations that fit its context, with the flow's SFT settings. */
async function sftOnDemonstrations(
  request: BootstrapRequest,
  demos: Demonstrations,
  emit: (e: BootstrapEvent) => void,
): Promise<BootstrapReport['sft']> {
  const { config, settings, model } = request;
  const { kept: examples } = fitToContext(
    demos.good.map((t) => chatExample({ messages: t.messages, tools: t.tools }, model.tokenizer)),
    model.model.config.maxPositions,
  );
  const sftConfig: RunConfig = {
    ...config,
    name: `${config.name}-sft`,
    training: {
      ...config.training,
      method: 'sft',
      epochs: settings.sftEpochs,
      learning_rate: settings.sftLearningRate,
      batch_size: settings.sftBatchSize,
      grad_accum_steps: 1,
    },
  };
  const updates = settings.sftEpochs * Math.ceil(examples.length / settings.sftBatchSize);
  emit({
    type: 'stage',
    stage: 'sft',
    line: `SFT on ${examples.length} successful demonstrations (of ${demos.total}): ${settings.sftEpochs} epochs, ${updates} updates`,
  });
  const losses: number[] = [];
  const sft = await runSft({
    model: model.model,
    tokenizer: model.tokenizer,
    config: sftConfig,
    baseModel: request.baseModel,
    examples,
    merge: false,
    signal: request.signal,
    onUpdate: (loss) => {
      losses.push(loss);
      emit({ type: 'sft-update', done: losses.length, total: updates, loss });
    },
  });
  return { losses: sft.losses, adapter: sft.adapter, examples: examples.length };
}

async function runGrpo(
  request: BootstrapRequest,
  config: RunConfig,
  emit: (e: BootstrapEvent) => void,
): Promise<NonNullable<BootstrapReport['grpo']>> {
  const run = request.newRun(request.model);
  const result: NonNullable<BootstrapReport['grpo']> = { runId: '', runName: config.name, steps: 0, heldOut: null };
  let fatal: string | null = null;
  const unsubscribe = run.subscribe((event) => {
    if (event.type === 'update' || event.type === 'checkpoint') result.steps = Math.max(result.steps, event.step);
    if (event.type === 'evaluation' && event.split === 'test')
      result.heldOut = heldOut(Math.round(event.success * event.n), event.n);
    if (event.type === 'error' && event.fatal) fatal = event.message;
    emit({ type: 'run', event });
  });
  const stop = () => void run.stop();
  request.signal.addEventListener('abort', stop, { once: true });
  try {
    result.runId = await run.start(config, { environments: request.environments });
    result.runName = (await getRun(request.store, result.runId))?.name ?? config.name;
    if (request.signal.aborted) stop();
    await run.done();
  } finally {
    request.signal.removeEventListener('abort', stop);
    unsubscribe();
  }
  if (fatal) throw new Error(`the GRPO run ${result.runId} failed: ${fatal}`);
  if (result.heldOut) emit({ type: 'held-out', stage: 'after-grpo', result: result.heldOut });
  return result;
}
