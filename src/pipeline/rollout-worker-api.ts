/**
 * The object a rollout worker exposes (web worker or worker_thread): the core with its engine-backed
 * policy. The byte tokenizer is built locally so tokenising never crosses the worker boundary.
 */
import { ByteTokenizer } from '../model/byte-tokenizer.ts';
import type { Trajectory } from '../contracts.ts';
import { EnginePolicy, type RemoteGenerator } from './generation.ts';
import { RolloutWorkerCore, type EpisodeJob, type JudgingDeps } from './rollout-worker.ts';

export interface RolloutWorkerApi {
  runEpisode(job: EpisodeJob): Promise<Trajectory>;
}

export function createRolloutWorkerApi(generator: RemoteGenerator, policyId: string, deps: JudgingDeps = {}): RolloutWorkerApi {
  const core = new RolloutWorkerCore(new EnginePolicy(policyId, new ByteTokenizer(), generator), deps);
  return { runEpisode: (job) => core.runEpisode(job) };
}
