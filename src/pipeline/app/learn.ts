/**
 * The Learn screen's lesson from the store: any run, any update a trainer consumed groups in (step ≥ 0),
 * any group of it, as the stored episodes. The lesson recomputes the group at settings the reader moves
 * (γ, ε, group size, advantage type, process rewards) with the trainer's own functions
 * (episode-turns.ts `groupCredits`, train/advantages.ts, train/turn-credit.ts), so what it shows at the
 * run's own settings is what the update used. Ratios are not stored per sample, so the lesson shows the
 * first-pass ratio of 1 and says so.
 */
import type { Trajectory } from '../../contracts.ts';
import type { RunConfig } from '../../config/schema.ts';
import { createRng } from '../../rng.ts';
import { getTrajectories, listGroups, listRuns, type Store } from '../../store/index.ts';
import { turnCredits } from '../../train/advantages.ts';
import { scoreGroup } from '../../train/grpo-batch.ts';
import { turnBonuses } from '../../train/turn-credit.ts';
import { creditConfig, groupCredits, type TrajectoryCredit } from './episode-turns.ts';
import { tokenDetail } from './trajectories.ts';

/** One turn of the walkthrough: how its credit is made of the outcome and the process rewards. */
export interface CreditTurn {
  /** 0-based turn index. */
  index: number;
  /** What the turn did: the tools it called (with "failed" on an error), or "answer". */
  summary: string;
  /** Turns after this one until the end. */
  distance: number;
  /** γ^distance. */
  discount: number;
  /** The group advantage discounted to this turn: γ^distance · A. */
  outcome: number;
  /** This turn's own process reward in score units (0 unless `process_rewards.apply_to` is `turn`). */
  bonus: number;
  /** What process rewards add to this turn's credit: its own and later turns', discounted, in advantage units. */
  process: number;
  /** The credit on this turn's tokens in the update (`trajectoryCredits`): outcome + process. */
  credit: number;
}

/** One real per-turn credit computation: group mean/std → advantage → γ^distance per turn → + process reward → credit. */
export interface CreditWalkthrough {
  /** Index of the sample in its group, and its trajectory. */
  sample: number;
  trajectory_id: string;
  /** The group's ranked scores, scaled (what mean and std are over); null for a sample that left the group unscored. */
  scores: (number | null)[];
  score: number;
  /** Its judges' score (before any process bonus folded into the ranked score). */
  judge_score: number;
  mean: number;
  std: number;
  mode: RunConfig['grpo']['advantage'];
  reward_scale: number;
  gamma: number;
  per_turn_process: boolean;
  advantage: number;
  /** True when every sample scored the same: the trainer skipped the group and every credit is 0. */
  flat: boolean;
  turns: CreditTurn[];
}

function summary(t: Trajectory, turn: number, last: number): string {
  const steps = t.steps.filter((s) => s.turn === turn && s.tool_call);
  if (!steps.length) return turn === last && t.final_response !== null ? 'answer' : 'text';
  return steps.map((s) => `${s.tool_call!.tool_name}${s.tool_call!.error ? ' (failed)' : ''}`).join(', ');
}

/**
 * The walkthrough for the group's sample with the most turns (the largest |advantage| among equals),
 * from the credits `groupCredits` gave the group. Null when no sample was credited.
 */
