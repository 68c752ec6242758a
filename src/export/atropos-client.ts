/**
 * A client for Atropos's trajectory API, so a browser or CLI run can feed a remote Atropos trainer.
 * fetch-based (browser and Node). What it does beyond plain HTTP calls, and its limits:
 *
 * - Every call has a timeout (`requestTimeoutMs`, headers and body) and a size limit on the reply;
 *   a server that hangs fails the call, it never holds the client in silence.
 * - `registerEnv` retries with backoff (Retry-After honoured) while the server answers
 *   `{"status": "wait for trainer to start"}`, is not up yet, or fails with 5xx/429, for at most
 *   `registerTimeoutMs`; then it says what to start.
 * - `waitForCapacity` polls `/status-env` and waits while queue_size · group_size ≥
 *   max_batches_offpolicy · batch_size — Atropos's own rule for how far rollouts may run ahead — for
 *   at most `capacityWaitMs`, whether the queue stays full or the server stops answering; failures
 *   back off (a 5xx re-registers once per streak: a restarted server forgot our env). A `queue_size`
 *   or `current_step` that is not a whole number ≥ 0 is refused at once (it would disable the rule).
 * - `submit` puts groups in a bounded outbox that a background loop posts (`/scored_data_list`),
 *   retrying 5xx/429/408 and refused connections with backoff and Retry-After, for at most
 *   `deliveryBudgetMs` of failing; then `flush` and `submit` fail, saying so, and `close()` returns
 *   what was not delivered. When the outbox is full, `submit` waits for room.
 * - Delivery never duplicates a group. The real server (atroposlib/api/server.py) cannot deduplicate:
 *   `ScoredData` has no id field and ignores unknown ones, and a list post is queued whole or not at all.
 *   So each group carries a delivery id in `group_overrides.spindle_delivery_id` (kept by the server,
 *   ignored by the trainer), an acknowledged post is never sent again, and a post whose answer was lost
 *   (the connection dropped or timed out after the request went out) is resent only once the server's
 *   `/latest_example` proves it did not land: it shows nothing queued since the server started, or our
 *   last acknowledged group. When it shows our batch, the batch counts as delivered; when it shows
 *   another sender's group (or the endpoint is missing), the outcome cannot be known and the groups are
 *   kept aside in `unconfirmed` instead of risking a duplicate.
 * - `delivered` counts a group only once the server acknowledged its post (2xx) or `/latest_example`
 *   showed it queued; a group whose post was in flight when delivery stopped is `unconfirmed`, never
 *   counted as delivered.
 * - `signal` (a user's Ctrl-C) stops every wait at once: a backoff sleep, a request in flight (its
 *   connection is cancelled), the register and status loops, and `submit` waiting for room. They end
 *   with `AtroposInterrupted`; the background delivery stops, and `close()` returns what was not sent.
 *
 * `/status-env` takes its env id as a JSON body on a GET, which browsers' fetch cannot send; pass
 * `getWithBody` (Node: `nodeGetWithBody` from atropos-node.ts). Without it the client tries
 * `?env_id=` and then falls back to `/status` (the whole queue, in groups).
 */
import type { ScoredGroup } from '../contracts.ts';
import {
  describeFetchError,
  fetchWithTimeout,
  MiB,
  NetError,
  neverSent,
  parseRetryAfter,
  readText,
  retryableStatus,
  sleep,
} from '../net.ts';

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
  | { kind: 'unconfirmed'; groups: number; detail: string }
  | { kind: 'reregistered'; env_id: number };

/** A GET with a JSON body (Node); `limits` bound its time and reply size, and `signal` cancels it. */
export type GetWithBody = (
  url: string,
  body: unknown,
  limits?: { timeoutMs: number; maxBytes: number; signal?: AbortSignal },
) => Promise<{ status: number; json: unknown; retryAfter?: string | null }>;

