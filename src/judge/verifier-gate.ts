/**
 * The verifier gates success: where an environment can verify a trajectory (its `evaluate` returns a
 * number, not null), the judges shape the score only WITHIN the environment's verdict. This module is
 * the one place the rule lives; the rollout worker (one trajectory), the group step (one group, after
 * the group judges: group-step.ts) and the Playground all score through it.
 *
 * THE RULE (`judge.verifier_gate: true`, the default). Let e be the environment's score, j the judges'
 * combined score (trimmed mean of the judges' votes; the environment's own `env:NAME` vote is shown
 * beside them but never averaged in):
 *   1. e is null (the environment cannot verify: no checker, a typed task) → j, unchanged.
 *   2. j is null (too few usable judge votes, `judge.min_votes`) → null, as without the gate.
 *   3. e is a success (isSuccess(e)) → clamp(j, SUCCESS_FLOOR, 1): in [0.8, 1].
 *   4. e is a failure → clamp(j, e − MARGIN, e + MARGIN), and never above FAILURE_CEILING (0.75): the
 *      judges may move a failure's score at most MARGIN (0.2) either side of the environment's partial
 *      credit, and never into the successes' band. So a success is never scored below a failure.
 *   5. In a GROUP with at least one success, no failure may stand above the group's mean score (its
 *      advantage would be positive, under both `zscore` and `mean` advantages): failures above it are
 *      lowered to the level c where c equals the group mean once they stand at c (water-filling; the
 *      lower failures keep the judges' order), less 1e-6 so the advantage is < 0 also in floating point.
 *      A per-trajectory band cannot promise this for every group size (one success, one failure a little
 *      above seven others at 0 is above the mean), hence the group step.
 * MARGIN equals the rule judge's default format weight (0.2): the rule judge alone always lands inside
 * the band (its score is 0.8·e + 0.2·format), so rules 3–4 leave a rule-judge-only run unchanged, and
 * rule 5 only takes away a failure's positive advantage in a group that succeeded.
 *
 * With the gate off the judges' combined score is used as it is (a lenient judge can then lift a wrong
 * answer above a right one); the run warns that it is off.
 */
import { isSuccess, type JudgeVote } from '../contracts.ts';
import { combineVotes } from './ensemble.ts';
import { isUnitScore } from './types.ts';

/** The environment's own vote is `env:<environment name>`. No configured judge may use the prefix. */
const ENV_VOTE_PREFIX = 'env:';
/** How far the judges may move a failure's score from the environment's (rule 4). */
const GATE_MARGIN = 0.2;
/** Every success scores at least this (rule 3). */
export const SUCCESS_FLOOR = 1 - GATE_MARGIN;
/** No failure scores above this (rule 4), below SUCCESS_FLOOR. */
export const FAILURE_CEILING = 0.75;
/** Lowered failures stand this far below the group mean (rule 5). */
const CAP_EPSILON = 1e-6;

function isVerifierVote(vote: Pick<JudgeVote, 'judge_id'>): boolean {
  return vote.judge_id.startsWith(ENV_VOTE_PREFIX);
}

/** The environment's verdict as a vote, shown beside the judges' (never averaged with them). */
export function envVote(envName: string, score: number, latencyMs: number): JudgeVote {
  return {
    judge_id: `${ENV_VOTE_PREFIX}${envName}`,
    score,
    rationale: `the environment's verifier (evaluate): ${isSuccess(score) ? 'success' : 'not a success'}; it gates the judges' score`,
    latency_ms: Math.max(0, Math.round(latencyMs)),
  };
}

