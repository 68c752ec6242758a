/**
 * The scale-out path: scored groups streamed to a running Atropos trajectory API server, so many
 * collectors (CLI processes, browsers) can feed one real Atropos trainer. Before each group the feed
 * waits for room by Atropos's own rule (`/status-env`: queue_size · group_size < max_batches_offpolicy ·
 * batch_size), so collection slows to the trainer's pace instead of flooding its queue. Delivery,
 * retries and re-registration after a server restart are the client's (src/export/atropos-client.ts),
 * and so are its limits: a wait for room, a registration and a failing delivery each end, saying so,
 * after a stated budget; a group whose delivery cannot be confirmed is set aside, never sent twice.
 * Every group sent is also stored with the run, so nothing the server did not take is lost.
 */
import type { RunConfig } from '../config/schema.ts';
import type { ScoredGroup } from '../contracts.ts';
import { AtroposClient, type AtroposClientOptions, type ClientEvent } from '../export/atropos-client.ts';

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
  /** The client's budgets and timeouts (defaults in atropos-client.ts). */
  client?: Partial<Omit<AtroposClientOptions, 'baseUrl' | 'getWithBody' | 'onEvent'>>;
}

export interface AtroposFeedSummary {
  delivered: number;
  /** Groups the server refused (invalid for it); they are not retried. */
  rejected: number;
  /** Groups whose post lost its answer and that the server could not confirm; not resent (no duplicates). */
  unconfirmed: number;
}

export interface AtroposFeed {
  /** Waits for room in the trainer's queue, then queues the group for delivery. */
  send(group: ScoredGroup): Promise<void>;
  /** Waits until every queued group is delivered or refused. */
  finish(): Promise<AtroposFeedSummary>;
}

export function openAtroposFeed(options: AtroposFeedOptions): AtroposFeed {
  const { config } = options;
  const client = new AtroposClient({ ...options.client, baseUrl: options.url, getWithBody: options.getWithBody, onEvent: options.onEvent });
  const groupSize = config.training.group_size;
  // Atropos counts its batch in sequences; a Spindle update takes batch_size groups.
  const limits = { group_size: groupSize, batch_size: config.training.batch_size * groupSize, max_batches_offpolicy: Math.max(1, config.trajectory_collection.max_offpolicy_updates) };
  let registered: Promise<unknown> | null = null;
  return {
    async send(group) {
      registered ??= client.registerEnv({
        desired_name: config.name, group_size: groupSize,
        max_token_length: options.maxTokenLength ?? Math.max(...group.tokens.map((t) => t.length)),
      });
      await registered;
      await client.waitForCapacity(limits);
      await client.submit(group);
    },
    async finish() {
      try {
        await client.flush();
      } catch (error) {
        client.close();
        throw new Error(`${(error as Error).message} Every collected group is also stored with the run; export the run as Atropos JSONL to send them later.`, { cause: error });
      }
      client.close();
      return { delivered: client.delivered, rejected: client.rejected.length, unconfirmed: client.unconfirmed.length };
    },
  };
}
