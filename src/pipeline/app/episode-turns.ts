/**
 * An episode as turns, for Trajectories and the Playground: per assistant turn its text (thought and
 * call markup), its tool steps (call + observation), the credit the trainer put on its tokens, and
 * where the episode went wrong, read off what the trajectory holds (`tool_call.error`, `finish_reason`,
 * `success`, the final answer against earlier observations).
 *
 * Credits are never re-derived here: `groupCredits` scores the group with the trainer's `scoreGroup`
 * (grpo-batch.ts: unscored samples leave, the rest ranked and normalised), skips a flat group as the
 * trainer does, and spreads each advantage with `trajectoryCredits`, so a screen shows the numbers the
 * update used.
 */
import type { Trajectory, TrajectoryStep } from '../../contracts.ts';
import { DEFAULT_CONFIG, type RunConfig } from '../../config/schema.ts';
import { creditTurns } from '../../train/advantages.ts';
import { scoreGroup } from '../../train/grpo-batch.ts';
import { applyGroupRule } from '../../judge/verifier-gate.ts';
import { perTurnProcess, trajectoryCredits } from '../../train/turn-credit.ts';

/**
 * Why a trajectory has the credits it has: `trained` (its group's advantage spread over its turns),
 * `flat` (every sample of its group scored the same: the trainer skipped it), `not_trained` (no scored
 * group a trainer consumed: a playground episode, a run stopped before this step), `held_out`
 * (evaluation items are never trained on), `unscored` (no judge could score it: it left its group),
 * `no_tokens` (a policy without a tokenizer: nothing to train on).
 */
export type CreditStatus = 'trained' | 'flat' | 'not_trained' | 'held_out' | 'unscored' | 'no_tokens';

export interface GroupSummary {
  /** Scored samples the advantage was computed over. */
  size: number;
  /** Mean and sample std of the scaled ranked scores (`score × reward_scale`, plus bonuses under `apply_to: score`). */
  mean: number;
  std: number;
  mode: RunConfig['grpo']['advantage'];
  rewardScale: number;
  gamma: number;
  /** True when process rewards are credited per turn (`process_rewards.apply_to: turn`). */
  perTurnProcess: boolean;
}

export interface TrajectoryCredit {
  status: CreditStatus;
  /** One per assistant turn (`creditTurns`): what the update put on that turn's tokens. Null unless trained or flat. */
  credits: number[] | null;
  /** The trajectory's group advantage (before the per-turn spread), or null. */
  advantage: number | null;
  /** The score it was ranked by, scaled (null when unscored or unknown). */
  ranked: number | null;
  group: GroupSummary | null;
  /** Per token, what the update stored that it trained with (the group record's advantages), when stored. */
  stored?: number[];
}

/** The part of a run's config credit depends on, with defaults for fields older run records lack. */
export function creditConfig(config: Partial<RunConfig> = {}): RunConfig {
  return {
    ...DEFAULT_CONFIG,
    ...config,
    grpo: { ...DEFAULT_CONFIG.grpo, ...config.grpo },
    training: { ...DEFAULT_CONFIG.training, ...config.training },
    process_rewards: { ...DEFAULT_CONFIG.process_rewards, ...config.process_rewards },
  };
}

export function uncredited(status: Exclude<CreditStatus, 'trained' | 'flat'>): TrajectoryCredit {
  return { status, credits: null, advantage: null, ranked: null, group: null };
}

/** Why a trajectory on its own has no credit: held out, untokenized, or simply not (yet) in a trained group. */
export function untrainedStatus(t: Pick<Trajectory, 'split' | 'tokens'>): Exclude<CreditStatus, 'trained' | 'flat'> {
  if (t.split !== 'train') return 'held_out';
  if (t.tokens.length === 0) return 'no_tokens';
  return 'not_trained';
}

/**
 * The credit of every trajectory of one group, in order, as the trainer computes it for a GRPO step
 * (grpo-batch.ts): an unscored sample leaves the group; the rest are ranked, normalised, and each
 * one's advantage spread over its turns. A flat group gets 0 on every turn (the trainer skips it).
 */
export function groupCredits(original: readonly Trajectory[], config: RunConfig): TrajectoryCredit[] {
  // The verifier gate's group rule, as the group step applies it in runs (a no-op on a group a run finished).
  const group = config.judge.verifier_gate === false ? original : applyGroupRule(original);
  const { scored, ranked, advantages: adv } = scoreGroup(group, config);
  if (scored.length === 0) return group.map(() => uncredited('unscored'));
  const summary: GroupSummary = {
    size: scored.length,
    mean: adv.mean,
    std: adv.std,
    mode: config.grpo.advantage,
    rewardScale: config.training.reward_scale,
    gamma: config.grpo.gamma,
    perTurnProcess: perTurnProcess(config),
  };
  return group.map((t) => {
    const i = scored.indexOf(t);
    if (i < 0) return uncredited('unscored');
    const base = { ranked: ranked[i] * config.training.reward_scale, group: summary };
    if (adv.zeroStd)
      return { ...base, status: 'flat', advantage: 0, credits: new Array<number>(creditTurns(t)).fill(0) };
    if (t.tokens.length === 0) return { ...base, status: 'no_tokens', advantage: adv.advantages[i], credits: null };
    return {
      ...base,
      status: 'trained',
      advantage: adv.advantages[i],
      credits: trajectoryCredits(t, adv.advantages[i], adv.std, config),
    };
  });
}

