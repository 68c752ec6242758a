/**
 * Transfer between environments with frozen layers, as one operation in two halves:
 * - `transferConfig` (`spindle transfer init`): the run config that trains the target
 *   environment from a source with the lower layers frozen and a scaled learning rate;
 * - `spindle transfer train`: the run's trainer starts from the source (a run's latest checkpoint,
 *   `checkpointSource`, or a PEFT adapter the run's loader attached) through the one transfer path
 *   (train/model-setup.ts): the model prepared once, the target's layers frozen, the learning rate
 *   scaled there (`transferLearningRate`), the run config stored as written.
 */
import type { RunConfig } from '../../config/schema.ts';
import { parseRunConfigYaml, stringifyRunConfig } from '../../config/yaml.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { listRuns, loadLatestCheckpoint, type Store } from '../../store/index.ts';
import type { TrainerCheckpoint } from '../../train/checkpoint.ts';
import { decodeCheckpoint } from './checkpoint-codec.ts';

/** What `spindle transfer train` says it trains with. */
export { transferLearningRate } from '../../train/model-setup.ts';

export interface TransferPlan {
  sourceEnv: string;
  targetEnv: string;
  /** Inclusive layer ranges kept frozen: `0-8`, `0-3,6`. */
  freezeLayers: string;
  /** A run id or an adapter zip; null when there is none yet. */
  source: string | null;
  learningRateScale?: number;
  maxSteps?: number;
}

const LAYER_RANGE = /^\s*\d+\s*(-\s*\d+\s*)?(,\s*\d+\s*(-\s*\d+\s*)?)*$/;

/** The environment's canonical name; the error names which of the two it was. */
function environment(name: string, which: string): string {
  try {
    return getEnvironment(name).name;
  } catch (e) {
    throw new Error(`${which}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * The transfer run config from `base`, and its YAML (with a header saying how to run it); throws on a bad
 * plan. Without a source in the plan, `findSource` is asked for one for the (checked) source environment.
 */
export async function transferConfig(
  base: RunConfig,
  plan: TransferPlan,
  file: string,
  findSource: (sourceEnv: string) => Promise<string | null> = async () => null,
): Promise<{ config: RunConfig; yaml: string }> {
  const source = environment(plan.sourceEnv, 'source environment');
  const target = environment(plan.targetEnv, 'target environment');
  if (!LAYER_RANGE.test(plan.freezeLayers))
    throw new Error(`frozen layers "${plan.freezeLayers}" is not a layer range; write it like 0-8 or 0-3,6.`);
  const config = structuredClone(base);
  config.name = `transfer-${source}-to-${target}`;
  config.tasks.environments = [target];
  config.lora.freeze_layers = plan.freezeLayers.replace(/\s+/g, '');
  config.transfer.learning_rate_scale = plan.learningRateScale ?? config.transfer.learning_rate_scale;
  config.training.max_steps = plan.maxSteps ?? config.training.max_steps;
  config.transfer.source_checkpoint = plan.source ?? (await findSource(source));
  const yaml = `# transfer ${source} → ${target}: written by \`spindle transfer init\`; run with \`spindle transfer train --config ${file}\`\n${stringifyRunConfig(config)}`;
  const { errors } = parseRunConfigYaml(yaml);
  if (errors.length) throw new Error(`the transfer config is invalid: ${errors[0].message}`);
  return { config, yaml };
}

/** The newest run that trained on `env` and has a checkpoint: a transfer's default source. */
export async function newestRunOn(store: Store, env: string): Promise<string | null> {
  for (const run of await listRuns(store)) {
    if (run.config.tasks.environments.includes(env) && (await loadLatestCheckpoint(store, run.id))) return run.id;
  }
  return null;
}

/** A run's latest checkpoint as a transfer source, or null when the run has none. */
export async function checkpointSource(store: Store, runId: string): Promise<TrainerCheckpoint | null> {
  const record = await loadLatestCheckpoint(store, runId);
  return record ? decodeCheckpoint(record) : null;
}
