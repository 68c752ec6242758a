/**
 * The object a rollout worker exposes (web worker or worker_thread): the core with its engine-backed
 * policy. The tokenizer is built locally (the byte tokenizer, or the run model's HF tokenizer from its
 * tokenizer.json) so tokenising never crosses the worker boundary. Model judges (the in-browser ONNX
 * judge) come in through `deps.loadModelJudge`, which each entry point provides for its platform.
 */
import { ByteTokenizer } from '../model/byte-tokenizer.ts';
import type { Trajectory } from '../contracts.ts';
import type { TextTokenizer } from '../model/tokenizer.ts';
import { EnginePolicy, type RemoteGenerator } from './generation.ts';
import { RolloutWorkerCore, type EpisodeJob, type JudgingDeps } from './rollout-worker.ts';

export interface RolloutWorkerApi {
  runEpisode(job: EpisodeJob): Promise<Trajectory>;
}

export function createRolloutWorkerApi(
  generator: RemoteGenerator, policyId: string, deps: JudgingDeps = {}, tokenizer: TextTokenizer = new ByteTokenizer(),
): RolloutWorkerApi {
  const core = new RolloutWorkerCore(new EnginePolicy(policyId, tokenizer, generator), deps);
  return { runEpisode: (job) => core.runEpisode(job) };
}
