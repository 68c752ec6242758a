/**
 * The scale-out path: scored groups streamed to a running Atropos trajectory API server, so many
 * collectors (CLI processes, browsers) can feed one real Atropos trainer. Before each group the feed
 * waits for room by Atropos's own rule (`/status-env`: queue_size · group_size < max_batches_offpolicy ·
 * batch_size), so collection slows to the trainer's pace instead of flooding its queue. Delivery,
 * retries and re-registration after a server restart are the client's (src/export/atropos-client.ts),
 * and so are its limits: a wait for room, a registration and a failing delivery each end, saying so,
 * after a stated budget; a group whose delivery cannot be confirmed is set aside, never sent twice.
 * Every group sent is also stored with the run, so nothing the server did not take is lost.
 *
 * The summary says exactly what became of each group: delivered (acknowledged by the server), refused,
 * unknown (its post may or may not have landed), or not sent (a Ctrl-C, or delivery gave up). `signal`
 * (the CLI's first Ctrl-C) ends every wait at once: a group not yet queued is counted as not sent, and
 * `finish` returns without waiting for the rest.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { ScoredGroup } from '../../contracts.ts';
import {
  AtroposClient,
  AtroposInterrupted,
  type AtroposClientOptions,
  type ClientEvent,
} from '../../export/atropos-client.ts';

export interface AtroposFeedOptions {
  /** The trajectory API server, e.g. http://127.0.0.1:8000. */
  url: string;
  /** The run whose groups are sent: its name registers the env, its sizes set the backpressure limits. */
  config: RunConfig;
  /** The policy's context window (register-env's max_token_length); null: the first group's longest sequence. */
  maxTokenLength: number | null;
  /** Node's GET-with-body for `/status-env` (browsers fall back to `/status`). */
  getWithBody?: AtroposClientOptions['getWithBody'];
  onEvent?: (event: ClientEvent) => void;
  /** A user's stop (Ctrl-C): every wait and request ends at once. */
  signal?: AbortSignal;
  /** The client's budgets and timeouts (defaults in atropos-client.ts). */
  client?: Partial<Omit<AtroposClientOptions, 'baseUrl' | 'getWithBody' | 'onEvent' | 'signal'>>;
}

export interface AtroposFeedSummary {
  /** Groups the server acknowledged (or showed queued at /latest_example after their answer was lost). */
  delivered: number;
  /** Groups the server refused (invalid for it); they are not retried. */
  rejected: number;
  /** Groups whose delivery is unknown: their post may have landed (its answer was lost, or it was in flight at a stop); not resent. */
  unconfirmed: number;
  /** Groups never sent: a stop came first, or delivery gave up. */
  unsent: number;
  /** Why delivery ended before every group was sent (interrupted, or the delivery budget ran out); null otherwise. */
  stopped: string | null;
}

export interface AtroposFeed {
  /** Waits for room in the trainer's queue, then queues the group for delivery; after a stop, counts it as not sent. */
  send(group: ScoredGroup): Promise<void>;
  /**
   * Waits until every queued group is delivered, refused or set aside, or delivery stops; says what became
   * of them. With `wait: false` (a failed collection) it stops delivery at once and counts the rest as not sent.
   */
  finish(options?: { wait?: boolean }): Promise<AtroposFeedSummary>;
}

/** Whether every group reached the server and was taken. */
export const deliveredAll = (s: AtroposFeedSummary) => s.rejected + s.unconfirmed + s.unsent === 0;

/** What became of the groups, in one sentence (the CLI's and the app's report). */
export function describeDelivery(s: AtroposFeedSummary, url: string): string {
  if (deliveredAll(s)) return `sent ${s.delivered} scored groups to ${url}`;
  const total = s.delivered + s.rejected + s.unconfirmed + s.unsent;
  const parts = [
    s.rejected && `${s.rejected} refused by the server`,
    s.unconfirmed &&
      `${s.unconfirmed} unknown (the answer to their post was lost or never came; ` +
        'they may have landed, and are not sent again)',
    s.unsent && `${s.unsent} not sent`,
  ].filter(Boolean);
  const why = s.stopped ? `; ${s.stopped.replace(/\.$/, '')}` : '';
  return (
    `Atropos at ${url} took ${s.delivered} of ${total} scored groups: ${parts.join(', ')}${why}. ` +
    'Every collected group is also stored with the run; export the run as Atropos JSONL to send the rest later.'
  );
}

export function openAtroposFeed(options: AtroposFeedOptions): AtroposFeed {
  const { config, signal } = options;
  const client = new AtroposClient({
    ...options.client,
    baseUrl: options.url,
    getWithBody: options.getWithBody,
    onEvent: options.onEvent,
    signal,
  });
  const groupSize = config.training.group_size;
  // Atropos counts its batch in sequences; a Spindle update takes batch_size groups.
  const limits = {
    group_size: groupSize,
    batch_size: config.training.batch_size * groupSize,
    max_batches_offpolicy: Math.max(1, config.trajectory_collection.max_offpolicy_updates),
  };
  let registered: Promise<unknown> | null = null;
  let unsent = 0;
  let stopped: string | null = null;
  return {
    async send(group) {
      try {
        if (signal?.aborted) throw new AtroposInterrupted('collecting');
        registered ??= client.registerEnv({
          desired_name: config.name,
          group_size: groupSize,
          max_token_length: options.maxTokenLength ?? Math.max(...group.tokens.map((t) => t.length)),
        });
        await registered;
        await client.waitForCapacity(limits);
        await client.submit(group);
      } catch (error) {
        unsent++;
        stopped ??= (error as Error).message;
        if (!(error instanceof AtroposInterrupted)) throw error;
      }
    },
    async finish({ wait = true } = {}) {
      try {
        if (wait) await client.flush();
      } catch (error) {
        stopped ??= (error as Error).message;
      }
      unsent += client.close().length;
      return {
        delivered: client.delivered,
        rejected: client.rejected.length,
        unconfirmed: client.unconfirmed.length,
        unsent,
        stopped,
      };
    },
  };
}
