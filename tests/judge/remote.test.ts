import { beforeEach, describe, expect, it } from 'vitest';
import { RemoteJudge, type RemoteJudgeOptions } from '../../src/judge/remote.ts';
import { TrajectoryJudge } from '../../src/judge/ensemble.ts';
import { RuleJudge } from '../../src/judge/rule.ts';
import { MemoryJudgeCache } from '../../src/judge/cache.ts';
import { useChatServer } from './chat-server.ts';
import { makeTask, makeTrajectory } from './fixtures.ts';

const KEY = 'sk-test-SECRET-9f8e7d6c5b4a';
const server = useChatServer();
let sleeps: number[];

beforeEach(() => {
  sleeps = [];
});

function judge(overrides: Partial<RemoteJudgeOptions> = {}): RemoteJudge {
  return new RemoteJudge({
    id: 'remote',
    baseUrl: server.baseUrl,
    model: 'judge-model',
    apiKey: KEY,
    timeoutMs: 2_000,
    maxRetries: 3,
    cache: false,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    ...overrides,
  });
}

const task = makeTask();
const trajectory = makeTrajectory();

describe('RemoteJudge over a real chat-completions server', () => {
  it('refuses a reply of megabytes without holding it, naming the limit; no retry', async () => {
    server.queue.push({ kind: 'raw', body: `{"choices": [{"message": {"content": "${'x'.repeat(20 * 2 ** 20)}"}}]}` });
    const r = await judge().score(trajectory, task);
    expect(r.score).toBeNull();
    expect(r.rationale).toMatch(/the reply is larger than 8 MiB/);
    expect(server.received).toHaveLength(1);
  });

  it('scores a well-formed reply, with dimensions, cost and the rubric prompt', async () => {
    const j = judge({ pricing: { prompt_usd_per_1k: 0.5, completion_usd_per_1k: 2 }, temperature: 0.3 });
    const r = await j.score(trajectory, task);
    expect(r.score).toBe(0.85);
    expect(r.dimensions).toEqual({
      task_completion: 9,
      reasoning_quality: 8,
      tool_use: 9,
      error_handling: 7,
      efficiency: 8,
    });
    expect(r.cost).toEqual({ prompt_tokens: 120, completion_tokens: 30, usd: (120 * 0.5 + 30 * 2) / 1000 });
    const req = server.received[0];
    expect(req.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body.model).toBe('judge-model');
    expect(req.body.temperature).toBe(0.3);
    const prompt = req.body.messages[1].content;
    expect(prompt).toContain('Task: What is 6 * 7?');
    expect(prompt).toContain('Tool call: calculator({"expression":"6*7"})');
    expect(prompt).toContain('Final answer: The answer is 42.');
    expect(prompt).toMatch(
      /Task completion[\s\S]*Reasoning quality[\s\S]*Tool use[\s\S]*Error handling[\s\S]*Efficiency/,
    );
    expect(j.usage()).toMatchObject({ requests: 1, retries: 0, prompt_tokens: 120, completion_tokens: 30 });
  });

  it('retries a response slower than the timeout, then scores', async () => {
    server.queue.push({ kind: 'slow', ms: 1_500, content: '{"overall": 0.1}' });
    const r = await judge({ timeoutMs: 150 }).score(trajectory, task);
    expect(r.score).toBe(0.85);
    expect(r.rationale).toContain('timed out after 150 ms');
    expect(server.received).toHaveLength(2);
  });

  it('waits for Retry-After on 429', async () => {
    server.queue.push({ kind: 'status', status: 429, retryAfter: '2' });
    const r = await judge().score(trajectory, task);
    expect(r.score).toBe(0.85);
    expect(sleeps).toEqual([2_000]);
  });

  it('backs off exponentially on 500s and gives a null with the reason when retries run out', async () => {
    for (let i = 0; i < 4; i++) server.queue.push({ kind: 'status', status: 500, body: 'internal error' });
    const j = judge({ backoff: { baseMs: 100, maxMs: 10_000 } });
    const r = await j.score(trajectory, task);
    expect(r.score).toBeNull();
    expect(r.rationale).toContain('after 4 attempts');
    expect(r.rationale).toContain('HTTP 500: internal error');
    // base·2^attempt times the jitter factor 0.5 + 0.5·0.5 = 0.75
    expect(sleeps).toEqual([75, 150, 300]);
    expect(j.usage().retries).toBe(3);
  });

  it('recovers from a dropped connection', async () => {
    server.queue.push({ kind: 'hang_up' });
    const r = await judge().score(trajectory, task);
    expect(r.score).toBe(0.85);
    expect(r.rationale).toContain('network error');
  });

  it.each([
    ['malformed JSON body', { kind: 'raw', body: '{"choices": [' } as const, 'response is not JSON'],
    ['score out of range', { kind: 'ok', content: '{"overall": 7.5}' } as const, 'outside [0, 1]'],
    ['empty choice list', { kind: 'empty_choices' } as const, 'no choices'],
    ['unparseable reply', { kind: 'ok', content: 'I think it was fine.' } as const, 'could not find a score'],
    ['client error (not retried)', { kind: 'status', status: 400, body: 'bad request' } as const, 'HTTP 400'],
  ])('gives null with a reason for %s', async (_name, fault, reason) => {
    server.queue.push(fault);
    const r = await judge().score(trajectory, task);
    expect(r.score).toBeNull();
    expect(r.rationale).toContain(reason);
    expect(server.received).toHaveLength(1);
  });

  it('serves a second judging of the same trajectory from the cache', async () => {
    const persisted: string[] = [];
    const cache = new MemoryJudgeCache({ persist: (key) => void persisted.push(key) });
    const j = judge({ cache });
    const first = await j.score(trajectory, task);
    const second = await j.score(trajectory, task);
    expect(second.score).toBe(first.score);
    expect(second.cost).toEqual({ prompt_tokens: 0, completion_tokens: 0, usd: 0 });
    expect(server.received).toHaveLength(1);
    expect(j.usage().cache_hits).toBe(1);
    expect(persisted).toHaveLength(1);
    expect(persisted[0]).toMatch(/^[0-9a-f]{64}$/);
    // Another judge with a different id does not share the entry.
    await judge({ cache, id: 'other' }).score(trajectory, task);
    expect(server.received).toHaveLength(2);
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const countingFetch: typeof fetch = async (input, init) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    };
    for (let i = 0; i < 6; i++) server.queue.push({ kind: 'slow', ms: 60, content: '{"overall": 0.5}' });
    const j = judge({ maxConcurrency: 2, fetch: countingFetch });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        j.score(makeTrajectory({ id: `t${i}`, final_response: `answer ${i}` }), task),
      ),
    );
    expect(results.every((r) => r.score === 0.5)).toBe(true);
    expect(peak).toBe(2);
  });

  it('never lets the API key reach votes, trajectories, errors or serialised judges', async () => {
    // A misbehaving server echoes the key back in its error bodies.
    server.queue.push(
      { kind: 'status', status: 503, body: `overloaded for ${KEY}` },
      { kind: 'status', status: 503, body: `again ${KEY}` },
      { kind: 'status', status: 401, body: `invalid key ${KEY}` },
    );
    const a = judge({ id: 'a' });
    const ensemble = new TrajectoryJudge({ judges: [a, new RuleJudge()] });
    const judged = await ensemble.scoreTrajectory(trajectory, task);
    const second = await ensemble.scoreTrajectory(trajectory, task);
    const errors: string[] = [];
    try {
      new RemoteJudge({ id: 'x', baseUrl: 'ftp://nope', model: 'm', apiKey: KEY });
    } catch (err) {
      errors.push(String(err), JSON.stringify(err));
    }
    expect(errors).toHaveLength(2);
    const exported = JSON.stringify({ judged, second, judge: a, usage: a.usage(), errors });
    const vote = judged.votes.find((v) => v.judge_id === 'a');
    expect(vote?.score).toBeNull();
    expect(vote?.rationale).toContain('HTTP 401: invalid key [redacted]');
    expect(second.votes.find((v) => v.judge_id === 'a')?.score).toBe(0.85);
    expect(server.received.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(exported).not.toContain(KEY);
    expect(exported).not.toContain('SECRET');
  });
});

