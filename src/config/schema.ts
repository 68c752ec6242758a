/**
 * The run config: one typed object with defaults for everything. The YAML file uses the same keys
 * and sections (model, training, trajectory_collection, judge, tasks and the rest). It is saved with
 * every run and every exported adapter.
 */
import type { CalibrationMap } from './calibration.ts';
import type { VerifierConfig } from './verifier.ts';

export type JudgeConfig =
  | { type: 'rule'; id: string }
  | (JudgeEndpointConfig & {
      /** A remote judge (src/judge/remote.ts): an LLM scores each trajectory on the five-dimension rubric (rubric-dimensions.ts). */
      type: 'remote';
    })
  | { type: 'model'; id: string; path: string }
  | { type: 'self'; id: string }
  | (JudgeEndpointConfig & {
      /** A rubric judge (src/judge/rubric.ts): an LLM grades each trajectory against named, weighted criteria, reasoning first. */
      type: 'rubric';
      criteria: RubricCriterionConfig[];
      /** Points each criterion is scored out of (e.g. 5). */
      scale: number;
    })
  | (JudgeEndpointConfig & {
      /** A group judge (src/judge/group-judge.ts): one call scores every trajectory of a GRPO group against the others. */
      type: 'group';
      /** What a good trajectory does, in the judge's words; '' for the built-in one. */
      rubric: string;
    });

/** One criterion of a rubric judge: its name, what earns the points, its weight in the score (≥ 0). */
export interface RubricCriterionConfig {
  name: string;
  description: string;
  weight: number;
}

/** The OpenAI-compatible endpoint fields of the remote, rubric and group judges. */
export interface JudgeEndpointConfig {
  id: string;
  base_url: string;
  model: string;
  /** Name of the setting (browser) or environment variable (CLI) holding the key; the key itself is never in the config. */
  api_key_env: string | null;
  temperature: number;
  timeout_ms: number;
  max_concurrency: number;
  max_retries: number;
}

/** A task file's verifier (`tasks.verifier`): config/verifier.ts. */
export type { VerifierConfig };
/** A judge's calibration map (`judge.calibration`): config/calibration.ts. */
export type { CalibrationMap };

