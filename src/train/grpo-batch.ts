/**
 * Turns one step's judged groups (plus replay draws) into training samples and rollout metrics.
 * Pure JS (no tfjs): group advantages → per-token advantages (advantages.ts), zero-std groups
 * skipped or replaced from the replay buffer, replayed items given self-imitation advantages against
 * their own environment's online scores, process rewards folded into the ranked score.
 *
 * Order matters for reproducibility: replay is sampled BEFORE this step's online trajectories are
 * offered to the buffer, so a fresh trajectory is never replayed in the step that produced it.
 */
import type { Metrics, Trajectory } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';
import {
  groupAdvantages,
  mean,
  replayAdvantage,
  sampleStd,
  tokenAdvantages,
  type AdvantageOptions,
  type GroupAdvantages,
} from './advantages.ts';
import { trajectoryCredits } from './turn-credit.ts';
import { agentStats } from '../rollout/agent-stats.ts';
import type { TrainSample } from './batch.ts';
import { episodeBonuses } from './process-rewards.ts';
import type { ReplayBuffer } from './replay-buffer.ts';
import type { Rng } from '../rng.ts';

export interface BuiltBatch {
  samples: TrainSample[];
  /** Rollout metrics with TRL names (online trajectories only). */
  metrics: Metrics;
  /** Online trajectories that carry a score (for the replay buffer and the curriculum). */
  scored: Trajectory[];
  /** Sampling temperature shared by every sample (the log-probs are scaled by it). */
  temperature: number;
  /**
   * The per-token advantages each online group was trained with (0 on every token of a flat group the
   * update skipped), by group: what the run stores with the group and exports, so no view re-derives them.
   */
  groupAdvantages: { group_id: string; advantages: Record<string, number[]> }[];
}

/**
 * The score a trajectory is ranked by in its group: the judges' score plus, when process rewards are
 * on and applied to the score (`process_rewards.apply_to: score`), the bonuses of its steps. Folding them
 * in before the group z-score means a group whose episodes all failed, but some with working tool calls,
 * still has spread and still teaches something, instead of being skipped as flat. Applied per turn
 * (turn-credit.ts) they leave the ranking alone and credit the turn that earned them.
 */
function rankedScore(t: Trajectory, cfg: RunConfig, withBonus = true): number {
  const bonus =
    withBonus && cfg.process_rewards.enabled && cfg.process_rewards.apply_to === 'score'
      ? episodeBonuses(t, cfg.process_rewards).reduce((s, b) => s + b, 0)
      : 0;
  return (t.judge_score as number) + bonus;
}

/** The advantage settings of a run config: one mapping for the groups and the replayed items. */
function advantageOptions(cfg: RunConfig): AdvantageOptions {
  return { mode: cfg.grpo.advantage, rewardScale: cfg.training.reward_scale };
}

/**
 * One group as the trainer scores it: unscorable trajectories (null) leave it (they carry no reward and
 * never count as 0), the rest are ranked (`rankedScore`) and given their group advantages. Every screen
 * that shows an advantage or a turn's credit starts from this (pipeline/app/episode-turns.ts).
 */
export function scoreGroup(
  group: readonly Trajectory[],
  cfg: RunConfig,
): { scored: Trajectory[]; ranked: number[]; advantages: GroupAdvantages } {
  const scored = group.filter((t) => t.judge_score !== null);
  // The verifier gate (judge/verifier-gate.ts) put every failure below the group's mean when a sample
  // succeeded; process bonuses on a failure could lift it back above, so there they go to successes only.
  const gated = cfg.judge.verifier_gate && scored.some((t) => t.success === true);
  const ranked = scored.map((t) => rankedScore(t, cfg, !(gated && t.success === false)));
  const advantages = scored.length
    ? groupAdvantages(ranked, advantageOptions(cfg))
    : { mean: 0, std: 0, zeroStd: true, advantages: [] };
  return { scored, ranked, advantages };
}

function toSample(t: Trajectory, advantage: number, std: number, cfg: RunConfig): TrainSample {
  return {
    tokens: t.tokens,
    mask: t.assistant_mask,
    oldLogp: t.logprobs,
    advantages: tokenAdvantages(t, trajectoryCredits(t, advantage, std, cfg)),
  };
}

