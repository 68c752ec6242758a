/**
 * The Atropos client against servers that misbehave: a 500 from /status-env backs off instead of
 * spinning; a server that hangs, a queue that stays full and a queue_size that is not a count end with
 * an error that says so, within a stated budget; 429/500 on /scored_data are retried with Retry-After
 * honoured, within a budget; a server that drops the connection after (or before) queuing a post never
 * ends up with a group twice; the feed reports exactly what became of each group; and a stop (the CLI's
 * first Ctrl-C) ends every wait at once, triggered here when the server sees the request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ScoredGroup } from '../../src/contracts.ts';
import { AtroposClient, AtroposInterrupted, type ClientEvent } from '../../src/export/atropos-client.ts';
import { nodeGetWithBody } from '../../src/export/atropos-node.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import {
  deliveredAll,
  describeDelivery,
  openAtroposFeed,
  type AtroposFeedOptions,
} from '../../src/pipeline/operations/atropos-feed.ts';

type Handler = (body: unknown, res: ServerResponse, req: IncomingMessage) => void;

interface Stub {
  url: string;
  /** The handlers in use, by path (the defaults where none is set); may be changed after the start. */
  routes: Record<string, Handler>;
  calls: Record<string, number>;
  queue: Record<string, unknown>[];
  latest: Record<string, unknown>;
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const registered = {
  status: 'success',
  env_id: 0,
  wandb_name: 'e_0',
  checkpoint_dir: '',
  starting_step: 0,
  checkpoint_interval: 10,
  num_steps: 100,
};

