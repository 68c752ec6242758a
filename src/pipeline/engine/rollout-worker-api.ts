/**
 * The object a rollout worker exposes (web worker or worker_thread): the core with its engine-backed
 * policy. The tokenizer is built locally (the byte tokenizer, or the run model's HF tokenizer from its
 * tokenizer.json) so tokenising never crosses the worker boundary. Model judges (the in-browser ONNX
 * judge) come in through `deps.loadModelJudge`, which each entry point provides for its platform.
 */
import { ByteTokenizer } from '../../tokenizer/byte-tokenizer.ts';
import type { Trajectory } from '../../contracts.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { EpisodeEvent } from '../../rollout/events.ts';
import { EnginePolicy, type RemoteGenerator } from './generation.ts';
import type { EpisodeJob, RolloutSettings } from './rollout-protocol.ts';
import { RolloutWorkerCore, type JudgingDeps } from './rollout-worker.ts';

export interface RolloutWorkerApi {
  /** Once, before the first episode (rollout-protocol.ts): the settings and user environments every episode shares. */
  configure(settings: RolloutSettings): Promise<void>;
  /**
   * `onEvent` (a comlink proxy across the boundary) streams the episode as it runs; runs pass none.
   * Its calls travel on a port of their own, so the result waits until every one was delivered.
   */
  runEpisode(job: EpisodeJob, onEvent?: (event: EpisodeEvent) => unknown): Promise<Trajectory>;
}

export function createRolloutWorkerApi(
  generator: RemoteGenerator,
  policyId: string,
  deps: JudgingDeps = {},
  tokenizer: TextTokenizer = new ByteTokenizer(),
): RolloutWorkerApi {
  const core = new RolloutWorkerCore(new EnginePolicy(policyId, tokenizer, generator), deps);
  return {
    configure: (settings) => core.configure(settings),
    async runEpisode(job, onEvent) {
      const deliveries: unknown[] = [];
      const trajectory = await core.runEpisode(job, onEvent && ((event) => void deliveries.push(onEvent(event))));
      await Promise.all(deliveries);
      return trajectory;
    },
  };
}