function rolloutMetrics(scored: Trajectory[], groupStds: number[], zeroStd: number, nGroups: number): Metrics {
  const m: Metrics = {
    reward: mean(scored.map((t) => t.judge_score as number)),
    // Share of this step's episodes that did the task (the environment's verdict), beside the blended reward.
    'rollout/success': mean(scored.map((t) => (t.success === true ? 1 : 0))),
    reward_std: mean(groupStds),
    frac_reward_zero_std: nGroups === 0 ? 0 : zeroStd / nGroups,
    'completions/mean_length': mean(scored.map((t) => t.assistant_mask.reduce((a, b) => a + b, 0))),
  };
  // Per environment too: a mixed batch's mean hides one environment learning while another forgets.
  for (const env of new Set(scored.map((t) => t.env))) {
    m[`rollout/success/${env}`] = mean(scored.filter((t) => t.env === env).map((t) => (t.success === true ? 1 : 0)));
  }
  const calls = scored.flatMap((t) => t.steps.filter((s) => s.tool_call).map((s) => s.tool_call!));
  const agent = agentStats(scored);
  m['tools/call_frequency'] = agent.calls_per_episode;
  m['tools/failure_frequency'] = calls.length === 0 ? 0 : calls.filter((c) => c.error).length / calls.length;
  // What an agent does after a failed call: the share of such episodes that still succeeded.
  m['tools/recovery_rate'] = agent.recovery_rate;
  m['tools/multi_call_success_share'] = agent.multi_call_success_share;
  const byJudge = new Map<string, number[]>();
  for (const v of scored.flatMap((t) => t.votes)) {
    if (v.score !== null) byJudge.set(v.judge_id, [...(byJudge.get(v.judge_id) ?? []), v.score]);
  }
  for (const [judge, scores] of byJudge) m[`rewards/${judge}/mean`] = mean(scores);
  return m;
}

/**
 * `grpo.loss_normalization: sequence`: the update divides its token sum by the update's token count N
 * (update.ts), so scaling an episode's advantages by N / (B · n_b), n_b its own assistant tokens, turns
 * that into the mean over episodes of each episode's token mean. The clipped surrogate is linear in a
 * positive scale of A, so this is exact. The stored and shown advantages stay unscaled: the scale is the
 * loss's weighting, not credit.
 */
function weighEpisodesEqually(samples: TrainSample[]): void {
  const tokens = samples.map((s) => Array.from(s.mask).reduce((n, m) => n + (m ? 1 : 0), 0));
  const total = tokens.reduce((a, b) => a + b, 0);
  samples.forEach((s, b) => {
    if (!s.advantages || tokens[b] === 0) return;
    const scale = total / (samples.length * tokens[b]);
    s.advantages = Array.from(s.advantages, (a) => a * scale);
  });
}

export function buildGrpoBatch(p: {
  groups: Trajectory[][];
  replay: ReplayBuffer;
  replayCount: number;
  rng: Rng;
  config: RunConfig;
}): BuiltBatch {
  const cfg = p.config;
  const opts = advantageOptions(cfg);
  const samples: TrainSample[] = [];
  const temps = new Set<number>();
  const add = (t: Trajectory, advantage: number, std: number): TrainSample | null => {
    if (t.tokens.length === 0) return null; // collected without a tokenizer: nothing to train on
    temps.add(t.sampling.temperature);
    const sample = toSample(t, advantage, std, cfg);
    samples.push(sample);
    return sample;
  };
  const groupAdvantages: BuiltBatch['groupAdvantages'] = [];
  const scored: Trajectory[] = [];
  const groupStds: number[] = [];
  let zeroStd = 0;
  let nGroups = 0;
  let replaceCount = 0;
  for (const group of p.groups) {
    const { scored: g, ranked, advantages: adv } = scoreGroup(group, cfg);
    if (g.length === 0) continue;
    nGroups++;
    scored.push(...g);
    groupStds.push(sampleStd(ranked));
    if (adv.zeroStd) {
      zeroStd++;
      if (cfg.grpo.zero_std_groups === 'replace') replaceCount += g.length;
      groupAdvantages.push({
        group_id: g[0].group_id,
        advantages: Object.fromEntries(g.map((t) => [t.id, t.tokens.map(() => 0)])),
      });
      continue;
    }
    const used: Record<string, number[]> = {};
    g.forEach((t, i) => {
      const sample = add(t, adv.advantages[i], adv.std);
      if (sample?.advantages) used[t.id] = Array.from(sample.advantages);
    });
    groupAdvantages.push({ group_id: g[0].group_id, advantages: used });
  }

  // A replayed trajectory is measured against this step's online trajectories of its own environment
  // (scores of different environments are not on one scale); with none this step, it is not used.
  const online = new Map<string, { mean: number; std: number }>();
  for (const env of new Set(scored.map((t) => t.env))) {
    const scaled = scored.filter((t) => t.env === env).map((t) => rankedScore(t, cfg) * opts.rewardScale);
    online.set(env, { mean: mean(scaled), std: sampleStd(scaled) });
  }
  let replayUsed = 0;
  for (const t of p.replay.sample(p.replayCount + replaceCount, p.rng)) {
    const reference = online.get(t.env);
    const a = reference ? replayAdvantage(rankedScore(t, cfg), reference, opts, cfg.training.group_size) : 0;
    if (a > 0) {
      add(t, a, reference!.std);
      replayUsed++;
    }
  }

  if (temps.size > 1) {
    throw new Error(
      `grpo: trajectories sampled at different temperatures (${[...temps].join(', ')}) in one step; keep sampling.temperature fixed during a run`,
    );
  }
  if (cfg.grpo.loss_normalization === 'sequence') weighEpisodesEqually(samples);
  const metrics = rolloutMetrics(scored, groupStds, zeroStd, nGroups);
  metrics['replay/samples'] = p.replayCount + replaceCount;
  metrics['replay/used'] = replayUsed;
  return { samples, metrics, scored, temperature: [...temps][0] ?? cfg.sampling.temperature, groupAdvantages };
}