/** The environment's score from a trajectory's votes, or null when there is none (it cannot verify). */
function verifierScore(votes: readonly JudgeVote[]): number | null {
  const v = votes.find((x) => isVerifierVote(x) && isUnitScore(x.score));
  return v ? (v.score as number) : null;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** Rules 1–4 for one trajectory: the judges' score kept inside the environment's verdict. */
export function gateByVerifier(envScore: number | null, judgeScore: number | null): number | null {
  if (judgeScore === null) return null;
  if (envScore === null || !isUnitScore(envScore)) return judgeScore;
  if (isSuccess(envScore)) return clamp(judgeScore, SUCCESS_FLOOR, 1);
  const hi = Math.min(envScore + GATE_MARGIN, FAILURE_CEILING);
  const lo = Math.min(Math.max(0, envScore - GATE_MARGIN), hi);
  return clamp(judgeScore, lo, hi);
}

/**
 * Rule 5 for one group (scores already through `gateByVerifier`): in a group with a scored success, the
 * verified failures above the group mean are lowered to it. Unscored (null) members stay null and do not
 * count, as in the trainer's `scoreGroup`. Idempotent.
 */
export function capFailures(members: readonly { env: number | null; score: number | null }[]): (number | null)[] {
  const out = members.map((m) => m.score);
  const verified = (m: { env: number | null; score: number | null }) =>
    m.score !== null && m.env !== null && isUnitScore(m.env);
  if (!members.some((m) => verified(m) && isSuccess(m.env as number))) return out;
  const failures = members
    .flatMap((m, i) => (verified(m) && !isSuccess(m.env as number) ? [i] : []))
    .sort((a, b) => (out[b] as number) - (out[a] as number));
  if (failures.length === 0) return out;
  const scored = out.filter((s): s is number => s !== null);
  const failureSet = new Set(failures);
  const others = members.reduce((sum, m, i) => (m.score !== null && !failureSet.has(i) ? sum + m.score : sum), 0);
  let rest = failures.reduce((sum, i) => sum + (out[i] as number), 0);
  // k = how many of the highest failures are lowered; c = the mean once they stand at c. A failure within
  // CAP_EPSILON of the mean counts as above it: exactly at the mean, floating point may give it +1e-16.
  for (let k = 0; k <= failures.length; k++) {
    const c = (others + rest) / (scored.length - k);
    const next = k < failures.length ? (out[failures[k]] as number) : -Infinity;
    if (next <= c - CAP_EPSILON) {
      for (const i of failures.slice(0, k)) out[i] = Math.min(out[i] as number, Math.max(0, c - CAP_EPSILON));
      return out;
    }
    rest -= next;
  }
  return out;
}

export interface VerdictOptions {
  /** Usable judge votes needed for a score (`judge.min_votes`). */
  minVotes: number;
  /** `judge.verifier_gate`. */
  gate: boolean;
}

/** One trajectory's score from its votes: the judges' trimmed mean, gated by the environment's vote. */
export function scoreFromVotes(votes: readonly JudgeVote[], options: VerdictOptions): number | null {
  const blended = combineVotes(votes, options.minVotes).score;
  return options.gate ? gateByVerifier(verifierScore(votes), blended) : blended;
}

/** A whole group's scores from each member's votes: `scoreFromVotes`, then rule 5 when the gate is on. */
export function groupScoresFromVotes(
  group: readonly (readonly JudgeVote[])[],
  options: VerdictOptions,
): (number | null)[] {
  const scores = group.map((votes) => scoreFromVotes(votes, options));
  if (!options.gate) return scores;
  return capFailures(group.map((votes, i) => ({ env: verifierScore(votes), score: scores[i] })));
}

/**
 * Rule 5 on trajectories already scored one by one (the Playground's sampled groups, judged episode by
 * episode): their `judge_score`s capped in the group, by their environment votes. A member that does not
 * change is returned as the same object. Idempotent, and a no-op on trajectories without an env vote
 * (those of runs before the gate), so a group a run already finished shows the scores it trained on.
 */
export function applyGroupRule<T extends { votes: JudgeVote[]; judge_score: number | null }>(group: readonly T[]): T[] {
  const capped = capFailures(group.map((t) => ({ env: verifierScore(t.votes), score: t.judge_score })));
  return group.map((t, i) => (capped[i] === t.judge_score ? t : { ...t, judge_score: capped[i] }));
}

/**
 * Whether the verifier and a judge disagree on this trajectory: some judge's own vote lies outside the
 * band the environment's verdict allows (rules 3–4), i.e. the gate had to move it — a lenient judge
 * passing a wrong answer, a harsh one failing a right one. For a marker in the trajectory views.
 */
export function verifierDisagrees(votes: readonly JudgeVote[]): boolean {
  const env = verifierScore(votes);
  if (env === null) return false;
  return votes.some(
    (v) =>
      !isVerifierVote(v) && v.score !== null && Math.abs((gateByVerifier(env, v.score) as number) - v.score) > 1e-9,
  );
}