export interface RunConfig {
  name: string;
  seed: number;
  model: {
    /** A shipped model name (`spindle-base`), a `models/` folder, a Hugging Face layout URL or path. */
    base_model: string;
    /**
     * `none` (the base as loaded: float32, or 16-bit projections on WebGPU) or `int8` (the frozen
     * projections in 8 bits with a float32 scale per output channel, a quarter of their float32 memory;
     * LoRA only; src/model/int8.ts). 4-bit formats such as q4_k_m are not implemented and are refused
     * by name.
     */
    quantization: 'none' | 'int8';
    backend: 'auto' | 'webgpu' | 'wasm' | 'cpu';
  };
  lora: {
    r: number;
    alpha: number;
    dropout: number;
    target_modules: string[];
    /** Layer range whose weights stay frozen, e.g. `0-8`; null freezes none. */
    freeze_layers: string | null;
  };
  training: {
    method: 'grpo' | 'sft';
    max_steps: number;
    /** Groups (tasks) per update. */
    batch_size: number;
    /** Samples per task: the G of GRPO. */
    group_size: number;
    learning_rate: number;
    warmup_steps: number;
    optimizer: 'adam' | 'adamw';
    weight_decay: number;
    grad_clip: number;
    grad_accum_steps: number;
    /** SFT only. */
    epochs: number;
    /** Multiplies the judge score before advantages (e.g. 2.5). */
    reward_scale: number;
    /** Keep the checkpoint of every N-th update besides the latest two (a run checkpoints after every update to resume). */
    checkpoint_every: number;
    eval_interval: number;
    /** Held-out evaluation before the first update too: the baseline every later figure is read against. */
    eval_at_start: boolean;
    /**
     * Gradient checkpointing per transformer block (src/model/recompute.ts): keep each block's input and
     * recompute the block in the backward pass, for the time of a second forward pass. 'auto' turns it
     * on for a micro-batch whose plain step the memory estimate puts over 3 GiB (src/model/memory.ts).
     */
    gradient_checkpointing: 'auto' | 'on' | 'off';
  };
  grpo: {
    advantage: 'zscore' | 'mean';
    clip_epsilon: number;
    /** Upper clip (DAPO's clip-higher); null uses `clip_epsilon`. */
    clip_epsilon_high: number | null;
    /** KL coefficient to the reference policy (LoRA disabled); 0 turns KL off. */
    kl_beta: number;
    /** Discount for per-step returns. */
    gamma: number;
    zero_std_groups: 'skip' | 'replace';
    /**
     * Optimizer steps on each collected batch (the GRPO paper's μ, TRL's `num_iterations`). Above 1 the
     * later passes are off-policy against the sampling log-probs and the clip bounds how far they move;
     * rollouts, not updates, are the expensive part on a CPU, so reusing them learns more per second.
     */
    iterations: number;
    /**
     * How the per-token losses of an update are averaged. 'token': over every assistant token of the
     * update (DAPO; TRL's `dapo`), so a long episode weighs in proportion to its length; 'sequence': within
     * each episode first, then over episodes (the GRPO paper's), so every episode weighs the same.
     */
    loss_normalization: 'token' | 'sequence';
  };
  sampling: { temperature: number; top_k: number; top_p: number; max_new_tokens: number };
  replay: {
    capacity: number;
    /** Share of each batch from fresh rollouts; the rest comes from the replay buffer. */
    online_ratio: number;
    /** Successful trajectories (the environment's verdict) whose judge score exceeds this enter the buffer. */
    admit_threshold: number;
  };
  curriculum: {
    enabled: boolean;
    start_level: number;
    window: number;
    advance_threshold: number;
    max_level: number;
    /**
     * The share of an environment's groups drawn one level above its current one. A policy trained at one
     * level only learns that level's length (two calls, then the answer) and meets the next having
     * unlearned the extra call; groups from the next level keep it in every batch, where they have
     * spread while that level is partly solved. Only the current level's episodes count toward advancing.
     */
    next_level_share: number;
  };
  process_rewards: {
    enabled: boolean;
    tool_success_bonus: number;
    thought_bonus: number;
    thought_min_chars: number;
    /** Bonus for a retry that works: the first tool call without an error after a failed call. */
    recovery_bonus: number;
    /** Where the bonuses count: folded into the score a group is ranked by, or credited to the turn that earned them. */
    apply_to: 'score' | 'turn';
  };
  safety: {
    enabled: boolean;
    check_every: number;
    /** Relative drop that counts as a regression (0.05 = 5%), when it is also beyond the evaluation's noise. */
    threshold: number;
    eval_items: number;
    rollback: boolean;
    /** Share of capability (replay/SFT) data after a regression. */
    capability_ratio: number;
  };
  trajectory_collection: {
    /** null: from the machine (`navigator.hardwareConcurrency`, `os.availableParallelism()`). */
    n_workers: number | null;
    max_steps_per_trajectory: number;
    tool_timeout_ms: number;
    /** Sandbox tools offered in every episode besides each environment's own; names from js, calc, sh, git. */
    tools: string[];
    /** Rollouts stay at most this many updates ahead of the trainer (Atropos's max_batches_offpolicy). */
    max_offpolicy_updates: number;
    /**
     * The same config and seed give the same episodes and weights however many workers run them. Rollouts
     * running ahead of the trainer (max_offpolicy_updates) would see the weights change at a moment timing
     * decides, so on: none run ahead. Turns of concurrent episodes are still batched on wasm, where a row
     * samples bit for bit what it samples alone (GenerationService.forRun); on other backends each turn
     * then runs alone. Off: batching everywhere and max_offpolicy_updates ahead.
     */
    reproducible: boolean;
  };
  judge: {
    judges: JudgeConfig[];
    /** How many of the listed judges vote on each trajectory; null: all of them. */
    n_judges: number | null;
    /** Fewer usable votes than this gives a null score. */
    min_votes: number;
    /**
     * Where the environment can verify (its evaluate gives a number), the judges shape the score only
     * inside its verdict: a failure never outscores a success, nor gets a positive advantage in a group
     * that succeeded (src/judge/verifier-gate.ts). false: the judges' score as it is (the run warns).
     */
    verifier_gate: boolean;
    /**
     * Judge id → the map its raw scores pass through before they are combined (each vote keeps its
     * raw score); judges without one count as they score. A saved calibration's maps: `spindle
     * calibrate` writes one, `--calibration FILE` or the Judges screen brings it into a run.
     */
    calibration: Record<string, CalibrationMap>;
  };
  tasks: {
    environments: string[];
    /**
     * A task file (JSONL, JSON, CSV, TSV or Parquet rows of prompt and answer),
     * trained on as an environment named after the file (`my-tasks.jsonl` → `my_tasks`). CLI: a path
     * relative to the working directory; the app loads files on the Environments screen instead.
     */
    task_file: string | null;
    /** JavaScript environment modules (envs/module-env.ts) to load and train on, as paths; the same rules as task_file. */
    env_files: string[];
    /**
     * How a task file's answers are checked (src/envs/task-file/verifiers.ts): a verifier name
     * (`number`) or a mapping with its settings; null: each row's own `verifier`, else `exact`.
     */
    verifier: VerifierConfig | null;
    difficulty_range: [number, number];
    /**
     * A fixed level per environment (e.g. `{arith_tool: 3}`), inside difficulty_range: where that
     * environment trains while the curriculum is off, and where it is evaluated. Unlisted environments
     * use the range's low end.
     */
    levels: Record<string, number>;
    /** Held-out items per environment for evaluation. */
    eval_items: number;
  };
  transfer: { source_checkpoint: string | null; learning_rate_scale: number };
}