export interface AtroposClientOptions {
  baseUrl: string;
  fetch?: typeof fetch;
  getWithBody?: GetWithBody;
  /** Most groups waiting in the outbox (default 64). */
  outboxLimit?: number;
  /** Groups per `/scored_data_list` post (default 8). */
  postBatch?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Give up registering after this long (default 10 minutes). */
  registerTimeoutMs?: number;
  /** Status poll interval while waiting for capacity (default 1 s). */
  pollMs?: number;
  /** One call, headers and body (default 30 s). */
  requestTimeoutMs?: number;
  /** Longest wait in `waitForCapacity`, for room or for the server to answer (default 30 minutes). */
  capacityWaitMs?: number;
  /** Longest time the outbox may keep failing to deliver before giving up (default 10 minutes). */
  deliveryBudgetMs?: number;
  onEvent?: (e: ClientEvent) => void;
  /** A user's stop (Ctrl-C): every wait and request ends at once (see the header). */
  signal?: AbortSignal;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    path: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(`${path} answered HTTP ${status}: ${detail.slice(0, 200)}`);
  }
}

/** The server answered something that is not Atropos's protocol: retrying cannot help. */
class AtroposProtocolError extends Error {}

/** The client's signal fired (a user's Ctrl-C): the wait or request it ended did not finish. */
export class AtroposInterrupted extends Error {
  constructor(during: string) {
    super(`interrupted while ${during}`);
    this.name = 'AtroposInterrupted';
  }
}

/** Replies are small JSON; `/latest_example` holds one whole group. */
const REPLY_LIMIT = MiB;
const EXAMPLE_LIMIT = 64 * MiB;
const DELIVERY_ID = 'spindle_delivery_id';

const minutes = (ms: number) => (ms >= 60_000 ? `${+(ms / 60_000).toFixed(1)} min` : `${+(ms / 1000).toFixed(1)} s`);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const deliveryIdOf = (g: unknown): string | null => {
  const id = (g as { group_overrides?: Record<string, unknown> } | null)?.group_overrides?.[DELIVERY_ID];
  return typeof id === 'string' ? id : null;
};
const randomId = () =>
  globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

export class AtroposClient {
  private readonly base: string;
  private readonly http: typeof fetch;
  private readonly outbox: ScoredGroup[] = [];
  private readonly limit: number;
  private readonly timeoutMs: number;
  /** The user's stop, if any. */
  private readonly signal: AbortSignal | undefined;
  /** Fired by `close()`, so no wait or request outlives the client. */
  private readonly halt = new AbortController();
  /** Ends every wait and request: the user's stop or `close()`. */
  private readonly stop: AbortSignal;
  private flushing: Promise<void> | null = null;
  private roomWaiters: (() => void)[] = [];
  private registration: { request: RegisterEnvRequest; env: RegisteredEnv } | null = null;
  private closed = false;
  /** Why delivery stopped (the budget ran out); submit and flush report it. */
  private failure: Error | null = null;
  /** How many groups at the head of the outbox were posted with their answer lost (0: none): confirm before anything is posted again. */
  private inDoubt = 0;
  /** How many groups at the head of the outbox a post (or its confirmation) in flight is about. */
  private posting = 0;
  private readonly clientId = randomId();
  private sequence = 0;
  private lastAcknowledged: string | null = null;
  /** Groups the server refused (HTTP 4xx): not retried, kept for inspection. */
  readonly rejected: ScoredGroup[] = [];
  /** Groups whose post may or may not have landed (see the header): not resent, kept for inspection. */
  readonly unconfirmed: ScoredGroup[] = [];
  delivered = 0;

  constructor(private readonly options: AtroposClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.http = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.limit = options.outboxLimit ?? 64;
    this.timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.signal = options.signal;
    this.stop = options.signal ? AbortSignal.any([options.signal, this.halt.signal]) : this.halt.signal;
    // A submit waiting for room must hear the stop too.
    this.stop.addEventListener('abort', () => this.wakeRoom(), { once: true });
  }

  private get interrupted(): boolean {
    return this.signal?.aborted === true;
  }

  private checkInterrupted(during: string) {
    if (this.interrupted) throw new AtroposInterrupted(during);
  }