/** A server whose routes are the given handlers; a registering, queue-keeping Atropos by default. */
async function stub(routes: Record<string, Handler> = {}): Promise<Stub> {
  const state = {
    routes: { ...routes },
    calls: {} as Record<string, number>,
    queue: [] as Record<string, unknown>[],
    latest: { tokens: [] } as Record<string, unknown>,
  };
  const defaults: Record<string, Handler> = {
    '/register-env': (_b, res) => json(res, 200, registered),
    '/status-env': (_b, res) => json(res, 200, { current_step: 0, queue_size: 0 }),
    '/scored_data': (b, res) => {
      state.queue.push(b as Record<string, unknown>);
      state.latest = b as Record<string, unknown>;
      json(res, 200, { status: 'received' });
    },
    '/latest_example': (_b, res) => json(res, 200, state.latest),
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    state.calls[path] = (state.calls[path] ?? 0) + 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const handler = state.routes[path] ?? defaults[path];
      if (!handler) return json(res, 404, { detail: 'Not Found' });
      handler(text ? JSON.parse(text) : null, res, req);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return Object.assign(state, { url, close: async () => {} });
}

function group(tag: number): ScoredGroup {
  return {
    tokens: [
      [tag, 1],
      [tag, 2],
    ],
    masks: [
      [-100, 1],
      [-100, 2],
    ],
    scores: [0, 1],
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
const fast = { backoff: { initialMs: 20, maxMs: 100 }, pollMs: 20 };
const limits = { batch_size: 4, group_size: 2, max_batches_offpolicy: 1 };

describe('Atropos client limits', () => {
  it('backs off on a 500 from /status-env (re-registering once), then stops at the wait budget, saying so', async () => {
    const s = await stub({ '/status-env': (_b, res) => json(res, 500, 'Internal Server Error') });
    const client = new AtroposClient({ baseUrl: s.url, ...fast, capacityWaitMs: 600, getWithBody: nodeGetWithBody });
    await client.registerEnv({ desired_name: 'e', max_token_length: 8, group_size: 2 });
    await expect(client.waitForCapacity(limits)).rejects.toThrow(
      /^Atropos at http:\/\/127\.0\.0\.1:\d+ did not answer \/status-env for 0\.\d s \(the wait budget is 0\.6 s; last: \/status-env answered HTTP 500: "Internal Server Error"\)\. Is the server still up\?$/,
    );
    expect(s.calls['/status-env']).toBeLessThan(12);
    expect(s.calls['/register-env']).toBe(2); // the first registration and one re-registration
  });

  it('ends a server that never answers with an error naming the URL and the budget', async () => {
    const s = await stub({ '/register-env': () => {}, '/status-env': () => {} });
    const client = new AtroposClient({ baseUrl: s.url, ...fast, requestTimeoutMs: 150, registerTimeoutMs: 500 });
    await expect(client.registerEnv({ desired_name: 'e', max_token_length: 8, group_size: 2 })).rejects.toThrow(
      /did not register the environment within 0\.5 s \(last: POST http:\/\/127\.0\.0\.1:\d+\/register-env: no answer within 0\.15 s\); start it with `run-api`, or fix the URL\./,
    );

    const t = await stub({ '/status-env': () => {} });
    const polling = new AtroposClient({
      baseUrl: t.url,
      ...fast,
      requestTimeoutMs: 150,
      capacityWaitMs: 500,
      getWithBody: nodeGetWithBody,
    });
    await polling.registerEnv({ desired_name: 'e', max_token_length: 8, group_size: 2 });
    await expect(polling.waitForCapacity(limits)).rejects.toThrow(
      /did not answer \/status-env .* \(the wait budget is 0\.5 s; last: GET http:\/\/127\.0\.0\.1:\d+\/status-env: no complete answer within 0\.15 s\)/,
    );
  });

  it('ends a wait on a queue that stays full at the budget, naming the numbers', async () => {
    const s = await stub({ '/status-env': (_b, res) => json(res, 200, { current_step: 3, queue_size: 100 }) });
    const events: ClientEvent[] = [];
    const client = new AtroposClient({
      baseUrl: s.url,
      ...fast,
      capacityWaitMs: 300,
      getWithBody: nodeGetWithBody,
      onEvent: (e) => events.push(e),
    });
    await client.registerEnv({ desired_name: 'e', max_token_length: 8, group_size: 2 });
    await expect(client.waitForCapacity(limits)).rejects.toThrow(
      /: the trainer's queue stayed full for 0\.\d+ s \(the wait budget is 0\.3 s\): queue_size 100 × group_size 2 ≥ 4 \(max_batches_offpolicy × batch_size\)\. Is the trainer still taking batches from \/batch\?$/,
    );
    expect(events.some((e) => e.kind === 'backpressure')).toBe(true);
  });

  it('refuses a queue_size that is not a whole number ≥ 0 (it would switch backpressure off)', async () => {
    for (const queue_size of ['lots', -1, 1.5, null]) {
      const s = await stub({ '/status-env': (_b, res) => json(res, 200, { current_step: 0, queue_size }) });
      const client = new AtroposClient({
        baseUrl: s.url,
        ...fast,
        capacityWaitMs: 60_000,
        getWithBody: nodeGetWithBody,
      });
      await client.registerEnv({ desired_name: 'e', max_token_length: 8, group_size: 2 });
      await expect(client.waitForCapacity(limits)).rejects.toThrow(
        new RegExp(
          `answered /status-env with queue_size ${JSON.stringify(queue_size).replace(/[.[\]]/g, '\\$&')}; expected a whole number ≥ 0\\. Is this an Atropos trajectory API server\\?$`,
        ),
      );
      expect(s.calls['/status-env']).toBe(1);
    }
  });
});

describe('delivering scored groups', () => {
  it('waits as long as Retry-After says on a 429, and delivers once', async () => {
    let busy = true;
    const s = await stub({
      '/scored_data': (b, res) => {
        if (busy) return void ((busy = false), json(res, 429, { detail: 'slow down' }, { 'retry-after': '1' }));
        s.queue.push(b as Record<string, unknown>);
        json(res, 200, { status: 'received' });
      },
    });
    // The client says how long it waits before it waits (the `fast` backoff would be milliseconds).
    const waits: ClientEvent[] = [];
    const client = new AtroposClient({
      baseUrl: s.url,
      ...fast,
      onEvent: (e) => {
        if (e.kind === 'unreachable') waits.push(e);
      },
    });
    await client.submit(group(1));
    await client.flush();
    expect(s.queue.map(tagOf)).toEqual([1]);
    expect(s.calls['/scored_data']).toBe(2);
    expect(waits).toEqual([expect.objectContaining({ during: 'scored_data', delay_ms: 1000 })]);
  });

  it('stops retrying a /scored_data that keeps failing at the delivery budget, and says so on flush and submit', async () => {
    const s = await stub({ '/scored_data': (_b, res) => json(res, 500, 'Internal Server Error') });
    const client = new AtroposClient({ baseUrl: s.url, ...fast, deliveryBudgetMs: 300 });
    await client.submit(group(1));
    const message =
      /^Atropos at http:\/\/127\.0\.0\.1:\d+ took no groups for 0\.\d+ s \(the delivery budget is 0\.3 s; last: \/scored_data answered HTTP 500: "Internal Server Error"\); 1 groups were not delivered\.$/;
    await expect(client.flush()).rejects.toThrow(message);
    await expect(client.submit(group(2))).rejects.toThrow(message);
    expect(client.close().map((g) => tagOf(g as unknown as Record<string, unknown>))).toEqual([1]);
    expect(s.calls['/scored_data']).toBeLessThan(10);
  });

  it('never sends a group twice when the server drops the connection after queuing it', async () => {
    let drops = 3;
    const s = await stub({
      '/scored_data': (b, res) => {
        s.queue.push(b as Record<string, unknown>);
        s.latest = b as Record<string, unknown>;
        if (drops-- > 0) return void res.socket?.destroy(); // accepted, but the answer is lost
        json(res, 200, { status: 'received' });
      },
    });
    const client = new AtroposClient({ baseUrl: s.url, ...fast, postBatch: 1 });
    for (const tag of [1, 2, 3, 4]) await client.submit(group(tag));
    await client.flush();
    expect(s.queue.map(tagOf)).toEqual([1, 2, 3, 4]);
    expect(client.delivered).toBe(4);
    expect(new Set(s.queue.map((g) => (g.group_overrides as Record<string, string>).spindle_delivery_id)).size).toBe(4);
  });

  it('sends a group again when the server proves it did not land, and sets it aside when it cannot tell', async () => {
    let lose = 2;
    const s = await stub({
      '/scored_data': (b, res) => {
        if (lose-- > 0) return void res.socket?.destroy(); // dropped before queuing
        s.queue.push(b as Record<string, unknown>);
        s.latest = b as Record<string, unknown>;
        json(res, 200, { status: 'received' });
      },
    });
    const client = new AtroposClient({ baseUrl: s.url, ...fast, postBatch: 1 });
    for (const tag of [1, 2]) await client.submit(group(tag));
    await client.flush();
    expect(s.queue.map(tagOf)).toEqual([1, 2]);

    // Another sender's group lands between our lost post and the check: nothing proves either way.
    const t = await stub({
      '/scored_data': (b, res) => {
        t.queue.push(b as Record<string, unknown>);
        t.latest = { ...group(99), group_overrides: { spindle_delivery_id: 'someone-else-0' } };
        res.socket?.destroy();
      },
    });
    const events: ClientEvent[] = [];
    const other = new AtroposClient({ baseUrl: t.url, ...fast, onEvent: (e) => events.push(e) });
    await other.submit(group(7));
    await other.flush();
    expect(t.queue.map(tagOf)).toEqual([7]);
    expect(other.unconfirmed.map((g) => tagOf(g as unknown as Record<string, unknown>))).toEqual([7]);
    expect(events.find((e) => e.kind === 'unconfirmed')).toMatchObject({ groups: 1 });
  });

  it('a feed whose deliveries give up reports it, saying where the groups are', async () => {
    const s = await stub({ '/scored_data': (_b, res) => json(res, 500, 'Internal Server Error') });
    const feed = openFeed(s.url, { client: { ...fast, deliveryBudgetMs: 200 } });
    await feed.send(group(1));
    const summary = await feed.finish();
    expect(summary).toMatchObject({ delivered: 0, rejected: 0, unconfirmed: 0, unsent: 1 });
    expect(describeDelivery(summary, s.url)).toMatch(
      /^Atropos at http:\/\/127\.0\.0\.1:\d+ took 0 of 1 scored groups: 1 not sent; Atropos at .* took no groups for .* 1 groups were not delivered\. Every collected group is also stored with the run; export the run as Atropos JSONL to send the rest later\.$/,
    );
  });
});

/** A feed for the default config, with fast backoff unless `extra.client` says otherwise. */
function openFeed(url: string, extra: Partial<AtroposFeedOptions> = {}) {
  return openAtroposFeed({
    url,
    config: { ...DEFAULT_CONFIG, name: 'feed' },
    maxTokenLength: 8,
    getWithBody: nodeGetWithBody,
    client: { ...fast, postBatch: 1 },
    ...extra,
  });
}

/** An event to await: `hit` where it happens (a route handler, an onEvent), `promise` in the test. */
function seen() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, hit: () => resolve() };
}

describe('what the feed reports', () => {
  const drop =
    (s: Stub, queue: boolean): Handler =>
    (b, res) => {
      if (queue) {
        s.queue.push(b as Record<string, unknown>);
        s.latest = b as Record<string, unknown>;
      }
      res.socket?.destroy();
    };
  const noLatest: Handler = (_b, res) => json(res, 404, { detail: 'Not Found' });

  it('a connection dropped before the server queues: 0 of 4 delivered, proven not landed, all reported not sent', async () => {
    const s = await stub();
    s.routes['/scored_data'] = drop(s, false);
    const feed = openFeed(s.url, { client: { ...fast, postBatch: 1, deliveryBudgetMs: 300 } });
    for (const tag of [1, 2, 3, 4]) await feed.send(group(tag));
    const summary = await feed.finish();
    expect(s.queue).toEqual([]);
    expect(summary).toMatchObject({ delivered: 0, unconfirmed: 0, unsent: 4 });
    expect(deliveredAll(summary)).toBe(false);
    expect(describeDelivery(summary, s.url)).toMatch(/took 0 of 4 scored groups: 4 not sent; .*took no groups for/);
  });

  it('a connection dropped before or after the server queues, with no /latest_example to ask: nothing counted as delivered, all reported unknown', async () => {
    for (const queue of [false, true]) {
      const s = await stub({ '/latest_example': noLatest });
      s.routes['/scored_data'] = drop(s, queue);
      const feed = openFeed(s.url);
      for (const tag of [1, 2, 3, 4]) await feed.send(group(tag));
      const summary = await feed.finish();
      expect(s.queue.map(tagOf)).toEqual(queue ? [1, 2, 3, 4] : []);
      expect(summary).toEqual({ delivered: 0, rejected: 0, unconfirmed: 4, unsent: 0, stopped: null });
      expect(describeDelivery(summary, s.url)).toMatch(
        /took 0 of 4 scored groups: 4 unknown \(the answer to their post was lost or never came; they may have landed, and are not sent again\)\./,
      );
    }
  });

  it('a feed whose registration is refused fails its send, and finishing without waiting counts the group not sent', async () => {
    const s = await stub({ '/register-env': (_b, res) => json(res, 422, { detail: 'bad env' }) });
    const feed = openFeed(s.url);
    await expect(feed.send(group(1))).rejects.toThrow(
      /refused the environment registration: \/register-env answered HTTP 422/,
    );
    const summary = await feed.finish({ wait: false });
    expect(summary).toMatchObject({ delivered: 0, unsent: 1 });
    expect(s.calls['/scored_data']).toBeUndefined();
  });

  it('a connection closed after the server queued, with /latest_example: 4 of 4 delivered, each once', async () => {
    const s = await stub();
    s.routes['/scored_data'] = drop(s, true);
    const feed = openFeed(s.url);
    for (const tag of [1, 2, 3, 4]) await feed.send(group(tag));
    const summary = await feed.finish();
    expect(s.queue.map(tagOf)).toEqual([1, 2, 3, 4]);
    expect(summary).toEqual({ delivered: 4, rejected: 0, unconfirmed: 0, unsent: 0, stopped: null });
    expect(describeDelivery(summary, s.url)).toMatch(/^sent 4 scored groups to http:/);
  });
});

describe('a stop (Ctrl-C) ends every wait at once', () => {
  it('during the backoff after a 503 with Retry-After: 3600, the group is reported not sent', async () => {
    const s = await stub({ '/scored_data': (_b, res) => json(res, 503, 'busy', { 'retry-after': '3600' }) });
    const stop = new AbortController();
    const backoff = seen(); // the client heard the 503 and starts its hour-long wait
    const onEvent = (e: ClientEvent) => {
      if (e.kind === 'unreachable' && e.delay_ms === 3_600_000) backoff.hit();
    };
    const feed = openFeed(s.url, {
      signal: stop.signal,
      onEvent,
      client: { ...fast, deliveryBudgetMs: 2 * 3_600_000 },
    });
    await feed.send(group(1));
    await backoff.promise;
    stop.abort();
    const summary = await feed.finish();
    expect(summary).toMatchObject({
      delivered: 0,
      unconfirmed: 0,
      unsent: 1,
      stopped: 'interrupted while delivering groups to Atropos',
    });
    expect(s.calls['/scored_data']).toBe(1);
  });

  it('while waiting for the trainer to start, and while the queue stays full: send returns, the group is not sent', async () => {
    for (const route of ['/register-env', '/status-env'] as const) {
      const request = seen();
      const s = await stub({
        '/register-env': (_b, res) => {
          if (route === '/register-env') request.hit();
          json(res, 200, route === '/register-env' ? { status: 'wait for trainer to start' } : registered);
        },
        '/status-env': (_b, res) => {
          request.hit();
          json(res, 200, { current_step: 0, queue_size: 100 });
        },
      });
      const stop = new AbortController();
      const feed = openFeed(s.url, {
        signal: stop.signal,
        client: { backoff: { initialMs: 3_600_000, maxMs: 3_600_000 }, pollMs: 3_600_000 },
      });
      const sending = feed.send(group(1));
      await request.promise;
      stop.abort();
      await sending;
      const summary = await feed.finish();
      expect(summary).toMatchObject({ delivered: 0, unsent: 1 });
      expect(summary.stopped).toMatch(
        route === '/register-env'
          ? /^interrupted while (registering with Atropos|waiting for the Atropos trainer to start)$/
          : /^interrupted while waiting for room in the Atropos queue$/,
      );
      expect(s.calls['/scored_data']).toBeUndefined();
    }
  });

  it('with a post in flight that the server never answers: the request is cancelled and its group reported unknown', async () => {
    const request = seen();
    let closed = false;
    const s = await stub({
      '/scored_data': (_b, res) => {
        res.on('close', () => (closed = true));
        request.hit();
      },
    });
    const stop = new AbortController();
    const feed = openFeed(s.url, { signal: stop.signal, client: { ...fast, requestTimeoutMs: 3_600_000 } });
    await feed.send(group(1));
    await request.promise;
    stop.abort();
    expect(await feed.finish()).toMatchObject({ delivered: 0, unconfirmed: 1, unsent: 0, stopped: null });
    await vi.waitFor(() => expect(closed).toBe(true)); // the client hung up
  });

  it('while submit waits for room in a full outbox: AtroposInterrupted, and the post in flight is set aside as unknown', async () => {
    const request = seen();
    const s = await stub({ '/scored_data': () => request.hit() });
    const stop = new AbortController();
    const client = new AtroposClient({
      baseUrl: s.url,
      ...fast,
      outboxLimit: 1,
      requestTimeoutMs: 3_600_000,
      signal: stop.signal,
    });
    await client.submit(group(1));
    await request.promise;
    const waiting = client.submit(group(2));
    stop.abort();
    await expect(waiting).rejects.toThrow(new AtroposInterrupted('waiting for room in the outbox'));
    await client.flush();
    expect(client.unconfirmed.map((g) => tagOf(g as unknown as Record<string, unknown>))).toEqual([1]);
    expect(client.delivered).toBe(0);
    expect(client.close()).toEqual([]);
  });

  it('the client names the stop: AtroposInterrupted from registerEnv and submit, before any request', async () => {
    const stop = new AbortController();
    stop.abort();
    const s = await stub();
    const client = new AtroposClient({ baseUrl: s.url, ...fast, signal: stop.signal, getWithBody: nodeGetWithBody });
    await expect(client.registerEnv({ desired_name: 'e', max_token_length: 8, group_size: 2 })).rejects.toThrow(
      AtroposInterrupted,
    );
    await expect(client.submit(group(1))).rejects.toThrow(/^interrupted while queueing a group for Atropos$/);
    expect(Object.keys(s.calls)).toEqual([]);
  });
});
