/**
 * Demonstrations for SFT, from one of three sources: the environment's own scripted expert, episodes
 * the user already has in the store (a `spindle collect` run, Playground episodes), or a larger model
 * served by an OpenAI-compatible endpoint (rollout/remote-policy.ts). Expert and remote episodes are
 * collected by the one collection (collect.ts) and stored as a run; only the successful ones (the
 * environment's verdict) are kept, since SFT imitates whatever it is given.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { Trajectory } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import type { RemotePolicyOptions } from '../../rollout/remote-policy.ts';
import { iterateTrajectories, type Store } from '../../store/index.ts';
import type { JudgingDeps } from '../engine/rollout-worker.ts';
import { collectGroups } from './collect.ts';

export type DemonstrationSource =
  | { kind: 'expert' }
  /** Successful train-split episodes of the environment already stored; of one run when `runId` is set. */
  | { kind: 'episodes'; runId: string | null }
  | ({ kind: 'remote' } & RemotePolicyOptions);

export interface Demonstrations {
  /** The successful episodes, the ones SFT trains on. */
  good: Trajectory[];
  /** Episodes looked at (collected or read), successful or not. */
  total: number;
  /** The run the collected episodes are stored in (null: they were read, not collected). */
  runId: string | null;
}

export interface DemonstrationRequest {
  store: Store;
  /** Its single environment is the one demonstrated. */
  config: RunConfig;
  source: DemonstrationSource;
  /** Tasks to collect (expert, remote): one episode each. */
  tasks: number;
  judging: JudgingDeps;
  signal: AbortSignal;
  onEpisode?: (done: number, good: number) => void;
}

/** Says which source gave nothing usable, and what to do instead. */
class NoDemonstrationsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoDemonstrationsError';
  }
}

export function describeSource(source: DemonstrationSource): string {
  if (source.kind === 'expert') return "the environment's expert";
  if (source.kind === 'episodes') return source.runId ? `the episodes of run ${source.runId}` : 'your stored episodes';
  return `${source.model} at ${source.baseUrl}`;
}

export async function gatherDemonstrations(request: DemonstrationRequest): Promise<Demonstrations> {
  const { config, source } = request;
  const env = getEnvironment(config.tasks.environments[0]);
  if (source.kind === 'expert' && !env.expert) {
    throw new NoDemonstrationsError(
      `${env.name} has no expert(task), so it cannot demonstrate itself: add an expert to the module, or take demonstrations from your own episodes or from a larger model at an OpenAI-compatible endpoint.`,
    );
  }
  const demos = source.kind === 'episodes' ? await storedEpisodes(request, env.name) : await collected(request);
  if (demos.good.length === 0) {
    const hint =
      source.kind === 'episodes'
        ? `play or collect some that succeed first (\`spindle collect --policy expert\`, or the Playground), or use another source`
        : source.kind === 'remote'
          ? 'check that the model follows the system prompt\'s tool format (<tool_call>{"name": …, "arguments": {…}}</tool_call>), or use a stronger one'
          : 'fix expert(task) so it scores 1 (the Check runs it)';
    throw new NoDemonstrationsError(
      `None of the ${demos.total} demonstrations from ${describeSource(source)} succeeded on ${env.name}, so there is nothing good to fine-tune on: ${hint}.`,
    );
  }
  return demos;
}

/** The policy's own failure an episode ended on (a remote endpoint that timed out or answered junk), or null. */
function policyError(t: Trajectory): string | null {
  if (t.finish_reason !== 'error') return null;
  return (
    t.steps
      .map((s) => s.observation)
      .find((o) => o.startsWith('policy error: '))
      ?.slice('policy error: '.length) ?? null
  );
}

async function collected(request: DemonstrationRequest): Promise<Demonstrations> {
  const { source } = request;
  const remote = source.kind === 'remote' ? source : null;
  // A remote model that fails once (down, timing out, answering junk) would fail every task, each after its
  // timeout: the collection stops at the first such failure and says why.
  const stop = new AbortController();
  const signal = AbortSignal.any([request.signal, stop.signal]);
  let failure: string | null = null;
  let good = 0;
  const summary = await collectGroups({
    store: request.store,
    config: request.config,
    model: null,
    remote,
    groups: request.tasks,
    groupSize: 1,
    runName: `${request.config.name}-demonstrations`,
    judging: request.judging,
    atropos: null,
    signal,
    onGroup: (all) => {
      const last = all[all.length - 1];
      if (last?.success) good++;
      failure ??= remote && last ? policyError(last) : null;
      if (failure) stop.abort();
      request.onEpisode?.(all.length, good);
    },
  });
  if (failure) {
    throw new Error(
      `${failure}. The demonstrations come from ${describeSource(source)}: check that it is up and serves /chat/completions under that address, or raise its timeout.`,
    );
  }
  return {
    good: summary.trajectories.filter((t) => t.success === true),
    total: summary.trajectories.length,
    runId: summary.runId,
  };
}

async function storedEpisodes(request: DemonstrationRequest, env: string): Promise<Demonstrations> {
  const runId = request.source.kind === 'episodes' ? request.source.runId : null;
  const good: Trajectory[] = [];
  let total = 0;
  // Train split only: an evaluation's held-out episodes must never become training data.
  for await (const t of iterateTrajectories(
    request.store,
    { envs: [env], split: 'train', ...(runId ? { run_id: runId } : {}) },
    { pageSize: 200 },
  )) {
    request.signal.throwIfAborted();
    total++;
    if (t.success === true) good.push(t);
  }
  if (total === 0)
    throw new NoDemonstrationsError(
      `There are no stored train-split episodes of ${env}${runId ? ` in run ${runId}` : ''}: collect some first (\`spindle collect --policy expert\`), or use the expert or a remote model.`,
    );
  return { good, total, runId: null };
}
