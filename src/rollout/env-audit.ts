/**
 * The check a user's environment gets before any training: a few sampled tasks to read, the
 * tasks are the same for the same seed, the scripted expert succeeds through the real sandbox, and no
 * task-blind policy (blind-policies.ts: constants, echoes, formulas, blind tool probes) succeeds more
 * often than the environment's declared luck allows: beyond noise, i.e. the lower end of the 95% interval
 * of its success is above `chance(level)` (2 lucky items of 16 are not a shortcut; 6 of 6 are). A shortcut is a problem, not a warning: an
 * environment that pays for ignoring the task teaches exactly that.
 *
 * Given a policy, it also samples it (greedy, the evaluation's distinct test items) on a few items of the
 * entry level: a policy that solves none gives GRPO nothing to learn from (every group scores 0), which
 * the report says before any training, with the way out (operations/bootstrap.ts: demonstrations, SFT, GRPO).
 */
import { DEFAULT_CONFIG } from '../config/schema.ts';
import type { SamplingParams, Task } from '../contracts.ts';
import { budgetedEnvironment, CheckBudget, withCheckBudget } from '../envs/check-budget.ts';
import type { Environment } from '../envs/types.ts';
import { deriveSeed } from '../rng.ts';
import { bestBlindSuccess, type BlindResult } from './blind-policies.ts';
import { evaluatePolicy } from './evaluate.ts';
import { expertTrajectory } from './expert.ts';
import type { Policy } from './policy.ts';
import { countOf, formatSuccessCount, wilsonInterval } from './success-interval.ts';

export interface AuditOptions {
  /** Items per level for the expert and for each blind policy. */
  items?: number;
  seed?: number;
  /** Levels to audit; default every level the environment offers. */
  levels?: readonly number[];
  /** Called as each step starts (a line ending in "…") and as each part finishes: a line to show. */
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
  /**
   * The budget the audit runs under, shared with the rest of a check (reading the file first); without
   * one, a budget of its own of `budgetMs` (default CHECK_BUDGET_MS) reporting steps to `onProgress`.
   */
  budget?: CheckBudget;
  budgetMs?: number;
  /** The policy to sample on `items` distinct test items of the entry level (greedy unless `sampling` says otherwise; a run's default turns). */
  policy?: { policy: Policy; items: number; sampling?: Partial<SamplingParams>; maxSteps?: number; label: string };
}

/** How the policy did on the entry level's sampled items. */
export interface PolicyProbe {
  label: string;
  level: number;
  successes: number;
  n: number;
}

export interface LevelAudit {
  level: number;
  /** Expert successes of `expertItems` (null: no expert). */
  expert: { successes: number; n: number; firstFailure: string | null } | null;
  /** The best task-blind policy on `items` distinct test items, and the luck the environment declares. */
  blind: BlindResult;
  chance: number;
}

export interface EnvironmentAudit {
  env: string;
  samples: { level: number; split: string; prompt: string }[];
  levels: LevelAudit[];
  /** What must be fixed before training on it, each a sentence naming the level and the fix. */
  problems: string[];
  /** What is worth knowing but does not block (no expert, so solvability is unproven; a policy that scores 0). */
  warnings: string[];
  /** The policy sampled on the entry level (null: no policy was given). */
  policy: PolicyProbe | null;
  /** The policy solved none of its items: train it with the bootstrap flow, not GRPO alone. */
  needsBootstrap: boolean;
}

/** What a check says when the policy solves none of its items. */
function bootstrapAdvice(probe: PolicyProbe, env: string): string {
  return (
    `${probe.label} solved 0 of ${probe.n} sampled items at level ${probe.level}: GRPO learns from the spread of rewards within a group, and here every group would score 0, so it would learn nothing. ` +
    `Bootstrap it first (demonstrations, SFT on the good ones, then GRPO): \`spindle bootstrap --env ${env}\` (a file not added yet: --env-file FILE), or Bootstrap on the Environments screen`
  );
}

const SAMPLES = 5;

/** The audit; it throws a CheckTimeoutError naming the step when its budget runs out. */
export async function auditEnvironment(env: Environment, options: AuditOptions = {}): Promise<EnvironmentAudit> {
  const onProgress = options.onProgress ?? (() => {});
  if (options.budget) return audit(env, options, options.budget, onProgress);
  const budgetOptions = { signal: options.signal, onStep: (step: string) => onProgress(`${step}…`) };
  return withCheckBudget(options.budgetMs, budgetOptions, (budget) => audit(env, options, budget, onProgress));
}

