/**
 * What each config field may hold, beyond "same type as the default": allowed values and ranges.
 * Catalog data, kept apart from the validator's logic. Keys are dotted paths into RunConfig.
 */

export type NumberRule =
  | { kind: 'int'; min: number; max: number; nullable?: boolean }
  | { kind: 'number'; min: number; max: number; exclusiveMin?: boolean; nullable?: boolean };

export type FieldRule =
  | { kind: 'enum'; values: readonly string[]; hint?: string }
  // Every number has both bounds: a value far out of range (group_size 1e23) fails here by name, not
  // later in the run as an allocation error.
  | NumberRule
  | { kind: 'string'; pattern?: RegExp; hint?: string; nullable?: boolean }
  | { kind: 'strings'; values?: readonly string[] }
  | { kind: 'range'; min: number; max: number }
  /** A mapping of names to whole numbers in [min, max]. */
  | { kind: 'levels'; min: number; max: number };

/**
 * Fields that were removed because nothing read them: a config that still sets one gets this message
 * instead of "unknown field", so the user knows it never did anything and can delete the line.
 */
export const RETIRED_FIELDS: Record<string, string> = {
  'model.preset': 'a run always loads model.base_model; fresh models are built offline (scripts/base-model)',
  'model.dtype': 'the base is float32 (16-bit projections on WebGPU); model.quantization: int8 holds it in 8 bits',
};

