/**
 * Group rollouts: n samples of one task sharing a `group_id` (the G of GRPO), each with its own seed
 * derived from a base seed, so the whole group replays from (base seed, task).
 */
import type { Trajectory } from '../contracts.ts';
import { deriveSeed } from '../rng.ts';
import { runEpisode, type EpisodeOptions } from './episode.ts';
import type { EpisodeEvent } from './events.ts';

export interface GroupOptions extends Omit<EpisodeOptions, 'seed' | 'groupId' | 'onEvent'> {
  /** Samples in the group. */
  n: number;
  /** Seed of sample i: deriveSeed(baseSeed, task.id, i). */
  baseSeed: number;
  /** Default: a fresh unique id. */
  groupId?: string;
  /** Episodes run at once (a local model usually wants 1). */
  concurrency?: number;
  onEvent?: (sample: number, event: EpisodeEvent) => void;
}

/** The sampling seeds a group uses, in sample order. */
export function groupSeeds(baseSeed: number, taskId: string, n: number): number[] {
  return Array.from({ length: n }, (_, i) => deriveSeed(baseSeed, taskId, i));
}

export async function runGroup(options: GroupOptions): Promise<Trajectory[]> {
  const { n, baseSeed, concurrency = 1, onEvent, ...episode } = options;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`group size n must be a positive integer, got ${n}`);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  const groupId = options.groupId ?? globalThis.crypto.randomUUID();
  const seeds = groupSeeds(baseSeed, options.task.id, n);
  const results: Trajectory[] = new Array(n);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      results[i] = await runEpisode({
        ...episode,
        seed: seeds[i],
        groupId,
        onEvent: onEvent ? (e) => onEvent(i, e) : undefined,
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return results;
}

/**
 * The sampling seed of sample i of group g at a training step (collection: step -1): from the config's
 * seed and these indices only, never a run id or a clock, so the same config and seed sample the same
 * episodes in every run.
 */
export function episodeSeed(seed: number, step: number, group: number, sample: number): number {
  return deriveSeed(seed, 'episode', step, group, sample);
}