describe('the ensemble under injected faults', () => {
  it('keeps going: faulty judges become null votes, the rest are combined', async () => {
    // The ensemble asks its judges at once: each gets its own model, so its fault does not depend on arrival order.
    server.byModel.set('malformed', { kind: 'raw', body: 'not json' });
    server.byModel.set('empty', { kind: 'empty_choices' });
    server.byModel.set('range', { kind: 'ok', content: '{"overall": 3}' });
    const judges = [
      judge({ id: 'malformed', model: 'malformed' }),
      judge({ id: 'empty', model: 'empty' }),
      judge({ id: 'range', model: 'range' }),
      judge({ id: 'good', model: 'good' }),
      {
        id: 'thrower',
        score: async () => {
          throw new Error('exploded');
        },
      },
      new RuleJudge({ evaluator: () => 1 }),
    ];
    const ensemble = new TrajectoryJudge({ judges, minVotes: 2 });
    const j = await ensemble.judge(trajectory, task);
    const byId = Object.fromEntries(j.votes.map((v) => [v.judge_id, v]));
    expect(byId.malformed.score).toBeNull();
    expect(byId.empty.score).toBeNull();
    expect(byId.range.score).toBeNull();
    expect(byId.thrower.score).toBeNull();
    expect(byId.thrower.rationale).toContain('exploded');
    expect(byId.good.score).toBe(0.85);
    expect(byId.rule.score).toBe(1);
    expect(j.score).toBeCloseTo((0.85 + 1) / 2, 12);
    expect(j.votes).toHaveLength(6);
  });
});