  /** A backoff or poll wait that the signal ends at once. */
  private async wait(ms: number, during: string) {
    await sleep(ms, this.stop);
    this.checkInterrupted(during);
  }

  get env(): RegisteredEnv | null {
    return this.registration?.env ?? null;
  }
  get pending(): number {
    return this.outbox.length;
  }

  private emit(e: ClientEvent) {
    this.options.onEvent?.(e);
  }

  private delay(attempt: number, retryAfterMs: number | null = null): number {
    const { initialMs = 500, maxMs = 30_000 } = this.options.backoff ?? {};
    return retryAfterMs ?? Math.min(maxMs, initialMs * 2 ** attempt);
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown, maxBytes = REPLY_LIMIT): Promise<unknown> {
    const url = this.base + path;
    const { response, controller } = await fetchWithTimeout(
      this.http,
      url,
      {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      },
      this.timeoutMs,
      this.stop,
    );
    const text = await readText(response, controller, url, {
      connectTimeoutMs: this.timeoutMs,
      idleTimeoutMs: this.timeoutMs,
      maxBytes,
    });
    if (!response.ok)
      throw new HttpError(response.status, text, path, parseRetryAfter(response.headers.get('retry-after')));
    try {
      return text ? JSON.parse(text) : null;
    } catch {
      return text;
    }
  }

  /** Registers the environment, waiting (with backoff) until the trainer has started. */
  async registerEnv(request: RegisterEnvRequest): Promise<RegisteredEnv> {
    const budget = this.options.registerTimeoutMs ?? 600_000;
    const deadline = Date.now() + budget;
    const body = { weight: 1, min_batch_allocation: null, ...request };
    for (let attempt = 0; ; attempt++) {
      this.checkInterrupted('registering with Atropos');
      let reply: Record<string, unknown> | null = null;
      let failure: string | null = null;
      let retryAfterMs: number | null = null;
      try {
        reply = (await this.call('POST', '/register-env', body)) as Record<string, unknown>;
      } catch (e) {
        this.checkInterrupted('registering with Atropos');
        if (e instanceof HttpError && !retryableStatus(e.status)) {
          throw new Error(`Atropos at ${this.base} refused the environment registration: ${e.message}`, { cause: e });
        }
        failure = e instanceof NetError ? e.message : (e as Error).message;
        retryAfterMs = e instanceof HttpError ? e.retryAfterMs : null;
      }
      if (reply?.status === 'success') {
        if (!isCount(reply.env_id))
          throw new AtroposProtocolError(
            `Atropos at ${this.base} registered the environment with env_id ${JSON.stringify(reply.env_id)}; expected a whole number ≥ 0. Is this an Atropos trajectory API server?`,
          );
        const env = reply as unknown as RegisteredEnv;
        this.registration = { request, env };
        return env;
      }
      const wait = this.delay(attempt, retryAfterMs);
      if (Date.now() + wait > deadline) {
        throw new Error(
          failure
            ? `Atropos at ${this.base} did not register the environment within ${minutes(budget)} (last: ${failure}); start it with \`run-api\`, or fix the URL.`
            : `Atropos at ${this.base} is waiting for its trainer: start the trainer (it calls /register and then polls /batch), then retry.`,
        );
      }
      if (failure) this.emit({ kind: 'unreachable', during: 'register-env', error: failure, delay_ms: wait });
      else this.emit({ kind: 'waiting-for-trainer', attempt, delay_ms: wait });
      await this.wait(wait, 'waiting for the Atropos trainer to start');
    }
  }

  private requireEnv(): RegisteredEnv {
    if (!this.registration) throw new Error('AtroposClient: call registerEnv() first');
    return this.registration.env;
  }