async function audit(
  target: Environment,
  options: AuditOptions,
  budget: CheckBudget,
  onProgress: (line: string) => void,
): Promise<EnvironmentAudit> {
  const { items = 16, seed = 1, levels = target.difficulties } = options;
  const { env, verdicts } = countingVerdicts(budgetedEnvironment(target, budget));
  const problems: string[] = [];
  const warnings: string[] = [];
  const samples = sampleTasks(env, levels, seed, budget, problems);
  onProgress(`${SAMPLES} tasks sampled`);
  if (!env.expert)
    warnings.push(
      'no expert(task): solvability is not checked; add one so the audit can prove each level can be solved through the tools',
    );

  const audits: LevelAudit[] = [];
  for (const level of levels) {
    const before = { ...verdicts };
    const expert = env.expert ? await auditExpert(env, level, Math.min(items, 8), seed, budget, problems) : null;
    if (expert) onProgress(`level ${level}: expert ${expert.successes}/${expert.n}`);
    budget.begin(`level ${level}: the task-blind policies on ${items} items`);
    const blind = await bestBlindSuccess(env, level, { items, seed, split: 'test', signal: budget.signal });
    const chance = declaredChance(env, level, problems, budget.signal);
    const blindSuccesses = Math.round(blind.success * blind.n);
    const [low] = wilsonInterval(blindSuccesses, blind.n);
    if (low > chance) {
      problems.push(
        `level ${level}: ${blind.policy} scores ${formatSuccessCount(blindSuccesses, blind.n)} without reading the task: this environment pays for ignoring it. Make evaluate require the work (the tool calls that find the answer), or declare the luck with chance(level)`,
      );
    }
    const judged = verdicts.scored - before.scored + (verdicts.unscored - before.unscored);
    if (judged > 0 && verdicts.scored === before.scored) {
      problems.push(
        `level ${level}: evaluate gave no score on any of the ${judged} episodes it judged (every verdict was null: it could not decide); ` +
          'an environment that cannot score teaches nothing. Make it return a number in [0, 1]',
      );
    }
    onProgress(
      `level ${level}: best task-blind policy ${formatSuccessCount(blindSuccesses, blind.n)} (${blind.policy})`,
    );
    audits.push({ level, expert, blind, chance });
  }
  const policy = options.policy ? await probePolicy(env, options.policy, levels[0], seed, budget) : null;
  if (policy) {
    onProgress(`level ${policy.level}: ${policy.label} ${policy.successes}/${policy.n}`);
    if (policy.successes === 0 && policy.n > 0) warnings.push(bootstrapAdvice(policy, target.name));
  }
  return {
    env: target.name,
    samples,
    levels: audits,
    problems,
    warnings,
    policy,
    needsBootstrap: policy !== null && policy.n > 0 && policy.successes === 0,
  };
}

/**
 * The environment with every verdict of its evaluate counted (scored, or null: undecided), so that one that never
 * decides, which cannot be trained on, is a problem.
 */
function countingVerdicts(budgeted: Environment): {
  env: Environment;
  verdicts: { scored: number; unscored: number };
} {
  const verdicts = { scored: 0, unscored: 0 };
  const env: Environment = {
    ...budgeted,
    evaluate: async (task, trajectory) => {
      const score = await budgeted.evaluate(task, trajectory);
      if (score === null) verdicts.unscored++;
      else verdicts.scored++;
      return score;
    },
  };
  return { env, verdicts };
}

/** SAMPLES tasks to read, over the levels in turn; a seed that draws two different tasks is a problem. */
function sampleTasks(
  env: Environment,
  levels: readonly number[],
  seed: number,
  budget: CheckBudget,
  problems: string[],
): EnvironmentAudit['samples'] {
  const samples: EnvironmentAudit['samples'] = [];
  budget.begin(`sampling ${SAMPLES} tasks`);
  for (let i = 0; i < SAMPLES; i++) {
    const level = levels[i % levels.length];
    const task = env.generate(deriveSeed(seed, 'audit-sample', i), level, 'train');
    samples.push({ level, split: task.split, prompt: task.prompt });
    if (JSON.stringify(env.generate(deriveSeed(seed, 'audit-sample', i), level, 'train')) !== JSON.stringify(task)) {
      problems.push(
        `level ${level}: the same seed gave two different tasks; sample(rng, level) must draw only from rng (no Math.random, no state kept between calls)`,
      );
    }
  }
  return samples;
}

