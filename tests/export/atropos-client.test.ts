import { afterEach, describe, expect, it, vi } from 'vitest';
import { AtroposClient, type ClientEvent } from '../../src/export/atropos-client.ts';
import { nodeGetWithBody } from '../../src/export/atropos-node.ts';
import type { ScoredGroup } from '../../src/contracts.ts';
import { startFakeAtropos, type FakeAtropos } from './atropos-server.ts';

const servers: FakeAtropos[] = [];
async function server(options?: Parameters<typeof startFakeAtropos>[0]) {
  const s = await startFakeAtropos(options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close().catch(() => {});
});

const fast = { backoff: { initialMs: 5, maxMs: 40 }, pollMs: 5 };
function group(tag: number, size = 2): ScoredGroup {
  return {
    tokens: Array.from({ length: size }, () => [tag, 1, 2]),
    masks: Array.from({ length: size }, () => [-100, 1, 2]),
    scores: Array.from({ length: size }, (_, i) => i),
    advantages: null,
    ref_logprobs: null,
    messages: null,
    inference_logprobs: null,
    generation_params: null,
    overrides: null,
    group_overrides: null,
    images: null,
    env_id: null,
  };
}
const tagOf = (g: Record<string, unknown>) => (g.tokens as number[][])[0][0];

describe('Atropos trajectory-API client', () => {
  it('keeps retrying register-env while the server says "wait for trainer to start"', async () => {
    const s = await server();
    const events: ClientEvent[] = [];
    const client = new AtroposClient({
      baseUrl: s.url,
      ...fast,
      onEvent: (e) => events.push(e),
      getWithBody: nodeGetWithBody,
    });
    const registering = client.registerEnv({ desired_name: 'arith_tool', max_token_length: 512, group_size: 2 });
    await vi.waitFor(
      () => expect(events.filter((e) => e.kind === 'waiting-for-trainer').length).toBeGreaterThanOrEqual(2),
      { timeout: 5000 },
    );
    expect(s.envs).toEqual([]);
    s.takeBatch(); // the trainer starts polling /batch
    const env = await registering;
    expect(env.env_id).toBe(0);
    expect(s.envs).toEqual([{ desired_name: 'arith_tool', group_size: 2 }]);
  });

  it('gives up registering after the timeout with a message saying to start the trainer', async () => {
    const s = await server();
    const client = new AtroposClient({ baseUrl: s.url, ...fast, registerTimeoutMs: 30 });
    await expect(client.registerEnv({ desired_name: 'e', max_token_length: 1, group_size: 1 })).rejects.toThrow(
      /waiting for its trainer: start the trainer/,
    );
  });

  it('posts groups with the exact Atropos fields and our env id, single and as a list', async () => {
    const s = await server({ started: true });
    const client = new AtroposClient({ baseUrl: s.url, ...fast, getWithBody: nodeGetWithBody });
    await client.registerEnv({ desired_name: 'e', max_token_length: 64, group_size: 2 });
    await client.submit(group(1));
    await client.flush();
    for (const tag of [2, 3, 4]) await client.submit(group(tag));
    await client.flush();
    expect(s.queue.map(tagOf)).toEqual([1, 2, 3, 4]);
    expect(Object.keys(s.queue[0]).sort()).toEqual([
      'advantages',
      'env_id',
      'generation_params',
      'group_overrides',
      'images',
      'inference_logprobs',
      'masks',
      'messages',
      'overrides',
      'ref_logprobs',
      'scores',
      'tokens',
    ]);
    expect(s.queue.every((g) => g.env_id === 0)).toBe(true);
    expect(s.requests).toContain('POST /scored_data');
    expect(s.requests).toContain('POST /scored_data_list');
    expect(client.delivered).toBe(4);
  });

  it('waits while queue_size · group_size ≥ max_batches_offpolicy · batch_size, and goes on when the trainer drains', async () => {
    const s = await server({ started: true, batch_size: 4 });
    const events: ClientEvent[] = [];
    const client = new AtroposClient({
      baseUrl: s.url,
      ...fast,
      getWithBody: nodeGetWithBody,
      onEvent: (e) => events.push(e),
    });
    await client.registerEnv({ desired_name: 'e', max_token_length: 64, group_size: 2 });
    for (const tag of [1, 2, 3, 4]) await client.submit(group(tag));
    await client.flush(); // 8 sequences queued = 2 batches of 4
    let passed = false;
    const waiting = client.waitForCapacity({ batch_size: 4, group_size: 2, max_batches_offpolicy: 2 }).then((st) => {
      passed = true;
      return st;
    });
    await vi.waitFor(
      () => expect(events.filter((e) => e.kind === 'backpressure' && e.limit === 8).length).toBeGreaterThanOrEqual(2),
      { timeout: 5000 },
    );
    expect(passed).toBe(false);
    expect(s.takeBatch()?.map(tagOf)).toEqual([1, 2]);
    const status = await waiting;
    expect(status).toMatchObject({ queue_size: 2, current_step: 1, source: 'status-env' });
    expect(s.requests).toContain('GET /status-env');
  });

  it('without a GET body (browser fetch) it falls back to /status', async () => {
    const s = await server({ started: true });
    const client = new AtroposClient({ baseUrl: s.url, ...fast });
    await client.registerEnv({ desired_name: 'e', max_token_length: 64, group_size: 2 });
    await client.submit(group(1));
    await client.flush();
    expect(await client.status()).toEqual({ current_step: 0, queue_size: 1, source: 'status' });
  });

  it('loses no group when the server goes away mid-run and comes back; a full outbox holds the producer back', async () => {
    const s1 = await server({ started: true });
    const events: ClientEvent[] = [];
    const client = new AtroposClient({
      baseUrl: s1.url,
      ...fast,
      outboxLimit: 3,
      getWithBody: nodeGetWithBody,
      onEvent: (e) => events.push(e),
    });
    await client.registerEnv({ desired_name: 'e', max_token_length: 64, group_size: 2 });
    await client.submit(group(1));
    await client.flush();
    const delivered = [...s1.queue];
    await s1.close();

    for (const tag of [2, 3, 4]) await client.submit(group(tag));
    let fifthQueued = false;
    const fifth = client.submit(group(5)).then(() => {
      fifthQueued = true;
    });
    await vi.waitFor(
      () =>
        expect(
          events.filter((e) => e.kind === 'unreachable' && e.during === 'scored_data').length,
        ).toBeGreaterThanOrEqual(2),
      { timeout: 5000 },
    );
    expect(fifthQueued).toBe(false); // outbox full while the server is down
    expect(client.pending).toBe(3);

    const s2 = await server({ started: true, port: s1.port }); // back, with an empty queue and no envs
    await fifth;
    await client.flush();
    expect([...delivered, ...s2.queue].map(tagOf)).toEqual([1, 2, 3, 4, 5]);
    // The restarted server forgot our env: the status poll re-registers instead of failing.
    const st = await client.waitForCapacity({ batch_size: 4, group_size: 2, max_batches_offpolicy: 8 });
    expect(st.source).toBe('status-env');
    expect(events.some((e) => e.kind === 'reregistered')).toBe(true);
    expect(s2.envs.length).toBe(1);
  });

  it('keeps groups the server refuses aside instead of retrying them forever', async () => {
    const s = await server({ started: true });
    const events: ClientEvent[] = [];
    const client = new AtroposClient({ baseUrl: s.url, ...fast, onEvent: (e) => events.push(e) });
    await client.submit({ ...group(1), tokens: 'nope' } as unknown as ScoredGroup);
    await client.flush();
    expect(client.rejected.length).toBe(1);
    expect(events.find((e) => e.kind === 'rejected')).toMatchObject({ status: 422 });
  });
});