  /** A status reply's numbers, refused unless they are whole numbers ≥ 0 (NaN or -1 would switch backpressure off). */
  private checkedStatus(reply: unknown, path: string, source: EnvStatus['source']): EnvStatus {
    const s = (reply ?? {}) as Record<string, unknown>;
    for (const field of ['queue_size', 'current_step']) {
      if (!isCount(s[field])) {
        throw new AtroposProtocolError(
          `Atropos at ${this.base} answered ${path} with ${field} ${JSON.stringify(s[field]) ?? 'missing'}; expected a whole number ≥ 0. Is this an Atropos trajectory API server?`,
        );
      }
    }
    const status: EnvStatus = { current_step: s.current_step as number, queue_size: s.queue_size as number, source };
    if (source === 'status-env' && typeof s.env_weight === 'number') status.env_weight = s.env_weight;
    return status;
  }

  /** This environment's view of the queue (`/status-env`, or `/status` where a GET body is impossible). */
  async status(): Promise<EnvStatus> {
    const { env_id } = this.requireEnv();
    if (this.options.getWithBody) {
      const limits = { timeoutMs: this.timeoutMs, maxBytes: REPLY_LIMIT, signal: this.stop };
      const { status, json, retryAfter } = await this.options.getWithBody(
        this.base + '/status-env',
        { env_id },
        limits,
      );
      if (status >= 400)
        throw new HttpError(status, JSON.stringify(json), '/status-env', parseRetryAfter(retryAfter ?? null));
      return this.checkedStatus(json, '/status-env', 'status-env');
    }
    try {
      return this.checkedStatus(await this.call('GET', `/status-env?env_id=${env_id}`), '/status-env', 'status-env');
    } catch (e) {
      if (!(e instanceof HttpError && e.status === 422)) throw e;
      return this.checkedStatus(await this.call('GET', '/status'), '/status', 'status');
    }
  }