export function creditWalkthrough(
  group: readonly Trajectory[],
  credits: readonly TrajectoryCredit[],
  config: RunConfig,
): CreditWalkthrough | null {
  const candidates = group
    .map((t, i) => ({ t, i, c: credits[i] }))
    .filter((x) => x.c.credits && x.c.group && x.c.advantage !== null && x.c.ranked !== null);
  if (!candidates.length) return null;
  const { t, i, c } = candidates.reduce((best, x) =>
    x.c.credits!.length > best.c.credits!.length ||
    (x.c.credits!.length === best.c.credits!.length && Math.abs(x.c.advantage!) > Math.abs(best.c.advantage!))
      ? x
      : best,
  );
  const credit = c.credits!;
  const g = c.group!;
  const n = credit.length;
  // The outcome part alone is the trainer's turnCredits without turn rewards; process rewards are the rest.
  const outcome = turnCredits(n, c.advantage!, { gamma: g.gamma });
  const bonuses = g.perTurnProcess ? turnBonuses(t, config) : new Array<number>(n).fill(0);
  return {
    sample: i,
    trajectory_id: t.id,
    scores: credits.map((x) => x.ranked),
    score: c.ranked!,
    judge_score: t.judge_score ?? 0,
    mean: g.mean,
    std: g.std,
    mode: g.mode,
    reward_scale: g.rewardScale,
    gamma: g.gamma,
    per_turn_process: g.perTurnProcess,
    advantage: c.advantage!,
    flat: c.status === 'flat',
    turns: credit.map((value, k) => ({
      index: k,
      summary: summary(t, k, n - 1),
      distance: n - 1 - k,
      discount: g.gamma ** (n - 1 - k),
      outcome: outcome[k],
      bonus: bonuses[k],
      process: value - outcome[k],
      credit: value,
    })),
  };
}

export interface LessonSample {
  trajectory_id: string;
  final_response: string | null;
  /** Its judges' score. */
  score: number | null;
  /** The score it was ranked by in the group, scaled (null: unscored, it left the group). */
  ranked: number | null;
  /** Its group advantage (null when unscored). */
  advantage: number | null;
  /** Its tokens tinted by the credit the update put on them (their turn's), or null without tokens. */
  tokens: { text: string; value: number | null }[] | null;
}

export interface LessonGroup {
  env: string;
  task: string;
  samples: LessonSample[];
  /** Mean and sample std of the ranked scores, over the scored samples; null when none was scored. */
  stats: { mean: number; std: number; zero_std: boolean; size: number } | null;
  /** One real per-turn credit computation, for the group's sample with the most turns. */
  credit: CreditWalkthrough | null;
}

/** A group as the lesson shows it: samples with their tokens tinted by their credits, and the walkthrough. */
export function lessonGroup(trajectories: Trajectory[], config: RunConfig, fallbackTask = ''): LessonGroup {
  const credits = groupCredits(trajectories, config);
  const summary = credits.find((c) => c.group)?.group ?? null;
  return {
    env: trajectories[0]?.env ?? '',
    task: trajectories[0]?.task_description ?? fallbackTask,
    samples: trajectories.map((t, i) => ({
      trajectory_id: t.id,
      final_response: t.final_response,
      score: t.judge_score,
      ranked: credits[i].ranked,
      advantage: credits[i].advantage,
      tokens: tokenDetail(t, credits[i])?.pieces ?? null,
    })),
    stats: summary && {
      mean: summary.mean,
      std: summary.std,
      zero_std: credits.some((c) => c.status === 'flat'),
      size: summary.size,
    },
    credit: creditWalkthrough(trajectories, credits, config),
  };
}

/** What the reader can move. The run's own values are the starting point (`lessonKnobs`). */
export interface LessonKnobs {
  gamma: number;
  clip_epsilon: number;
  advantage: RunConfig['grpo']['advantage'];
  /** Process rewards off, folded into the ranked score, or credited to the turn that earned them. */
  process: 'off' | 'score' | 'turn';
  /** How many of the stored samples the group is made of; null: all of them. */
  group_size: number | null;
  /** Which smaller group is drawn (`resampleGroup`). */
  seed: number;
}

export function lessonKnobs(config: RunConfig): LessonKnobs {
  const c = creditConfig(config);
  return {
    gamma: c.grpo.gamma,
    clip_epsilon: c.grpo.clip_epsilon,
    advantage: c.grpo.advantage,
    process: c.process_rewards.enabled ? c.process_rewards.apply_to : 'off',
    group_size: null,
    seed: 1,
  };
}

const clamp = (x: number, lo: number, hi: number, fallback: number) =>
  Number.isFinite(x) ? Math.min(hi, Math.max(lo, x)) : fallback;