export const FIELD_RULES: Record<string, FieldRule> = {
  seed: { kind: 'int', min: 0, max: Number.MAX_SAFE_INTEGER },
  'model.quantization': {
    kind: 'enum',
    values: ['none', 'int8'],
    hint: 'int8 holds the frozen base in 8 bits per output channel (LoRA); 4-bit formats such as q4_k_m are not implemented',
  },
  'model.backend': { kind: 'enum', values: ['auto', 'webgpu', 'wasm', 'cpu'] },
  'lora.r': { kind: 'int', min: 1, max: 256 },
  'lora.alpha': { kind: 'number', min: 0, max: 4096, exclusiveMin: true },
  'lora.dropout': { kind: 'number', min: 0, max: 0.9 },
  'lora.target_modules': { kind: 'strings' },
  'lora.freeze_layers': {
    kind: 'string',
    pattern: /^\d+(-\d+)?$/,
    hint: 'a layer range like "0-8" or a single layer like "3"',
    nullable: true,
  },
  'training.method': { kind: 'enum', values: ['grpo', 'sft'] },
  'training.max_steps': { kind: 'int', min: 1, max: 1_000_000 },
  'training.batch_size': { kind: 'int', min: 1, max: 1024 },
  'training.group_size': { kind: 'int', min: 2, max: 256 },
  'training.learning_rate': { kind: 'number', min: 0, max: 1, exclusiveMin: true },
  'training.warmup_steps': { kind: 'int', min: 0, max: 1_000_000 },
  'training.optimizer': { kind: 'enum', values: ['adam', 'adamw'] },
  'training.weight_decay': { kind: 'number', min: 0, max: 1 },
  'training.grad_clip': { kind: 'number', min: 0, max: 1000 },
  'training.grad_accum_steps': { kind: 'int', min: 1, max: 1024 },
  'training.epochs': { kind: 'int', min: 1, max: 1000 },
  'training.reward_scale': { kind: 'number', min: 0, max: 1000, exclusiveMin: true },
  'training.checkpoint_every': { kind: 'int', min: 1, max: 1_000_000 },
  'training.eval_interval': { kind: 'int', min: 1, max: 1_000_000 },
  'training.gradient_checkpointing': { kind: 'enum', values: ['auto', 'on', 'off'] },
  'grpo.advantage': { kind: 'enum', values: ['zscore', 'mean'] },
  'grpo.clip_epsilon': { kind: 'number', min: 0, max: 1, exclusiveMin: true },
  'grpo.clip_epsilon_high': { kind: 'number', min: 0, max: 10, exclusiveMin: true, nullable: true },
  'grpo.kl_beta': { kind: 'number', min: 0, max: 100 },
  'grpo.gamma': { kind: 'number', min: 0, max: 1 },
  'grpo.zero_std_groups': { kind: 'enum', values: ['skip', 'replace'] },
  'grpo.iterations': { kind: 'int', min: 1, max: 16 },
  'grpo.loss_normalization': { kind: 'enum', values: ['token', 'sequence'] },
  'sampling.temperature': { kind: 'number', min: 0, max: 100 },
  'sampling.top_k': { kind: 'int', min: 0, max: 1_000_000 },
  'sampling.top_p': { kind: 'number', min: 0, max: 1, exclusiveMin: true },
  'sampling.max_new_tokens': { kind: 'int', min: 1, max: 4096 },
  'replay.capacity': { kind: 'int', min: 0, max: 1_000_000 },
  'replay.online_ratio': { kind: 'number', min: 0, max: 1 },
  'replay.admit_threshold': { kind: 'number', min: 0, max: 1 },
  'curriculum.start_level': { kind: 'int', min: 1, max: 5 },
  'curriculum.window': { kind: 'int', min: 1, max: 1_000_000 },
  'curriculum.advance_threshold': { kind: 'number', min: 0, max: 1 },
  'curriculum.max_level': { kind: 'int', min: 1, max: 5 },
  'curriculum.next_level_share': { kind: 'number', min: 0, max: 1 },
  'process_rewards.tool_success_bonus': { kind: 'number', min: 0, max: 1 },
  'process_rewards.thought_bonus': { kind: 'number', min: 0, max: 1 },
  'process_rewards.thought_min_chars': { kind: 'int', min: 0, max: 100_000 },
  'process_rewards.recovery_bonus': { kind: 'number', min: 0, max: 1 },
  'process_rewards.apply_to': { kind: 'enum', values: ['score', 'turn'] },
  'safety.check_every': { kind: 'int', min: 1, max: 1_000_000 },
  'safety.threshold': { kind: 'number', min: 0, max: 1 },
  'safety.eval_items': { kind: 'int', min: 1, max: 10_000 },
  'safety.capability_ratio': { kind: 'number', min: 0, max: 1 },
  'trajectory_collection.n_workers': { kind: 'int', min: 1, max: 64, nullable: true },
  'trajectory_collection.max_steps_per_trajectory': { kind: 'int', min: 1, max: 100 },
  'trajectory_collection.tool_timeout_ms': { kind: 'int', min: 10, max: 600_000 },
  'trajectory_collection.tools': { kind: 'strings', values: ['js', 'calc', 'sh', 'git'] },
  'trajectory_collection.max_offpolicy_updates': { kind: 'int', min: 0, max: 100 },
  'judge.n_judges': { kind: 'int', min: 1, max: 100, nullable: true },
  'judge.min_votes': { kind: 'int', min: 1, max: 100 },
  'tasks.environments': { kind: 'strings' },
  'tasks.task_file': { kind: 'string', nullable: true },
  'tasks.env_files': { kind: 'strings' },
  'tasks.difficulty_range': { kind: 'range', min: 1, max: 5 },
  'tasks.levels': { kind: 'levels', min: 1, max: 5 },
  'tasks.eval_items': { kind: 'int', min: 1, max: 10_000 },
  'transfer.source_checkpoint': { kind: 'string', nullable: true },
  'transfer.learning_rate_scale': { kind: 'number', min: 0, max: 10, exclusiveMin: true },
};

/** The numeric fields of the remote, rubric and group judges. */
export const JUDGE_NUMBER_RULES: Record<string, NumberRule> = {
  temperature: { kind: 'number', min: 0, max: 2 },
  timeout_ms: { kind: 'int', min: 1, max: 600_000 },
  max_concurrency: { kind: 'int', min: 1, max: 64 },
  max_retries: { kind: 'int', min: 0, max: 20 },
  // Above 0 as well: the rubric judge's own check (its message says what scale means).
  scale: { kind: 'number', min: 0, max: 1000 },
};

export const JUDGE_TYPES = ['rule', 'remote', 'model', 'self', 'rubric', 'group'] as const;