/** The expert on `n` train tasks of the level through the real sandbox; one that fails any is a problem. */
async function auditExpert(
  env: Environment,
  level: number,
  n: number,
  seed: number,
  budget: CheckBudget,
  problems: string[],
): Promise<NonNullable<LevelAudit['expert']>> {
  let successes = 0;
  let firstFailure: string | null = null;
  budget.begin(`level ${level}: the expert on ${n} tasks`);
  for (let i = 0; i < n; i++) {
    const task: Task = env.generate(deriveSeed(seed, 'audit-expert', level, i), level, 'train');
    const t = await expertTrajectory(env, task, { signal: budget.signal });
    if (t.success) successes++;
    else
      firstFailure ??= `task "${task.prompt.slice(0, 80)}" scored ${t.judge_score}${t.steps.find((s) => s.tool_call?.error)?.tool_call?.error ? ` (a tool said: ${t.steps.find((s) => s.tool_call?.error)!.tool_call!.error})` : ''}`;
  }
  if (successes < n)
    problems.push(
      `level ${level}: the expert succeeds on ${successes} of ${n} tasks; first failure: ${firstFailure}. Fix expert(task) or evaluate so the intended solution scores 1`,
    );
  return { successes, n, firstFailure };
}

/** The given policy on its distinct test items of the entry level (greedy unless its sampling says otherwise). */
async function probePolicy(
  env: Environment,
  probe: NonNullable<AuditOptions['policy']>,
  level: number,
  seed: number,
  budget: CheckBudget,
): Promise<PolicyProbe> {
  budget.begin(`level ${level}: ${probe.label} on ${probe.items} items`);
  const maxSteps = probe.maxSteps ?? DEFAULT_CONFIG.trajectory_collection.max_steps_per_trajectory;
  const [result] = await evaluatePolicy(probe.policy, [env], {
    levels: [level],
    items: probe.items,
    seed,
    sampling: probe.sampling,
    maxSteps,
    signal: budget.signal,
  });
  return { label: probe.label, level, successes: Math.round(result.success * result.n), n: result.n };
}

/** The luck the environment declares at a level; one it cannot declare (a throw, a value out of range) is a problem, and no luck. */
function declaredChance(env: Environment, level: number, problems: string[], signal: AbortSignal): number {
  try {
    return env.chance(level);
  } catch (e) {
    if (signal.aborted) throw e; // the check's end, not the environment's answer
    problems.push(`level ${level}: ${e instanceof Error ? e.message : String(e)}`);
    return 0;
  }
}

/** The audit as lines for a terminal. */
export function formatAudit(audit: EnvironmentAudit): string[] {
  const lines = [`Environment ${audit.env}`, 'Sampled tasks:'];
  for (const s of audit.samples) lines.push(`  [level ${s.level}] ${s.prompt.replace(/\s+/g, ' ').slice(0, 160)}`);
  lines.push('Level  expert       best task-blind policy');
  for (const l of audit.levels) {
    const expert = l.expert ? `${l.expert.successes}/${l.expert.n}`.padEnd(12) : 'none'.padEnd(12);
    const blind = formatSuccessCount(Math.round(l.blind.success * l.blind.n), l.blind.n);
    lines.push(
      `${String(l.level).padEnd(7)}${expert} ${blind} (${l.blind.policy})${l.chance ? `, declared chance ${pct(l.chance)}` : ''}`,
    );
  }
  if (audit.policy)
    lines.push(
      `Policy: ${audit.policy.label} solved ${audit.policy.successes}/${audit.policy.n} sampled items at level ${audit.policy.level} (greedy)`,
    );
  for (const w of audit.warnings) lines.push(`warning: ${w}`);
  for (const p of audit.problems) lines.push(`problem: ${p}`);
  lines.push(
    audit.problems.length
      ? `${countOf(audit.problems.length, 'problem')}: fix ${audit.problems.length === 1 ? 'it' : 'them'} before training on ${audit.env}.`
      : `No problems: ${audit.env} is ready to train on.`,
  );
  return lines;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}
