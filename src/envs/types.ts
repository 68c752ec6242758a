/**
 * The environment interface (like Atropos's BaseEnv as a dataloader):
 * an environment generates tasks deterministically from a seed, a difficulty level and a split,
 * scores a finished trajectory, and can script the ideal assistant turns for a task (its expert).
 *
 * Authors write an `EnvironmentSpec`; `defineEnvironment` (define.ts) turns it into an `Environment`
 * by adding ids and the deterministic train/test split, so no author has to get splits right.
 */
import type { Split, SystemPromptStyle, Task, ToolSchema, Trajectory } from '../contracts.ts';
import type { Rng } from '../rng.ts';

/** Tool names the sandbox provides (src/sandbox TOOL_SCHEMAS). */
export const KNOWN_TOOLS = ['js', 'calc', 'sh', 'git'] as const;
export type KnownTool = (typeof KNOWN_TOOLS)[number];

/** Difficulty levels are integers 1 (easiest) … 5. */
export const ALL_LEVELS = [1, 2, 3, 4, 5] as const;

/** A score in [0, 1], or null when the environment cannot decide (never a silent 0). */
export type EnvScore = number | null;

/** One tool call run before the episode starts (hidden from the model): builds repo history etc. */
export interface SetupCall {
  tool: KnownTool;
  args: Record<string, unknown>;
}

/** How to build the sandbox toolbox for a task, beyond the tool list. JSON-safe, so it can live in `task.data`. */
export interface ToolboxSetup {
  files?: Record<string, string>;
  gitRepo?: boolean;
  calls?: SetupCall[];
}

/** One episode's session of an environment's own tools: state lives from `openTools` to `dispose`. */
export interface OwnToolSession {
  /** Runs one call; never throws: a failure is `{ error }` text the model reads. */
  call(name: string, args: Record<string, unknown>): Promise<{ result: string; error: string | null }>;
  dispose(): void;
}

export interface OwnToolOptions {
  /** Deadline for each call, in ms of guest running time. */
  timeoutMs: number;
}

/** What a spec's `sample` returns: the user message plus the data `evaluate` and the expert need. */
export interface TaskItem {
  prompt: string;
  data: Record<string, unknown>;
  /**
   * The item's canonical content (e.g. `"23+58"`), which decides its split: two items with the same key
   * are the same question however they are worded. Defaults to the JSON of `data`.
   */
  key?: string;
  /** Pins the item to a split (a task file's explicit `split` column) instead of the hash of its key. */
  split?: Split;
}

/** What an environment author writes. */
export interface EnvironmentSpec {
  /** Registry name, snake_case (`arith_tool`). */
  name: string;
  description: string;
  tags: string[];
  /** Levels this environment generates; default 1–5. */
  difficulties?: number[];
  /** Tools the model gets (and needs) for this environment. */
  requiredTools: string[];
  /**
   * System prompt style (format/system-prompt.ts). Default `described` for an environment with its own tools (each
   * tool's description on its line), `compact` otherwise.
   */
  systemStyle?: SystemPromptStyle;
  /** Extra system-prompt instructions (one short line). */
  instructions?: string;
  /** Share of the item space held out as the test split, in (0, 1). Default 0.2. */
  testFraction?: number;
  /** Draws one item at a difficulty level. Must be a pure function of the rng's stream. */
  sample(rng: Rng, difficulty: number): TaskItem;
  /** Scores a finished episode: 1 for a correct answer, below 1 for a wrong one, null when it cannot decide. */
  evaluate(task: Task, trajectory: Trajectory): EnvScore | Promise<EnvScore>;
  /**
   * The ideal assistant turns for a task, as raw assistant text (`<think>…</think>`, `<tool_call>`s,
   * then a final answer turn). Used to prove solvability and to build SFT transcripts.
   */
  expert?(task: Task): string[];
  /** The sandbox state a task starts from (files, a git repository, setup calls). Default: empty. */
  toolbox?(task: Task): ToolboxSetup;
  /**
   * Tools the environment brings itself, beyond the sandbox's whitelist (a module's `tools`: a lookup
   * table, a maze, a small database), with state per episode. The model sees these schemas beside the
   * required tools'; `openTools` runs them.
   */
  ownTools?: ToolSchema[];
  /** Opens one episode's session of `ownTools` (required with them). */
  openTools?(task: Task, options: OwnToolOptions): Promise<OwnToolSession>;
  /**
   * The success rate a task-blind policy can reach by luck at a level (a lucky guess of a branch name,
   * say), at most MAX_DECLARED_CHANCE (0.1, define.ts; a module's is refused above it, a task file's is
   * measured from its rows instead). Default 0: success is out of reach without reading the task. tests/envs checks
   * a family of blind policies against it.
   */
  chance?(difficulty: number): number;
}

/**
 * The longest prompt a task may have, in characters (about 8,000 tokens): a task is one question, not a
 * corpus, and every episode renders and tokenizes it again. Longer ones are refused by name (a module's
 * `sample`, a task file's row).
 */
export const MAX_PROMPT_CHARS = 32_000;

/** A registered environment: the spec plus deterministic generation with splits. */
export interface Environment {
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly difficulties: readonly number[];
  readonly requiredTools: readonly string[];
  readonly systemStyle: SystemPromptStyle;
  readonly instructions: string | undefined;
  readonly testFraction: number;
  /**
   * The task for a seed, level and split. Same arguments → same task; an item's content belongs to
   * exactly one split, so no test item ever appears in train.
   */
  generate(seed: number, difficulty: number, split: Split): Task;
  evaluate(task: Task, trajectory: Trajectory): Promise<EnvScore>;
  expert?(task: Task): string[];
  toolbox(task: Task): ToolboxSetup;
  /** The environment's own tools (EnvironmentSpec.ownTools); empty for most. */
  readonly ownTools: readonly ToolSchema[];
  openTools?(task: Task, options: OwnToolOptions): Promise<OwnToolSession>;
  /** The success rate a task-blind policy can reach by luck at this level (see EnvironmentSpec.chance). */
  chance(difficulty: number): number;
  /** Which split an item key belongs to. */
  splitOf(key: string): Split;
}

/** A plain summary for lists (CLI `list`, the UI picker); survives structured clone. */
export interface EnvironmentInfo {
  name: string;
  description: string;
  tags: string[];
  difficulties: number[];
  requiredTools: string[];
}
