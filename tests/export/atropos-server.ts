/**
 * A small stand-in for Atropos's trajectory API server (atroposlib/api/server.py) on node:http:
 * in-memory queue, the 'wait for trainer to start' reply until a trainer polls /batch, /status-env
 * reading its env id from a JSON body on GET (422 without one), 500 for an env id it does not know, and
 * /latest_example (the last group queued, or empty lists before the first). Faults: `drop` destroys the
 * connection of every /scored_data(_list) post before or after queuing it; `latestExample: false` is an
 * older server without that endpoint (404).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface FakeAtropos {
  url: string;
  port: number;
  queue: Record<string, unknown>[];
  envs: { desired_name: string; group_size: number }[];
  requests: string[];
  state: { started: boolean; batch_size: number; step: number };
  /** What the trainer does: take `batch_size` sequences' worth of groups. */
  takeBatch(): Record<string, unknown>[] | null;
  /** Resolves when the server has seen a request `"<METHOD> <path>"` (at once if it already has). */
  seen(request: string): Promise<void>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const REQUIRED = ['tokens', 'masks', 'scores'];

export interface FakeAtroposOptions {
  port?: number;
  started?: boolean;
  batch_size?: number;
  drop?: 'before-queue' | 'after-queue';
  latestExample?: boolean;
}

export async function startFakeAtropos(options: FakeAtroposOptions = {}): Promise<FakeAtropos> {
  const state = { started: options.started ?? false, batch_size: options.batch_size ?? 4, step: 0 };
  const queue: Record<string, unknown>[] = [];
  const envs: { desired_name: string; group_size: number }[] = [];
  const requests: string[] = [];
  const waiting: { request: string; resolve: () => void }[] = [];
  const seen = (request: string) =>
    new Promise<void>((resolve) => (requests.includes(request) ? resolve() : waiting.push({ request, resolve })));
  let latest: Record<string, unknown> = {
    tokens: [],
    masks: [],
    scores: [],
    advantages: [],
    ref_logprobs: [],
    generation_params: [],
    inference_logprobs: [],
    messages: [],
    images: [],
  };
  const takeBatch = () => {
    state.started = true;
    let n = 0,
      k = 0;
    while (k < queue.length && n < state.batch_size) n += (queue[k++].tokens as unknown[]).length;
    if (n < state.batch_size) return null;
    state.step++;
    return queue.splice(0, k);
  };
  const server: Server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    requests.push(`${req.method} ${path}`);
    for (const w of waiting.filter((x) => x.request === `${req.method} ${path}`)) w.resolve();
    const raw = await readBody(req);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      return send(400, { detail: 'bad json' });
    }
    const validGroup = (g: unknown) =>
      typeof g === 'object' && g !== null && REQUIRED.every((f) => Array.isArray((g as Record<string, unknown>)[f]));
    if (req.method === 'POST' && path === '/register-env') {
      if (!state.started) return send(200, { status: 'wait for trainer to start' });
      const b = body as { desired_name: string; group_size: number };
      envs.push({ desired_name: b.desired_name, group_size: b.group_size });
      return send(200, {
        status: 'success',
        env_id: envs.length - 1,
        wandb_name: `${b.desired_name}_0`,
        checkpoint_dir: 'ckpt',
        starting_step: state.step,
        checkpoint_interval: 10,
        num_steps: 100,
      });
    }
    if (req.method === 'GET' && path === '/status-env') {
      const id = (body as { env_id?: number } | null)?.env_id;
      if (id === undefined) return send(422, { detail: [{ loc: ['body'], msg: 'Field required' }] });
      const env = envs[id];
      if (!env) return send(500, 'Internal Server Error');
      const sequences = queue.reduce((s, g) => s + (g.tokens as unknown[]).length, 0);
      return send(200, {
        current_step: state.step,
        queue_size: Math.floor(sequences / env.group_size),
        env_weight: 1,
        self_queue_size: 0,
        max_group_size: env.group_size,
        unallocated_fraction: 1,
      });
    }
    if (req.method === 'GET' && path === '/status')
      return send(200, { current_step: state.step, queue_size: queue.length });
    const dropped = () => void res.socket?.destroy();
    if (req.method === 'POST' && path === '/scored_data') {
      if (!validGroup(body)) return send(422, { detail: 'invalid ScoredData' });
      if (options.drop === 'before-queue') return dropped();
      queue.push(body as Record<string, unknown>);
      latest = body as Record<string, unknown>;
      if (options.drop === 'after-queue') return dropped();
      return send(200, { status: 'received' });
    }
    if (req.method === 'POST' && path === '/scored_data_list') {
      if (!Array.isArray(body) || !body.every(validGroup)) return send(422, { detail: 'invalid ScoredData list' });
      if (options.drop === 'before-queue') return dropped();
      queue.push(...(body as Record<string, unknown>[]));
      latest = body.at(-1) as Record<string, unknown>;
      if (options.drop === 'after-queue') return dropped();
      return send(200, { status: 'received', groups_processed: body.length });
    }
    if (req.method === 'GET' && path === '/batch') return send(200, { batch: takeBatch() });
    if (req.method === 'GET' && path === '/latest_example' && options.latestExample !== false) return send(200, latest);
    send(404, { detail: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    queue,
    envs,
    requests,
    state,
    takeBatch,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
