/**
 * Transfer between environments with frozen layers, as one operation in two halves:
 * - `transferConfig` (`spindle transfer init`): the run config that trains the target
 *   environment from a source with the lower layers frozen and a scaled learning rate;
 * - `transferRunConfig` and `applyTransfer` (`spindle transfer train`): the source's weights go into the
 *   run's model in its loader (a run's latest checkpoint through prepareModel's transfer path, or a PEFT
 *   adapter the caller attached), then the target's frozen layers. The run's trainer keeps those
 *   adapters as they are, so the learning-rate scale goes into `training.learning_rate` up front (the
 *   stored scale then 1).
 */
import type { RunConfig } from '../../config/schema.ts';
import { parseRunConfigYaml, stringifyRunConfig } from '../../config/yaml.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { parseLayerRange } from '../../model/lora.ts';
import type { TransformerModel } from '../../model/transformer.ts';
import { listRuns, loadLatestCheckpoint, type Store } from '../../store/index.ts';
import type { TrainerCheckpoint } from '../../train/checkpoint.ts';
import { prepareModel } from '../../train/model-setup.ts';
import { decodeCheckpoint } from './checkpoint-codec.ts';

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
  base: RunConfig, plan: TransferPlan, file: string, findSource: (sourceEnv: string) => Promise<string | null> = async () => null,
): Promise<{ config: RunConfig; yaml: string }> {
  const source = environment(plan.sourceEnv, 'source environment');
  const target = environment(plan.targetEnv, 'target environment');
  if (!LAYER_RANGE.test(plan.freezeLayers)) throw new Error(`frozen layers "${plan.freezeLayers}" is not a layer range; write it like 0-8 or 0-3,6.`);
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

/** The config the run trains with: the learning rate scaled (the trainer sees the source's adapters already loaded). */
export function transferRunConfig(config: RunConfig): RunConfig {
  const c = structuredClone(config);
  c.training.learning_rate = config.training.learning_rate * config.transfer.learning_rate_scale;
  c.transfer.learning_rate_scale = 1;
  return c;
}

/** Puts the source into the run's model: a checkpoint through prepareModel, or (an adapter already attached) the target's frozen layers. */
export function applyTransfer(model: TransformerModel, config: RunConfig, source: { checkpoint: TrainerCheckpoint } | { adapterAttached: true }): void {
  if ('checkpoint' in source) prepareModel(model, config, source.checkpoint);
  else model.frozenLayers = parseLayerRange(config.lora.freeze_layers, model.config.numLayers);
}
