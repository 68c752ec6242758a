/**
 * Playground episodes, each in a rollout worker of its own: the path a run's episodes take (agent loop
 * and QuickJS sandbox in the worker, tokens from the engine's generation service), so no sandbox runs on
 * the page or beside the model. The worker lives for one episode: cancelling terminates it, so a
 * runaway tool call cannot outlive the episode, and each episode gets the tokenizer of the policy it uses.
 */
import type { Trajectory } from '../../contracts.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { EpisodeEvent } from '../../rollout/events.ts';
import type { LoadedPolicyModel, PlayEvent, PlayRequest } from './engine-api.ts';
import { EXPERT_GENERATOR, GenerationService, type RemoteGenerator } from './generation.ts';
import type { EpisodeJob } from './rollout-worker.ts';
import { jobEnvironment } from '../../envs/sources.ts';
import type { WorkerHandle } from './worker-pool.ts';

/** A rollout worker whose policy asks `generator` for tokens and tokenises with `tokenizer` (null: the byte tokenizer). */
export type SpawnPlayWorker = (generator: RemoteGenerator, tokenizer: TextTokenizer | null) => WorkerHandle<EpisodeJob, Trajectory, EpisodeEvent>;

/** The rollout job of a playground request: unjudged (the Playground judges as a step of its own), defaults from the default config. */
export function playJob(request: PlayRequest): EpisodeJob {
  const collection = DEFAULT_CONFIG.trajectory_collection;
  return {
    trajectory_id: request.episodeId, run_id: request.runId ?? null, task: request.task, seed: request.seed,
    group_id: request.groupId ?? `${request.task.id}#${request.seed}`, sampling: request.sampling ?? DEFAULT_CONFIG.sampling,
    max_steps: request.maxSteps ?? collection.max_steps_per_trajectory, tool_timeout_ms: collection.tool_timeout_ms,
    policy: request.policy === 'expert' ? 'expert' : 'model', judging: 'none', judges: [], n_judges: null, min_votes: 1,
    ...jobEnvironment(request.task.env),
  };
}

export class PlaygroundEpisodes {
  /** Episodes in flight, each with its cancel. */
  private readonly running = new Map<string, () => void>();

  constructor(private readonly spawn: SpawnPlayWorker) {}

  get size(): number {
    return this.running.size;
  }

  /**
   * Runs `request` with `policy` (null: the scripted expert, which needs no model). What `onEvent`
   * returns (a comlink call's promise, when the listener is on the page) is handed back to the worker,
   * which holds the result until each was delivered: events never arrive after the trajectory.
   */
  async play(request: PlayRequest, policy: LoadedPolicyModel | null, onEvent: (event: PlayEvent) => unknown): Promise<Trajectory> {
    // Cancelling (or the episode ending) gives its generation up too: the engine drops the request, and a
    // forward pass stops at its next token, instead of computing a turn nobody will read.
    const abandon = new AbortController();
    const service = policy ? new GenerationService(() => policy.model, policy.tokenizer) : null;
    const generator: RemoteGenerator = service ? { generate: (request) => service.generate(request, abandon.signal) } : EXPERT_GENERATOR;
    const worker = this.spawn(generator, policy?.tokenizer ?? null);
    const stopped = new Promise<never>((_, reject) => {
      this.running.set(request.episodeId, () => reject(new DOMException('The episode was cancelled.', 'AbortError')));
      worker.onCrash(reject);
    });
    try {
      return await Promise.race([
        worker.run(playJob(request), (event) => {
          if (event.type === 'text' || event.type === 'tool_call' || event.type === 'tool_result') return onEvent(event);
          return undefined;
        }),
        stopped,
      ]);
    } finally {
      this.running.delete(request.episodeId);
      abandon.abort(new DOMException('The episode ended.', 'AbortError'));
      worker.terminate();
    }
  }

  cancel(episodeId: string): void {
    this.running.get(episodeId)?.();
  }
}
