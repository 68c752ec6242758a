/**
 * A client for Atropos's trajectory API, so a browser or CLI run can feed a remote Atropos trainer.
 * fetch-based (browser and Node). What it does beyond plain HTTP calls:
 *
 * - `registerEnv` retries with exponential backoff while the server answers
 *   `{"status": "wait for trainer to start"}` (or is not up yet).
 * - `waitForCapacity` polls `/status-env` and waits while queue_size · group_size ≥
 *   max_batches_offpolicy · batch_size — Atropos's own rule for how far rollouts may run ahead.
 * - `submit` puts groups in a bounded outbox that a background loop posts (`/scored_data_list`) with
 *   retries, so groups survive the server going away mid-run; when the outbox is full, `submit`
 *   waits for room (the run slows down instead of dropping data). Delivery is at-least-once: a
 *   group whose response was lost is sent again.
 *
 * `/status-env` takes its env id as a JSON body on a GET, which browsers' fetch cannot send; pass
 * `getWithBody` (Node: `nodeGetWithBody` from atropos-node.ts). Without it the client tries
 * `?env_id=` and then falls back to `/status` (the whole queue, in groups).
 */
import type { ScoredGroup } from '../contracts.ts';

export interface RegisterEnvRequest {
  desired_name: string;
  max_token_length: number;
  group_size: number;
  weight?: number;
  min_batch_allocation?: number | null;
}

export interface RegisteredEnv {
  env_id: number;
  wandb_name: string;
  checkpoint_dir: string;
  starting_step: number;
  checkpoint_interval: number;
  num_steps: number;
}

export interface EnvStatus {
  current_step: number;
  /** Queued groups (in this env's group size). */
  queue_size: number;
  env_weight?: number;
  /** Which endpoint answered: `/status` counts the whole queue. */
  source: 'status-env' | 'status';
}

export type ClientEvent =
  | { kind: 'waiting-for-trainer'; attempt: number; delay_ms: number }
  | { kind: 'unreachable'; during: string; error: string; delay_ms: number }
  | { kind: 'backpressure'; queue_size: number; limit: number }
  | { kind: 'delivered'; groups: number; pending: number }
  | { kind: 'rejected'; groups: number; status: number; detail: string }
  | { kind: 'reregistered'; env_id: number };

export interface AtroposClientOptions {
  baseUrl: string;
  fetch?: typeof fetch;
  getWithBody?: (url: string, body: unknown) => Promise<{ status: number; json: unknown }>;
  /** Most groups waiting in the outbox (default 64). */
  outboxLimit?: number;
  /** Groups per `/scored_data_list` post (default 8). */
  postBatch?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Give up registering after this long (default 10 minutes). */
  registerTimeoutMs?: number;
  /** Status poll interval while waiting for capacity (default 1 s). */
  pollMs?: number;
  onEvent?: (e: ClientEvent) => void;
  sleep?: (ms: number) => Promise<void>;
}

class HttpError extends Error {
  constructor(readonly status: number, readonly detail: string, path: string) {
    super(`${path} answered HTTP ${status}: ${detail.slice(0, 200)}`);
  }
}

export class AtroposClient {
  private readonly base: string;
  private readonly http: typeof fetch;
  private readonly outbox: ScoredGroup[] = [];
  private readonly limit: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private flushing: Promise<void> | null = null;
  private roomWaiters: (() => void)[] = [];
  private registration: { request: RegisterEnvRequest; env: RegisteredEnv } | null = null;
  private closed = false;
  /** Groups the server refused (HTTP 4xx): not retried, kept for inspection. */
  readonly rejected: ScoredGroup[] = [];
  delivered = 0;

