import { expect, it } from 'vitest';
import type { TrajectoryStep } from '../../src/contracts.ts';
import { agentStats } from '../../src/rollout/agent-stats.ts';

const call = (error: string | null): TrajectoryStep => ({
  step_id: 0,
  turn: 0,
  thought: null,
  observation: '',
  timestamp: 0,
  tool_call: { tool_name: 'sh', parameters: {}, result: '', error, latency_ms: 1 },
});

it('counts calls per episode, multi-call successes, retries and recoveries after a failed call', () => {
  const s = agentStats([
    { steps: [call(null), call(null)], success: true }, // two calls, success
    { steps: [call('No such file'), call(null), call(null)], success: true }, // failed, retried, recovered
    { steps: [call('No such file')], success: false }, // failed, gave up
    { steps: [], success: false }, // answered at once
  ]);
  expect(s.episodes).toBe(4);
  expect(s.calls_per_episode).toBe(1.5);
  expect(s.multi_call_success_share).toBe(1);
  expect(s.failed_call_episodes).toBe(2);
  expect(s.retry_rate).toBe(0.5);
  expect(s.recovery_rate).toBe(0.5);
});

it('reports zeros, not NaN, when nothing failed or succeeded', () => {
  const s = agentStats([{ steps: [call(null)], success: false }]);
  expect(s).toMatchObject({ multi_call_success_share: 0, failed_call_episodes: 0, retry_rate: 0, recovery_rate: 0 });
});