/** An assistant turn: its raw text (thought, call markup, prose) and the tool steps it made. */
export interface AssistantTurn {
  text: string;
  steps: TrajectoryStep[];
}

/** The turns of a finished trajectory, from its assistant messages and its steps. */
export function assistantTurns(t: Pick<Trajectory, 'messages' | 'steps'>): AssistantTurn[] {
  const turns: AssistantTurn[] = t.messages
    .filter((m) => m.role === 'assistant')
    .map((m) => ({ text: m.content, steps: [] }));
  for (const step of t.steps) {
    while (turns.length <= step.turn) turns.push({ text: '', steps: [] });
    turns[step.turn].steps.push(step);
  }
  return turns;
}

/**
 * Something to see on a turn. `failed_call`: its first failed tool call (`detail`: the error's first
 * line); `recovered`: that call failed but a later call worked; `intermediate_answer`: the episode
 * failed and its final answer repeats this turn's observation (`detail`): it answered with a value
 * from partway through (or with the result of a wrong call); `wrong_answer`: the final answer (`detail`) is not a success (`isSuccess`: full marks);
 * `no_answer`: it stopped without answering (`detail`: the finish reason).
 */
export interface TurnMark {
  kind: 'failed_call' | 'recovered' | 'intermediate_answer' | 'wrong_answer' | 'no_answer';
  turn: number;
  detail: string;
}

export interface EpisodeTurn extends AssistantTurn {
  /** The credit on this turn's tokens, or null (see `credit.status`). */
  credit: number | null;
  marks: TurnMark[];
}

export interface EpisodeTurns {
  turns: EpisodeTurn[];
  /** The first turn where the episode went wrong (null when it succeeded, or nothing says so). */
  wrongTurn: number | null;
  /** Its judged score and success (`isSuccess`: full marks), which the answer marks go by. */
  score: number | null;
  success: boolean | null;
  credit: TrajectoryCredit;
}

const firstLine = (s: string) => s.trim().split('\n')[0].slice(0, 160);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True when `answer` contains `value` as a whole token (not inside a longer number or word). */
function repeats(answer: string, value: string): boolean {
  const v = value.trim();
  if (!v || v.length > 80 || v.includes('\n')) return false;
  return new RegExp(`(?<![\\w.])${escape(v)}(?![\\w]|\\.\\d)`).test(answer);
}

function turnMarks(t: Trajectory, turns: AssistantTurn[]): TurnMark[] {
  const marks: TurnMark[] = [];
  const steps = turns.flatMap((turn) => turn.steps);
  const failed = steps.findIndex((s) => s.tool_call?.error);
  if (failed >= 0) {
    const step = steps[failed];
    const later = steps.slice(failed + 1).find((s) => s.tool_call && !s.tool_call.error);
    marks.push({
      kind: 'failed_call',
      turn: step.turn,
      detail: `${step.tool_call!.tool_name}: ${firstLine(step.tool_call!.error!)}`,
    });
    if (later) marks.push({ kind: 'recovered', turn: later.turn, detail: later.tool_call!.tool_name });
  }
  const last = turns.length - 1;
  if (t.final_response === null) {
    if (t.finish_reason !== 'answer' && last >= 0)
      marks.push({ kind: 'no_answer', turn: last, detail: t.finish_reason });
  } else if (t.success === false && last >= 0) {
    // The latest successful observation the wrong answer repeats: it answered with a value from partway through.
    const echoed = steps
      .filter(
        (s) =>
          s.turn < last &&
          s.tool_call &&
          !s.tool_call.error &&
          repeats(t.final_response!, s.tool_call.result || s.observation),
      )
      .pop();
    if (echoed)
      marks.push({
        kind: 'intermediate_answer',
        turn: echoed.turn,
        detail: (echoed.tool_call!.result || echoed.observation).trim(),
      });
    marks.push({ kind: 'wrong_answer', turn: last, detail: firstLine(t.final_response) });
  }
  return marks.sort((a, b) => a.turn - b.turn);
}

/** The episode as turns with their credits and marks. `credit` comes from `groupCredits` or `uncredited`. */
export function episodeTurns(t: Trajectory, credit: TrajectoryCredit): EpisodeTurns {
  const turns = assistantTurns(t);
  const marks = turnMarks(t, turns);
  // One credit per turn span; a trajectory whose spans do not line up with its messages shows none rather than misplaced ones.
  const aligned =
    credit.credits && (credit.credits.length === turns.length || (turns.length === 0 && credit.credits.length === 1));
  const recovered = marks.some((m) => m.kind === 'recovered');
  const wrong =
    t.success === true ? [] : marks.filter((m) => m.kind !== 'recovered' && !(m.kind === 'failed_call' && recovered));
  return {
    turns: turns.map((turn, i) => ({
      ...turn,
      credit: aligned ? credit.credits![i] : null,
      marks: marks.filter((m) => m.turn === i),
    })),
    wrongTurn: wrong.length ? wrong[0].turn : null,
    score: t.judge_score,
    success: t.success,
    credit,
  };
}
