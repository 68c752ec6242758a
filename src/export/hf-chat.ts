/**
 * Trajectories as Hugging Face chat JSONL: one conversation per line in the shape TRL's SFTTrainer
 * (and `tokenizer.apply_chat_template(messages, tools=tools)`) takes, plus metadata columns to filter
 * on. Schema in docs/formats.md § HF chat JSONL. Token ids, masks, logprobs and votes are not in
 * this format; Parquet keeps everything.
 */
import type { ChatMessage, Split, ToolSchema, Trajectory } from '../contracts.ts';
import { parseJsonl, textOf } from './jsonl.ts';
import { checkMessages, checkToolSchema } from './validate.ts';

/** OpenAI/HF function-tool wrapper, as chat templates expect in `tools`. */
export interface HfTool {
  type: 'function';
  function: ToolSchema;
}

export interface ChatRow {
  messages: ChatMessage[];
  tools: HfTool[];
  id: string;
  /** The combined judge score in [0, 1], or null when unscored. */
  score: number | null;
  success: boolean | null;
  env: string;
  task_id: string;
  split: Split;
  difficulty: number;
  run_id: string | null;
  model_id: string;
  group_id: string;
  n_steps: number;
  finish_reason: Trajectory['finish_reason'];
  created_at: number;
}

export function trajectoryToChatRow(t: Trajectory): ChatRow {
  return {
    messages: t.messages.map(({ role, content }) => ({ role, content })),
    tools: t.tools.map((fn) => ({ type: 'function', function: fn })),
    id: t.id, score: t.judge_score, success: t.success, env: t.env, task_id: t.task_id, split: t.split,
    difficulty: t.difficulty, run_id: t.run_id, model_id: t.model_id, group_id: t.group_id,
    n_steps: t.steps.length, finish_reason: t.finish_reason, created_at: t.created_at,
  };
}

/**
 * A trajectory from a chat row: what the row carries, with empty token data (so it can seed SFT, but
 * not GRPO, which needs the sampling logprobs). The task description is the first user message.
 */
export function chatRowToTrajectory(row: ChatRow): Trajectory {
  const lastAssistant = [...row.messages].reverse().find((m) => m.role === 'assistant');
  return {
    id: row.id, task_id: row.task_id, task_description: row.messages.find((m) => m.role === 'user')?.content ?? '',
    model_id: row.model_id, steps: [], final_response: lastAssistant?.content ?? null, success: row.success,
    judge_score: row.score, token_count: 0, wall_time_seconds: 0, env: row.env, split: row.split, difficulty: row.difficulty,
    seed: 0, group_id: row.group_id, run_id: row.run_id, messages: row.messages, tools: row.tools.map((t) => t.function),
    tokens: [], assistant_mask: [], logprobs: [], turn_spans: [], finish_reason: row.finish_reason, votes: [],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 0 }, created_at: row.created_at,
  };
}

export function checkChatRow(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'each line must be a JSON object with "messages"';
  const r = v as Record<string, unknown>;
  const m = checkMessages(r.messages);
  if (m) return m;
  if (r.tools !== undefined) {
    if (!Array.isArray(r.tools)) return 'tools must be a list of {type: "function", function: {...}}';
    for (let i = 0; i < r.tools.length; i++) {
      const t = r.tools[i] as Record<string, unknown>;
      if (t?.type !== 'function') return `tools[${i}].type must be "function"`;
      const p = checkToolSchema(t.function, `tools[${i}].function`);
      if (p) return p;
    }
  }
  if (r.score !== undefined && r.score !== null && !(typeof r.score === 'number' && r.score >= 0 && r.score <= 1)) return 'score must be a number in [0, 1] or null';
  if (r.split !== undefined && r.split !== 'train' && r.split !== 'test') return `split must be "train" or "test" (got ${JSON.stringify(r.split)})`;
  for (const f of ['id', 'env', 'task_id']) if (r[f] !== undefined && typeof r[f] !== 'string') return `${f} must be a string`;
  return null;
}

/** Parses and validates chat JSONL. Rows from other tools may lack Spindle's columns; defaults fill them. */
export function parseChatJsonl(data: string | Uint8Array | ArrayBuffer, file: string): ChatRow[] {
  return parseJsonl<Record<string, unknown>>(textOf(data), file, checkChatRow).map((r, i) => ({
    messages: r.messages as ChatMessage[],
    tools: (r.tools as HfTool[] | undefined) ?? [],
    id: (r.id as string | undefined) ?? `${file}#${i + 1}`,
    score: (r.score as number | null | undefined) ?? null,
    success: (r.success as boolean | null | undefined) ?? null,
    env: (r.env as string | undefined) ?? 'imported',
    task_id: (r.task_id as string | undefined) ?? `${file}#${i + 1}`,
    split: (r.split as Split | undefined) ?? 'train',
    difficulty: (r.difficulty as number | undefined) ?? 0,
    run_id: (r.run_id as string | null | undefined) ?? null,
    model_id: (r.model_id as string | undefined) ?? 'unknown',
    group_id: (r.group_id as string | undefined) ?? '',
    n_steps: (r.n_steps as number | undefined) ?? 0,
    finish_reason: (r.finish_reason as Trajectory['finish_reason'] | undefined) ?? 'answer',
    created_at: (r.created_at as number | undefined) ?? 0,
  }));
}