export const DEFAULT_CONFIG: RunConfig = {
  name: 'run',
  seed: 1,
  model: { base_model: 'spindle-base', quantization: 'none', backend: 'auto' },
  lora: {
    r: 8,
    alpha: 16,
    dropout: 0,
    target_modules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    freeze_layers: null,
  },
  training: {
    method: 'grpo',
    max_steps: 100,
    batch_size: 4,
    group_size: 8,
    learning_rate: 2e-3,
    warmup_steps: 5,
    optimizer: 'adamw',
    weight_decay: 0,
    grad_clip: 1,
    // GRPO splits each update into this many micro-batches (same update, less memory: tfjs-wasm has a
    // 4 GB heap, and long episodes × a full group overflow it in one pass).
    grad_accum_steps: 4,
    epochs: 3,
    reward_scale: 1,
    checkpoint_every: 10,
    eval_interval: 20,
    eval_at_start: true,
    // auto: small models train at full speed; a step that would not fit in wasm's heap recomputes.
    gradient_checkpointing: 'auto',
  },
  // γ 1: every turn of an episode gets its group advantage. In the credit ablation (bench:credit, README
  // "Agents") discounting by 0.9 cost 5 points of held-out gain, and per-turn process rewards won them back
  // without beating plain trajectory-level credit beyond the spread of three seeds. A γ of 0.99 is within 5% of it.
  grpo: {
    advantage: 'zscore',
    clip_epsilon: 0.2,
    clip_epsilon_high: null,
    kl_beta: 0,
    gamma: 1,
    zero_std_groups: 'skip',
    iterations: 1,
    loss_normalization: 'token',
  },
  // 128: a byte-level js/sh call with its <think> takes 100–130 tokens (text_reverse's does not fit in 96).
  sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 128 },
  replay: { capacity: 10_000, online_ratio: 0.7, admit_threshold: 0 },
  curriculum: {
    enabled: true,
    start_level: 1,
    window: 100,
    advance_threshold: 0.75,
    max_level: 5,
    next_level_share: 0,
  },
  process_rewards: {
    enabled: false,
    tool_success_bonus: 0.05,
    thought_bonus: 0.02,
    thought_min_chars: 50,
    recovery_bonus: 0,
    apply_to: 'score',
  },
  safety: { enabled: true, check_every: 20, threshold: 0.05, eval_items: 32, rollback: true, capability_ratio: 0.5 },
  // 8 turns: a level-1 to 3 multi-step task with a retry and its answer. Longer tasks raise it (the loop allows 100):
  // the shipped base's 2,048 positions hold about 35 median multi-step turns.
  trajectory_collection: {
    n_workers: null,
    max_steps_per_trajectory: 8,
    tool_timeout_ms: 2000,
    tools: [],
    max_offpolicy_updates: 1,
    reproducible: true,
  },
  judge: { judges: [{ type: 'rule', id: 'rule' }], n_judges: null, min_votes: 1, verifier_gate: true, calibration: {} },
  tasks: {
    environments: ['arith_tool'],
    task_file: null,
    env_files: [],
    verifier: null,
    difficulty_range: [1, 5],
    levels: {},
    eval_items: 32,
  },
  transfer: { source_checkpoint: null, learning_rate_scale: 0.3 },
};