  constructor(private readonly options: AtroposClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.http = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.limit = options.outboxLimit ?? 64;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  get env(): RegisteredEnv | null { return this.registration?.env ?? null; }
  get pending(): number { return this.outbox.length; }

  private emit(e: ClientEvent) { this.options.onEvent?.(e); }

  private delay(attempt: number): number {
    const { initialMs = 500, maxMs = 30_000 } = this.options.backoff ?? {};
    return Math.min(maxMs, initialMs * 2 ** attempt);
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const res = await this.http(this.base + path, {
      method, headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpError(res.status, text, path);
    try { return text ? JSON.parse(text) : null; } catch { return text; }
  }

  /** Registers the environment, waiting (with backoff) until the trainer has started. */
  async registerEnv(request: RegisterEnvRequest): Promise<RegisteredEnv> {
    const deadline = Date.now() + (this.options.registerTimeoutMs ?? 600_000);
    const body = { weight: 1, min_batch_allocation: null, ...request };
    for (let attempt = 0; ; attempt++) {
      let reply: Record<string, unknown> | null = null;
      let failure: string | null = null;
      try {
        reply = (await this.call('POST', '/register-env', body)) as Record<string, unknown>;
      } catch (e) {
        if (e instanceof HttpError && e.status >= 400 && e.status < 500) {
          throw new Error(`Atropos at ${this.base} refused the environment registration: ${e.message}`, { cause: e });
        }
        failure = (e as Error).message;
      }
      if (reply?.status === 'success') {
        const env = reply as unknown as RegisteredEnv;
        this.registration = { request, env };
        return env;
      }
      const wait = this.delay(attempt);
      if (Date.now() + wait > deadline) {
        throw new Error(failure
          ? `Atropos at ${this.base} is unreachable (${failure}); start it with \`run-api\` or fix the URL.`
          : `Atropos at ${this.base} is waiting for its trainer: start the trainer (it calls /register and then polls /batch), then retry.`);
      }
      if (failure) this.emit({ kind: 'unreachable', during: 'register-env', error: failure, delay_ms: wait });
      else this.emit({ kind: 'waiting-for-trainer', attempt, delay_ms: wait });
      await this.sleep(wait);
    }
  }

  private requireEnv(): RegisteredEnv {
    if (!this.registration) throw new Error('AtroposClient: call registerEnv() first');
    return this.registration.env;
  }

  /** This environment's view of the queue (`/status-env`, or `/status` where a GET body is impossible). */
  async status(): Promise<EnvStatus> {
    const { env_id } = this.requireEnv();
    if (this.options.getWithBody) {
      const { status, json } = await this.options.getWithBody(this.base + '/status-env', { env_id });
      if (status >= 400) throw new HttpError(status, JSON.stringify(json), '/status-env');
      const s = json as Record<string, number>;
      return { current_step: s.current_step, queue_size: s.queue_size, env_weight: s.env_weight, source: 'status-env' };
    }
    try {
      const s = (await this.call('GET', `/status-env?env_id=${env_id}`)) as Record<string, number>;
      return { current_step: s.current_step, queue_size: s.queue_size, env_weight: s.env_weight, source: 'status-env' };
    } catch (e) {
      if (!(e instanceof HttpError && e.status === 422)) throw e;
      const s = (await this.call('GET', '/status')) as Record<string, number>;
      return { current_step: s.current_step, queue_size: s.queue_size, source: 'status' };
    }
  }

  /**
   * Waits while the server already holds `max_batches_offpolicy` batches' worth of groups. A server
   * that went away is polled with backoff; one that came back without our registration is re-registered.
   */
  async waitForCapacity(limits: { batch_size: number; group_size: number; max_batches_offpolicy: number }): Promise<EnvStatus> {
    const limit = limits.max_batches_offpolicy * limits.batch_size;
    for (let attempt = 0; ; ) {
      let s: EnvStatus;
      try {
        s = await this.status();
        attempt = 0;
      } catch (e) {
        const wait = this.delay(attempt++);
        this.emit({ kind: 'unreachable', during: 'status-env', error: (e as Error).message, delay_ms: wait });
        // A restarted server has forgotten its envs: /status-env fails with 500 for our id.
        if (e instanceof HttpError && e.status >= 500 && this.registration) await this.reregister();
        else await this.sleep(wait);
        continue;
      }
      if (limits.max_batches_offpolicy <= 0 || s.queue_size * limits.group_size < limit) return s;
      this.emit({ kind: 'backpressure', queue_size: s.queue_size, limit });
      await this.sleep(this.options.pollMs ?? 1000);
    }
  }

  private async reregister() {
    const request = this.registration!.request;
    const env = await this.registerEnv(request);
    this.emit({ kind: 'reregistered', env_id: env.env_id });
  }

  /**
   * Queues a group for delivery and returns once it is in the outbox (waiting for room when the
   * outbox is full). `flush()` waits for delivery.
   */
  async submit(group: ScoredGroup): Promise<void> {
    if (this.closed) throw new Error('AtroposClient: closed');
    while (this.outbox.length >= this.limit && !this.closed) await new Promise<void>((r) => this.roomWaiters.push(r));
    if (this.closed) throw new Error('AtroposClient: closed while waiting for room in the outbox');
    const env_id = this.registration?.env.env_id ?? group.env_id;
    this.outbox.push({ ...group, env_id: env_id ?? null });
    this.flushing ??= this.drain();
  }

  /** Resolves when every submitted group was delivered (or rejected by the server). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stops retrying; undelivered groups are returned so the caller can keep them. */
  close(): ScoredGroup[] {
    this.closed = true;
    const left = this.outbox.splice(0);
    this.wakeRoom();
    return left;
  }

  private wakeRoom() {
    const waiters = this.roomWaiters.splice(0);
    for (const w of waiters) w();
  }

  private async drain(): Promise<void> {
    let attempt = 0;
    while (this.outbox.length && !this.closed) {
      const batch = this.outbox.slice(0, this.options.postBatch ?? 8);
      try {
        if (batch.length === 1) await this.call('POST', '/scored_data', batch[0]);
        else await this.call('POST', '/scored_data_list', batch);
        attempt = 0;
        this.outbox.splice(0, batch.length);
        this.delivered += batch.length;
        this.emit({ kind: 'delivered', groups: batch.length, pending: this.outbox.length });
      } catch (e) {
        if (e instanceof HttpError && e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429) {
          // The server will never take these as they are: keep them aside instead of retrying forever.
          this.outbox.splice(0, batch.length);
          this.rejected.push(...batch);
          this.emit({ kind: 'rejected', groups: batch.length, status: e.status, detail: e.detail.slice(0, 200) });
        } else {
          const wait = this.delay(attempt++);
          this.emit({ kind: 'unreachable', during: 'scored_data', error: (e as Error).message, delay_ms: wait });
          await this.sleep(wait);
        }
      }
      this.wakeRoom();
    }
    this.flushing = null;
  }
}
