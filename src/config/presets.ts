/**
 * Named presets: partial configs. `spindle config init --preset` merges one onto the defaults; the app's
 * Train screen applies one to the config being edited, changing only the settings it names (the judges
 * you switched on, your base model and the rest stay). Catalog data; the form and the CLI both list these.
 */
import { parseDocument, type Document } from 'yaml';
import type { RunConfig } from './schema.ts';
import { validateRunConfig } from './validate.ts';
import { formatConfigErrors, parseRunConfigYaml, type ParseOptions } from './yaml.ts';

type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K];
};

export interface Preset {
  description: string;
  config: DeepPartial<RunConfig>;
  /** A workflow a run (the Train screen, `spindle train`) does not do: the CLI command that does; the app does not offer it. */
  cli?: string;
}

export const PRESETS: Record<string, Preset> = {
  demo: {
    description: 'A minute-long GRPO run on arith_tool for watching the loop work.',
    config: {
      name: 'demo',
      training: { max_steps: 10, batch_size: 2, group_size: 4, checkpoint_every: 5, eval_interval: 5 },
      tasks: { environments: ['arith_tool'], eval_items: 8 },
    },
  },
  'watch-it-learn': {
    description:
      'GRPO on arith_tool level 3, where the shipped model is right on about 60% of the items greedy (it sometimes answers without its calc tool or miscopies an operand): held-out success before the first update and every 10 updates (about 2 minutes on 2 cores with wasm).',
    config: {
      name: 'watch-it-learn',
      training: {
        max_steps: 40,
        batch_size: 1,
        group_size: 8,
        learning_rate: 5e-4,
        warmup_steps: 3,
        eval_interval: 10,
      },
      // Fixed level and no rollbacks, so the held-out curve shows learning alone.
      curriculum: { enabled: false },
      safety: { enabled: false },
      tasks: { environments: ['arith_tool'], difficulty_range: [3, 3], eval_items: 32 },
    },
  },
  'chain-calls': {
    description:
      'An agent learning a longer chain: GRPO on func_trace level 2, where the answer takes three dependent calls (read the asked function with sh, then the function its file names, then run both in js; some items leave the second file unnamed, so the first run fails with an error naming the function to read) and the shipped model is right on about a third of the items greedy, stopping early or miscopying a name on the rest; held-out success on 128 items before the first update and every 10 updates (31% → 50%, the intervals apart, in 30 updates).',
    config: {
      name: 'chain-calls',
      training: {
        max_steps: 30,
        batch_size: 1,
        group_size: 8,
        learning_rate: 1e-3,
        warmup_steps: 3,
        eval_interval: 10,
      },
      curriculum: { enabled: false },
      safety: { enabled: false },
      // Three calls, a retry after the designed failure, the reads it needs and the answer fit in 12 turns.
      trajectory_collection: { max_steps_per_trajectory: 12 },
      // 128 items: on 64 the rise from about a third to a half had overlapping intervals.
      tasks: { environments: ['func_trace'], difficulty_range: [2, 2], eval_items: 128 },
    },
  },
  'arith-grpo': {
    description:
      'Online GRPO on arith_tool levels 1–3 from the shipped model, the curriculum moving it up a level as it succeeds.',
    config: {
      name: 'arith-grpo',
      training: { max_steps: 60, batch_size: 4, group_size: 8 },
      tasks: { environments: ['arith_tool'], difficulty_range: [1, 3] },
    },
  },
  sft: {
    description: 'Supervised fine-tuning on exported trajectories (their successes by default): SFT first, then RL.',
    config: { name: 'sft', training: { method: 'sft', epochs: 3, learning_rate: 1e-3 } },
    cli: 'spindle sft --config sft.yaml --data trajectories/',
  },
  transfer: {
    description: 'Transfer between environments, shell_exec → git_repo, with the lower layers frozen.',
    config: {
      name: 'transfer',
      lora: { freeze_layers: '0-1' },
      tasks: { environments: ['git_repo'] },
      transfer: { learning_rate_scale: 0.3 },
    },
    cli: 'spindle transfer init, then spindle transfer train',
  },
};

/**
 * What the Train screen opens on and `spindle config init` writes when no preset is named: the preset
 * whose run shows an agent learning a skill (a three-call chain), with held-out intervals that separate.
 */
export const DEFAULT_PRESET = 'chain-calls';

export function presetConfig(name: string): RunConfig {
  const { config, errors } = validateRunConfig(preset(name).config);
  if (!config) throw new Error(`Preset "${name}" is invalid: ${errors.map((e) => e.message).join(' ')}`);
  return config;
}

function preset(name: string): Preset {
  const found = PRESETS[name];
  if (!found) throw new Error(`Unknown preset "${name}". Presets: ${Object.keys(PRESETS).join(', ')}.`);
  return found;
}

/** The settings a preset names, as dotted paths and their values (a list is one value): all that applying it changes. */
export function presetSettings(name: string): [string, unknown][] {
  const out: [string, unknown][] = [];
  const walk = (value: unknown, path: string[]) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key]);
    } else out.push([path.join('.'), value]);
  };
  walk(preset(name).config, []);
  return out;
}

/**
 * A run config's YAML with the preset's settings written into it, every other line as it was (comments
 * too); throws with the validator's messages when the result is not a valid config.
 */
export function applyPresetToYaml(text: string, name: string, options: ParseOptions = {}): string {
  const doc: Document = parseDocument(text);
  if (doc.errors.length) throw new Error(`The config is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  if (doc.contents === null) doc.contents = doc.createNode({});
  for (const [path, value] of presetSettings(name))
    doc.setIn(path.split('.'), doc.createNode(value, { flow: Array.isArray(value) }));
  const updated = doc.toString({ lineWidth: 0 });
  const check = parseRunConfigYaml(updated, options);
  if (check.errors.length) throw new Error(formatConfigErrors(check.errors));
  return updated;
}
