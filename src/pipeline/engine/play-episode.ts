/**
 * Playground episodes, each in a rollout worker of its own: the path a run's episodes take (agent loop
 * and QuickJS sandbox in the worker, tokens from the engine's generation service), so no sandbox runs on
 * the page or beside the model. The worker lives for one episode: cancelling terminates it, so a
 * runaway tool call cannot outlive the episode, and each episode gets the tokenizer of the policy it uses.
 */
import type { Trajectory } from '../../contracts.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { LoadedPolicyModel, PlayEvent, PlayRequest } from './engine-api.ts';
import { EXPERT_GENERATOR, GenerationService, type RemoteGenerator } from './generation.ts';
import { installedSources } from '../../envs/sources.ts';
import { configuredWorker, type EpisodeJob, type RolloutSettings, type RolloutWorker } from './rollout-protocol.ts';

/** A rollout worker whose policy asks `generator` for tokens and tokenises with `tokenizer` (null: the byte tokenizer). */
export type SpawnPlayWorker = (generator: RemoteGenerator, tokenizer: TextTokenizer | null) => RolloutWorker;

/**
 * The settings of a playground request's worker (it runs that one episode): the default config's
 * budgets with the request's turn limit, no judges (the Playground judges as a step of its own), and the
 * task's environment's source when it is a user's.
 */
export function playSettings(request: PlayRequest): RolloutSettings {
  const collection = DEFAULT_CONFIG.trajectory_collection;
  return {
    run_id: request.runId ?? null,
    max_steps: request.maxSteps ?? collection.max_steps_per_trajectory,
    tool_timeout_ms: collection.tool_timeout_ms,
    tools: [],
    judges: [],
    n_judges: null,
    min_votes: 1,
    verifier_gate: true,
    environments: installedSources([request.task.env]),
  };
}

/** The rollout job of a playground request: the id the page chose for it, unjudged. */
export function playJob(request: PlayRequest): EpisodeJob {
  return {
    trajectory_id: request.episodeId,
    group_id: request.groupId ?? `${request.task.id}#${request.seed}`,
    task: request.task,
    seed: request.seed,
    sampling: request.sampling ?? DEFAULT_CONFIG.sampling,
    policy: request.policy === 'expert' ? 'expert' : 'model',
    judging: 'none',
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
  async play(
    request: PlayRequest,
    policy: LoadedPolicyModel | null,
    onEvent: (event: PlayEvent) => unknown,
  ): Promise<Trajectory> {
    // Cancelling (or the episode ending) gives its generation up too: the engine drops the request, and a
    // forward pass stops at its next token, instead of computing a turn nobody will read.
    const abandon = new AbortController();
    const service = policy ? new GenerationService(() => policy.model, policy.tokenizer) : null;
    const generator: RemoteGenerator = service
      ? {
          generate: (request) => service.generate(request, abandon.signal),
          release: (episode) => service.release(episode),
        }
      : EXPERT_GENERATOR;
    const worker = configuredWorker(this.spawn(generator, policy?.tokenizer ?? null), playSettings(request));
    const stopped = new Promise<never>((_, reject) => {
      this.running.set(request.episodeId, () => reject(new DOMException('The episode was cancelled.', 'AbortError')));
      worker.onCrash(reject);
    });
    try {
      return await Promise.race([
        worker.run(playJob(request), (event) => {
          if (event.type === 'text' || event.type === 'tool_call' || event.type === 'tool_result')
            return onEvent(event);
          return undefined;
        }),
        stopped,
      ]);
    } finally {
      this.running.delete(request.episodeId);
      abandon.abort(new DOMException('The episode ended.', 'AbortError'));
      worker.terminate();
      // A cancelled episode's worker is gone before it could release its turn cache: cleared once the
      // engine has ended the forward pass it may still run for it.
      if (service) void service.idle().then(() => service.turnCaches?.clear());
    }
  }

  cancel(episodeId: string): void {
    this.running.get(episodeId)?.();
  }
}
