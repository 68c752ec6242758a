/**
 * Collection in Node (`spindle collect`): the collect operation (operations/collect.ts) with the Node platform's
 * parts: the sizes' defaults (a training batch of groups; one
 * sample per task for the expert, whose episodes do not vary), the model loaded only for the model policy
 * and disposed after, judges' keys from the environment, and Node's GET-with-body for an Atropos server.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { Trajectory } from '../../contracts.ts';
import { nodeGetWithBody } from '../../export/atropos-node.ts';
import { collectGroups, environmentsWithoutExpert, type CollectSummary } from '../operations/collect.ts';
import type { LoadedPolicyModel } from '../engine/engine-api.ts';
import type { NodeStore } from './node-store.ts';

export interface NodeCollectOptions {
  store: NodeStore;
  config: RunConfig;
  policy: 'model' | 'expert';
  /** Tasks to roll out (default: training.batch_size). */
  groups?: number;
  /** Samples per task (default: training.group_size; 1 for the expert). */
  groupSize?: number;
  runName?: string;
  /** Loads the policy model (called only for the model policy). */
  loadModel: (config: RunConfig) => Promise<LoadedPolicyModel>;
  /** Also stream each scored group to this Atropos trajectory API server; `onWait` hears when it holds back or cannot be reached. */
  atropos?: { url: string; onWait?: (what: string) => void } | null;
  signal: AbortSignal;
  /** Before the first group, with how many there will be. */
  onStart?: (groups: number) => void;
  onGroup?: (all: readonly Trajectory[]) => void;
}

/** Collects into a new run of the store; a fired signal stops after the current group, keeping what was collected. */
export async function collectInNode(options: NodeCollectOptions): Promise<CollectSummary> {
  const { config, policy, atropos } = options;
  const groups = options.groups ?? config.training.batch_size;
  const groupSize = options.groupSize ?? (policy === 'expert' ? 1 : config.training.group_size);
  const missing = policy === 'expert' ? environmentsWithoutExpert(config) : [];
  if (missing.length) throw new Error(`Environment "${missing[0]}" has no scripted expert; use --policy model.`);
  const model = policy === 'model' ? await options.loadModel(config) : null;
  options.onStart?.(groups);
  try {
    return await collectGroups({
      store: options.store,
      config,
      model,
      groups,
      groupSize,
      signal: options.signal,
      runName: options.runName ?? `${config.name}-collect`,
      judging: { getSecret: (name) => process.env[name] ?? null },
      atropos: atropos
        ? {
            url: atropos.url,
            getWithBody: nodeGetWithBody,
            onEvent: (e) => {
              if (e.kind === 'waiting-for-trainer' || e.kind === 'unreachable')
                atropos.onWait?.(e.kind.replace(/-/g, ' '));
            },
          }
        : null,
      onGroup: options.onGroup,
    });
  } finally {
    model?.model.dispose();
  }
}
