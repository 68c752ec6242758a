/**
 * The settings the Train screen's form shows, as data: each is a dotted path into the run config with
 * how to edit it. ConfigForm.svelte draws one Field per entry, so a setting is added here, once.
 */
import type { RunConfig } from '../../../config/schema.ts';

export interface FormField {
  label: string;
  path: string;
  kind?: 'text' | 'number' | 'select' | 'checkbox';
  options?: string[];
  step?: string;
  min?: number;
  hint?: string;
}

/** The grid of common settings, in the order shown. */
export const GRID_FIELDS: readonly FormField[] = [
  { label: 'Run name', path: 'name' },
  { label: 'Method', path: 'training.method', kind: 'select', options: ['grpo', 'sft'] },
  { label: 'Base model', path: 'model.base_model' },
  { label: 'Backend', path: 'model.backend', kind: 'select', options: ['auto', 'webgpu', 'wasm', 'cpu'] },
  { label: 'Steps', path: 'training.max_steps', kind: 'number', min: 1 },
  { label: 'Learning rate', path: 'training.learning_rate', kind: 'number', step: 'any' },
  { label: 'Tasks per update', path: 'training.batch_size', kind: 'number', min: 1 },
  { label: 'Group size (G)', path: 'training.group_size', kind: 'number', min: 1, hint: 'samples per task' },
  { label: 'Clip ε', path: 'grpo.clip_epsilon', kind: 'number', step: 'any' },
  { label: 'KL β', path: 'grpo.kl_beta', kind: 'number', step: 'any', hint: '0 turns KL off' },
  { label: 'Temperature', path: 'sampling.temperature', kind: 'number', step: 'any' },
  { label: 'LoRA rank', path: 'lora.r', kind: 'number', min: 1 },
];

/** The switches under the grid. */
export const CHECK_FIELDS: readonly FormField[] = [
  { label: 'Curriculum', path: 'curriculum.enabled', kind: 'checkbox' },
  { label: 'Safety monitor', path: 'safety.enabled', kind: 'checkbox' },
  { label: 'Process rewards', path: 'process_rewards.enabled', kind: 'checkbox' },
];

/** The config's value at a dotted path. */
export function valueAt(config: RunConfig, path: string): unknown {
  return path.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], config);
}
