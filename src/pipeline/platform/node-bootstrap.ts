/**
 * The bootstrap flow in Node (`spindle bootstrap`): operations/bootstrap.ts with the Node platform's parts:
 * the policy loaded once and trained in place by SFT and then by the GRPO run (createNodeRun over
 * worker_threads, whose loader hands it the fine-tuned model), judges' keys from the environment, and
 * the model disposed at the end whatever happened.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import {
  bootstrapPolicy,
  checkBootstrapRequest,
  type BootstrapEvent,
  type BootstrapReport,
  type BootstrapSettings,
} from '../operations/bootstrap.ts';
import { createNodeRun } from './node.ts';
import type { NodeModel } from './node-model.ts';
import type { NodeStore } from './node-store.ts';

export interface NodeBootstrapOptions {
  store: NodeStore;
  config: RunConfig;
  environments: EnvironmentSource[];
  settings: BootstrapSettings;
  loadModel: (config: RunConfig) => Promise<NodeModel>;
  signal: AbortSignal;
  onEvent?: (event: BootstrapEvent) => void;
}

export async function bootstrapInNode(options: NodeBootstrapOptions): Promise<BootstrapReport> {
  const { store, config, settings } = options;
  checkBootstrapRequest(config, settings); // before the model loads: a bad request costs nothing
  const model = await options.loadModel(config);
  try {
    return await bootstrapPolicy({
      store,
      config,
      environments: options.environments,
      model,
      baseModel: config.model.base_model,
      settings,
      newRun: (trained) => createNodeRun({ store, loadModel: async () => trained }),
      judging: { getSecret: (name) => process.env[name] ?? null },
      signal: options.signal,
      onEvent: options.onEvent,
    });
  } finally {
    model.model.dispose();
  }
}
