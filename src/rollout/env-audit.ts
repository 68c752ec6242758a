/**
 * The check a user's environment gets before any training (issue 28): a few sampled tasks to read, the
 * tasks are the same for the same seed, the scripted expert succeeds through the real sandbox, and no
 * task-blind policy (blind-policies.ts: constants, echoes, formulas, blind tool probes) succeeds more
 * often than the environment's declared luck allows: beyond noise, i.e. the lower end of the 95% interval
 * of its success is above `chance(level)` (2 lucky items of 16 are not a shortcut; 6 of 6 are). A shortcut is a problem, not a warning: an
 * environment that pays for ignoring the task teaches exactly that.
 */
import type { Task } from '../contracts.ts';
import type { Environment } from '../envs/types.ts';
import { deriveSeed } from '../rng.ts';
import { bestBlindSuccess, type BlindResult } from './blind-policies.ts';
import { expertTrajectory } from './expert.ts';
import { wilsonInterval } from './success-interval.ts';

export interface AuditOptions {
  /** Items per level for the expert and for each blind policy. */
  items?: number;
  seed?: number;
  /** Levels to audit; default every level the environment offers. */
  levels?: readonly number[];
  /** Called as each part finishes: a line to show. */
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
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
  /** What is worth knowing but does not block (no expert, so solvability is unproven). */
  warnings: string[];
}

const SAMPLES = 5;

export async function auditEnvironment(env: Environment, options: AuditOptions = {}): Promise<EnvironmentAudit> {
  const { items = 16, seed = 1, levels = env.difficulties, onProgress = () => {} } = options;
  const problems: string[] = [];
  const warnings: string[] = [];
  const samples: EnvironmentAudit['samples'] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const level = levels[i % levels.length];
    const task = env.generate(deriveSeed(seed, 'audit-sample', i), level, 'train');
    samples.push({ level, split: task.split, prompt: task.prompt });
    if (JSON.stringify(env.generate(deriveSeed(seed, 'audit-sample', i), level, 'train')) !== JSON.stringify(task)) {
      problems.push(`level ${level}: the same seed gave two different tasks; sample(rng, level) must draw only from rng (no Math.random, no state kept between calls)`);
    }
  }
  onProgress(`${SAMPLES} tasks sampled`);
  if (!env.expert) warnings.push('no expert(task): solvability is not checked; add one so the audit can prove each level can be solved through the tools');

  const audits: LevelAudit[] = [];
  for (const level of levels) {
    options.signal?.throwIfAborted();
    let expert: LevelAudit['expert'] = null;
    if (env.expert) {
      let successes = 0;
      let firstFailure: string | null = null;
      const n = Math.min(items, 8);
      for (let i = 0; i < n; i++) {
        const task: Task = env.generate(deriveSeed(seed, 'audit-expert', level, i), level, 'train');
        const t = await expertTrajectory(env, task);
        if (t.success) successes++;
        else firstFailure ??= `task "${task.prompt.slice(0, 80)}" scored ${t.judge_score}${t.steps.find((s) => s.tool_call?.error)?.tool_call?.error ? ` (a tool said: ${t.steps.find((s) => s.tool_call?.error)!.tool_call!.error})` : ''}`;
      }
      expert = { successes, n, firstFailure };
      if (successes < n) problems.push(`level ${level}: the expert succeeds on ${successes} of ${n} tasks; first failure: ${firstFailure}. Fix expert(task) or evaluate so the intended solution scores 1`);
      onProgress(`level ${level}: expert ${successes}/${n}`);
    }
    const blind = await bestBlindSuccess(env, level, { items, seed, split: 'test' });
    const chance = env.chance(level);
    const [low, high] = wilsonInterval(Math.round(blind.success * blind.n), blind.n);
    if (low > chance) {
      problems.push(`level ${level}: ${blind.policy} scores ${pct(blind.success)} of ${blind.n} items (95% interval ${pct(low)}–${pct(high)}) without reading the task: this environment pays for ignoring it. Make evaluate require the work (the tool calls that find the answer), or declare the luck with chance(level)`);
    }
    onProgress(`level ${level}: best task-blind policy ${pct(blind.success)} (${blind.policy})`);
    audits.push({ level, expert, blind, chance });
  }
  return { env: env.name, samples, levels: audits, problems, warnings };
}

/** The audit as lines for a terminal. */
export function formatAudit(audit: EnvironmentAudit): string[] {
  const lines = [`Environment ${audit.env}`, 'Sampled tasks:'];
  for (const s of audit.samples) lines.push(`  [level ${s.level}] ${s.prompt.replace(/\s+/g, ' ').slice(0, 160)}`);
  lines.push('Level  expert       best task-blind policy');
  for (const l of audit.levels) {
    const expert = l.expert ? `${l.expert.successes}/${l.expert.n}`.padEnd(12) : 'none'.padEnd(12);
    lines.push(`${String(l.level).padEnd(7)}${expert} ${pct(l.blind.success)} of ${l.blind.n} (${l.blind.policy})${l.chance ? `, declared chance ${pct(l.chance)}` : ''}`);
  }
  for (const w of audit.warnings) lines.push(`warning: ${w}`);
  for (const p of audit.problems) lines.push(`problem: ${p}`);
  lines.push(audit.problems.length ? `${audit.problems.length} problem(s): fix them before training on ${audit.env}.` : `No problems: ${audit.env} is ready to train on.`);
  return lines;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}
