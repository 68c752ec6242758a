/**
 * How a policy acts as an agent, from its episodes: tool calls per episode, the share of successes that
 * took two or more calls, and what it does after a failed call (retries, recovers). The model card, the
 * learning benchmark, the credit ablation and the trainer's rollout metrics all count these here, so a
 * "recovery rate" means one thing everywhere.
 */
import type { Trajectory } from '../contracts.ts';

export interface AgentStats {
  episodes: number;
  /** Mean tool calls per episode (every step with a call, failed ones included). */
  calls_per_episode: number;
  /** Share of the successful episodes that made two or more tool calls; 0 when none succeeded. */
  multi_call_success_share: number;
  /** Episodes in which some tool call failed (an error, a timeout, an unreadable call). */
  failed_call_episodes: number;
  /** Of those, the share that made another call after the first failure. */
  retry_rate: number;
  /** Of those, the share that still succeeded: the recovery rate after a failed call. */
  recovery_rate: number;
}

export type ScoredEpisode = Pick<Trajectory, 'steps'> & { success: boolean | null };

const calls = (t: Pick<Trajectory, 'steps'>) => t.steps.filter((s) => s.tool_call !== null);
const share = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);

export function agentStats(episodes: readonly ScoredEpisode[]): AgentStats {
  const successes = episodes.filter((e) => e.success === true);
  const failedOnce = episodes.filter((e) => calls(e).some((s) => s.tool_call!.error !== null));
  const retried = failedOnce.filter((e) => {
    const list = calls(e);
    return list.findIndex((s) => s.tool_call!.error !== null) < list.length - 1;
  });
  return {
    episodes: episodes.length,
    calls_per_episode: share(
      episodes.reduce((n, e) => n + calls(e).length, 0),
      episodes.length,
    ),
    multi_call_success_share: share(successes.filter((e) => calls(e).length >= 2).length, successes.length),
    failed_call_episodes: failedOnce.length,
    retry_rate: share(retried.length, failedOnce.length),
    recovery_rate: share(failedOnce.filter((e) => e.success === true).length, failedOnce.length),
  };
}