  /**
   * Waits while the server already holds `max_batches_offpolicy` batches' worth of groups, for at most
   * `capacityWaitMs`. A server that went away is polled with backoff; one that came back without our
   * registration is re-registered (once per streak of failures, then backoff alone).
   */
  async waitForCapacity(limits: {
    batch_size: number;
    group_size: number;
    max_batches_offpolicy: number;
  }): Promise<EnvStatus> {
    const limit = limits.max_batches_offpolicy * limits.batch_size;
    const budget = this.options.capacityWaitMs ?? 30 * 60_000;
    const started = Date.now();
    let attempt = 0;
    let reregistered = false;
    for (;;) {
      this.checkInterrupted('waiting for room in the Atropos queue');
      let s: EnvStatus;
      try {
        s = await this.status();
        attempt = 0;
        reregistered = false;
      } catch (e) {
        this.checkInterrupted('waiting for room in the Atropos queue');
        if (e instanceof AtroposProtocolError) throw e;
        const message = (e as Error).message;
        const wait = this.delay(attempt++, e instanceof HttpError ? e.retryAfterMs : null);
        if (Date.now() - started + wait > budget) {
          throw new Error(
            `Atropos at ${this.base} did not answer /status-env for ${minutes(Date.now() - started)} (the wait budget is ${minutes(budget)}; last: ${message}). Is the server still up?`,
            { cause: e },
          );
        }
        this.emit({ kind: 'unreachable', during: 'status-env', error: message, delay_ms: wait });
        // A restarted server has forgotten its envs: /status-env fails with 500 for our id.
        if (e instanceof HttpError && e.status >= 500 && this.registration && !reregistered) {
          reregistered = true;
          await this.reregister();
        }
        await this.wait(wait, 'waiting for Atropos to answer /status-env');
        continue;
      }
      if (limits.max_batches_offpolicy <= 0 || s.queue_size * limits.group_size < limit) return s;
      const poll = this.options.pollMs ?? 1000;
      if (Date.now() - started + poll > budget) {
        throw new Error(
          `Atropos at ${this.base}: the trainer's queue stayed full for ${minutes(Date.now() - started)} (the wait budget is ${minutes(budget)}): queue_size ${s.queue_size} × group_size ${limits.group_size} ≥ ${limit} (max_batches_offpolicy × batch_size). Is the trainer still taking batches from /batch?`,
        );
      }
      this.emit({ kind: 'backpressure', queue_size: s.queue_size, limit });
      await this.wait(poll, 'waiting for room in the Atropos queue');
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
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error('AtroposClient: closed');
    this.checkInterrupted('queueing a group for Atropos');
    while (this.outbox.length >= this.limit && !this.closed && !this.failure && !this.interrupted) {
      await new Promise<void>((r) => this.roomWaiters.push(r));
    }
    this.checkInterrupted('waiting for room in the outbox');
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error('AtroposClient: closed while waiting for room in the outbox');
    const env_id = this.registration?.env.env_id ?? group.env_id;
    const group_overrides = { ...(group.group_overrides ?? {}), [DELIVERY_ID]: `${this.clientId}-${this.sequence++}` };
    this.outbox.push({ ...group, env_id: env_id ?? null, group_overrides });
    this.flushing ??= this.drain();
  }

  /** Resolves when every submitted group was delivered, refused or set aside; rejects when delivery gave up or was interrupted. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
    if (this.outbox.length) this.checkInterrupted('delivering groups to Atropos');
  }

  /**
   * Stops delivery at once (a post in flight is cancelled); the groups never sent are returned so the
   * caller can keep them, and those whose post was in flight or unconfirmed go to `unconfirmed`.
   */
  close(): ScoredGroup[] {
    this.closed = true;
    this.inDoubt = Math.max(this.inDoubt, this.posting);
    this.setAsideInDoubt('delivery was closed while the post of these groups was in flight or unconfirmed');
    const left = this.outbox.splice(0);
    this.halt.abort();
    this.wakeRoom();
    return left;
  }

  private wakeRoom() {
    const waiters = this.roomWaiters.splice(0);
    for (const w of waiters) w();
  }

  private async drain(): Promise<void> {
    let attempt = 0;
    let failingSince: number | null = null;
    const budget = this.options.deliveryBudgetMs ?? 10 * 60_000;
    while (this.outbox.length && !this.closed && !this.interrupted) {
      // A batch whose answer was lost is confirmed as it was posted, not with groups queued since.
      const batch = this.outbox.slice(0, this.inDoubt || (this.options.postBatch ?? 8));
      let retry: { error: string; retryAfterMs: number | null } | null = null;
      try {
        this.posting = batch.length;
        const outcome = this.inDoubt ? await this.confirm(batch) : await this.post(batch);
        this.posting = 0;
        if (this.closed) break; // close() already counted this batch as unconfirmed
        if (outcome === 'lost') {
          this.inDoubt = 0;
          continue; // proven not to have landed: post it again now
        }
        if (outcome === 'in-doubt') {
          this.inDoubt = batch.length;
          retry = {
            error: 'the connection dropped after the groups were sent; checking whether they landed',
            retryAfterMs: null,
          };
        } else {
          this.inDoubt = 0;
          this.outbox.splice(0, batch.length);
          attempt = 0;
          failingSince = null;
          this.settle(batch, outcome);
        }
      } catch (e) {
        this.posting = 0;
        if (this.interrupted || this.closed) break;
        retry = { error: (e as Error).message, retryAfterMs: e instanceof HttpError ? e.retryAfterMs : null };
      }
      if (this.interrupted) break;
      if (retry) {
        const wait = this.delay(attempt++, retry.retryAfterMs);
        failingSince ??= Date.now();
        if (Date.now() - failingSince + wait > budget) {
          await this.lastConfirm();
          const left = this.outbox.length ? `; ${this.outbox.length} groups were not delivered` : '';
          const spent = `${minutes(Date.now() - failingSince)} (the delivery budget is ${minutes(budget)}; last: ${retry.error})`;
          this.failure = new Error(`Atropos at ${this.base} took no groups for ${spent}${left}.`);
          break;
        }
        this.emit({ kind: 'unreachable', during: 'scored_data', error: retry.error, delay_ms: wait });
        await sleep(wait, this.stop);
      }
      this.wakeRoom();
    }
    if (this.interrupted)
      this.setAsideInDoubt('delivery was interrupted while the post of these groups was in flight or unconfirmed');
    this.flushing = null;
    this.wakeRoom();
  }

  /** Giving up with a post whose answer was lost: one last look at `/latest_example`, so the report says what landed. */
  private async lastConfirm() {
    if (!this.inDoubt) return;
    const batch = this.outbox.slice(0, this.inDoubt);
    const outcome = await this.confirm(batch).catch(() => null);
    if (this.closed) return; // close() already counted the batch as unconfirmed
    if (outcome === 'lost')
      this.inDoubt = 0; // proven not sent: it stays in the outbox, counted as not delivered
    else if (outcome === 'delivered') {
      this.inDoubt = 0;
      this.outbox.splice(0, batch.length);
      this.settle(batch, outcome);
    } else this.setAsideInDoubt('delivery gave up before it could tell whether the post of these groups landed');
  }

  /** Delivery stops with a post whose answer was lost (or still in flight): its groups may have landed. */
  private setAsideInDoubt(why: string) {
    if (!this.inDoubt) return;
    const batch = this.outbox.splice(0, this.inDoubt);
    this.inDoubt = 0;
    this.settle(batch, 'unconfirmed', why);
  }

  private settle(batch: ScoredGroup[], outcome: 'delivered' | { rejected: HttpError } | 'unconfirmed', why?: string) {
    if (outcome === 'delivered') {
      this.delivered += batch.length;
      this.lastAcknowledged = deliveryIdOf(batch.at(-1));
      this.emit({ kind: 'delivered', groups: batch.length, pending: this.outbox.length });
    } else if (outcome === 'unconfirmed') {
      this.unconfirmed.push(...batch);
      const detail =
        why ?? `the answer to a post was lost and ${this.base}/latest_example cannot tell whether it landed`;
      this.emit({
        kind: 'unconfirmed',
        groups: batch.length,
        detail: `${detail}; kept aside rather than risk a duplicate`,
      });
    } else {
      // The server will never take these as they are: keep them aside instead of retrying forever.
      this.rejected.push(...batch);
      this.emit({
        kind: 'rejected',
        groups: batch.length,
        status: outcome.rejected.status,
        detail: outcome.rejected.detail.slice(0, 200),
      });
    }
  }

  /**
   * One post. Resolves with what became of the batch; throws (to be retried) only when the batch
   * certainly did not land: an HTTP error answer, or a connection that never reached the server.
   */
  private async post(batch: ScoredGroup[]): Promise<'delivered' | { rejected: HttpError } | 'in-doubt'> {
    try {
      if (batch.length === 1) await this.call('POST', '/scored_data', batch[0]);
      else await this.call('POST', '/scored_data_list', batch);
      return 'delivered';
    } catch (e) {
      if (e instanceof HttpError) {
        if (!retryableStatus(e.status)) return { rejected: e };
        throw e;
      }
      if (e instanceof NetError && e.kind === 'network' && neverSent(e.cause)) throw e;
      return 'in-doubt';
    }
  }

  /** Whether a batch whose answer was lost landed, by the server's latest queued group. Throws while the server cannot say. */
  private async confirm(batch: ScoredGroup[]): Promise<'delivered' | 'lost' | 'unconfirmed'> {
    let latest: unknown;
    try {
      latest = await this.call('GET', '/latest_example', undefined, EXAMPLE_LIMIT);
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) return 'unconfirmed'; // an older server without it
      throw new Error(
        `checking whether the last post landed: ${e instanceof NetError ? e.message : describeFetchError(e)}`,
        { cause: e },
      );
    }
    const id = deliveryIdOf(latest);
    if (id !== null && id === deliveryIdOf(batch.at(-1))) return 'delivered';
    const tokens = (latest as { tokens?: unknown } | null)?.tokens;
    const nothingQueued = id === null && (!Array.isArray(tokens) || tokens.length === 0);
    if (nothingQueued || (id !== null && id === this.lastAcknowledged)) return 'lost';
    return 'unconfirmed';
  }
}