/** The run's config with the knobs applied; out-of-range or non-numeric knobs fall back to the run's values, so no input can break the trainer's math. */
export function withKnobs(config: RunConfig, knobs: LessonKnobs): RunConfig {
  const c = creditConfig(config);
  return {
    ...c,
    grpo: {
      ...c.grpo,
      gamma: clamp(Number(knobs.gamma), 0, 1, c.grpo.gamma),
      clip_epsilon: clamp(Number(knobs.clip_epsilon), 0, 0.99, c.grpo.clip_epsilon),
      advantage: knobs.advantage === 'mean' || knobs.advantage === 'zscore' ? knobs.advantage : c.grpo.advantage,
    },
    process_rewards:
      knobs.process === 'off'
        ? { ...c.process_rewards, enabled: false }
        : knobs.process === 'score' || knobs.process === 'turn'
          ? { ...c.process_rewards, enabled: true, apply_to: knobs.process }
          : c.process_rewards,
  };
}

/**
 * A smaller group drawn from the stored one: `size` of its samples, chosen by `seed` (the same seed
 * always draws the same ones), kept in their stored order. A size that is not below the group's, or
 * not a number, gives the whole group.
 */
export function resampleGroup<T>(items: readonly T[], size: number | null, seed: number): T[] {
  const n = Math.floor(Number(size));
  if (size === null || !Number.isFinite(n) || n >= items.length) return items.slice();
  const picked = createRng(Math.floor(Number(seed)) || 0)
    .shuffle(items.map((_, i) => i))
    .slice(0, Math.max(1, n));
  return picked.sort((a, b) => a - b).map((i) => items[i]);
}

/** The group recomputed at the reader's settings: the drawn samples, scored and credited as the trainer would at that config. */
export function exploreGroup(
  trajectories: readonly Trajectory[],
  config: RunConfig,
  knobs: LessonKnobs,
  fallbackTask = '',
): LessonGroup {
  return lessonGroup(resampleGroup(trajectories, knobs.group_size, knobs.seed), withKnobs(config, knobs), fallbackTask);
}

/** True when every scored sample of the group scored the same at these settings: the update skips it. */
export function isFlatGroup(trajectories: readonly Trajectory[], config: RunConfig): boolean {
  return scoreGroup(trajectories, config).advantages.zeroStd;
}

/** A run the lesson can show, with the updates that consumed groups, newest first. */
export interface LessonRun {
  id: string;
  name: string;
  steps: number[];
}

/** One update of a run as stored: its config and each group's episodes. */
export interface LessonUpdate {
  run_id: string;
  run_name: string;
  step: number;
  config: RunConfig;
  groups: { id: string; env: string; task: string; trajectories: Trajectory[] }[];
}

/** Every run with at least one trained update, the most recently active first. */
export async function lessonRuns(store: Store): Promise<LessonRun[]> {
  const runs = (await listRuns(store)).sort((a, b) => b.updated - a.updated);
  const out: LessonRun[] = [];
  for (const run of runs) {
    const steps = [...new Set((await listGroups(store, run.id, 0)).filter((g) => g.scored).map((g) => g.step))].sort(
      (a, b) => b - a,
    );
    if (steps.length) out.push({ id: run.id, name: run.name, steps });
  }
  return out;
}

/** The groups one update of a run trained on, with their stored episodes; null when it has none. */
export async function lessonUpdate(store: Store, runId: string, step: number): Promise<LessonUpdate | null> {
  const run = (await listRuns(store)).find((r) => r.id === runId);
  if (!run) return null;
  const groups = (await listGroups(store, runId, step, step)).filter((g) => g.scored);
  const out = await Promise.all(
    groups.map(async (g) => {
      const trajectories = (await getTrajectories(store, g.trajectory_ids)).filter((t) => t !== undefined);
      return { id: g.id, env: g.env, task: trajectories[0]?.task_description ?? g.task_id, trajectories };
    }),
  );
  const withEpisodes = out.filter((g) => g.trajectories.length > 0);
  return withEpisodes.length
    ? { run_id: run.id, run_name: run.name, step, config: creditConfig(run.config), groups: withEpisodes }
    : null;
}
