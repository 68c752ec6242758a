/**
 * Trajectories as Hugging Face chat JSONL: one conversation per line in the shape TRL's SFTTrainer
 * (and `tokenizer.apply_chat_template(messages, tools=tools)`) takes, plus metadata columns to filter
 * on: assistant calls in OpenAI `tool_calls`, each result its own bare `tool` message (the model's
 * template adds its own wrapping). A byte model's row renders with its template to exactly the text of
 * its tokens. Schema in docs/formats.md § HF chat JSONL. Token ids, masks, logprobs and votes are not
 * in this format; Parquet keeps everything.
 */
import type { ChatMessage, Split, ToolSchema, Trajectory } from '../contracts.ts';
import { renderChatML } from '../format/chatml.ts';
import { fromOpenAiMessages, storedCallCodec, toOpenAiMessages, type OpenAiMessage } from '../format/openai-messages.ts';
import { ByteTokenizer } from '../model/byte-tokenizer.ts';
import { parseJsonl, textOf } from './jsonl.ts';
import { checkMessages, checkToolSchema } from './validate.ts';

/** OpenAI/HF function-tool wrapper, as chat templates expect in `tools`. */
export interface HfTool {
  type: 'function';
  function: ToolSchema;
}

export interface ChatRow {
  messages: OpenAiMessage[];
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

const BYTES = new ByteTokenizer();

/** The trajectory's tokens are Spindle's ChatML of its messages in the byte tokenizer: a byte model's episode. */
function sampledInSpindleChatMl(t: Trajectory): boolean {
  return t.tokens.length > 0 && t.tokens.every((id) => Number.isInteger(id) && id >= 0 && id < BYTES.vocabSize)
    && BYTES.decode(t.tokens) === renderChatML(t.messages);
}

/**
 * Whether Python's json.dumps (the template's `tojson` in transformers) writes the value as JSON.stringify
 * does: they differ only on fractions below 1e-4 (`1e-05` against `0.00001`).
 */
function writtenAlikeInPython(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) || Math.abs(value) >= 1e-4;
  if (value !== null && typeof value === 'object') return Object.values(value).every(writtenAlikeInPython);
  return true;
}

/** The template leaves null arguments out (🤗 datasets fills missing keys with nulls), so a call with one stays text. */
function renderedByTemplate(calls: NonNullable<OpenAiMessage['tool_calls']>): boolean {
  return calls.every(({ function: { arguments: args } }) => Object.values(args).every((v) => v !== null) && writtenAlikeInPython(args));
}

/**
 * A byte model's turns in OpenAI form where its chat template (model/spindle-chat-template.ts, which writes
 * calls as fromOpenAiMessages does) renders them back exactly as sampled; a turn that would not (spaces in
 * the call's JSON, text after a call) stays text, so the row renders to the tokens the model trained on.
 */
function asSampledInChatMl(messages: ChatMessage[]): OpenAiMessage[] {
  return messages.flatMap((m) => {
    const open = toOpenAiMessages([m]);
    const calls = open[0].tool_calls;
    if (m.role !== 'assistant' || !calls) return open;
    const exact = fromOpenAiMessages(open)[0].content === m.content && renderedByTemplate(calls);
    return exact ? open : [{ role: 'assistant', content: m.content }];
  });
}

export function trajectoryToChatRow(t: Trajectory): ChatRow {
  return {
    // Calls as the model wrote them (Hermes blocks, or a Llama model's JSON messages) become tool_calls.
    messages: sampledInSpindleChatMl(t)
      ? asSampledInChatMl(t.messages)
      : toOpenAiMessages(t.messages, { codec: storedCallCodec(t.messages) }),
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
  const messages = fromOpenAiMessages(row.messages);
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  return {
    id: row.id, task_id: row.task_id, task_description: messages.find((m) => m.role === 'user')?.content ?? '',
    model_id: row.model_id, steps: [], final_response: lastAssistant?.content ?? null, success: row.success,
    judge_score: row.score, token_count: 0, wall_time_seconds: 0, env: row.env, split: row.split, difficulty: row.difficulty,
    seed: 0, group_id: row.group_id, run_id: row.run_id, messages, tools: row.tools.map((t) => t.function),
    tokens: [], assistant_mask: [], logprobs: [], turn_spans: [], finish_reason: row.finish_reason, votes: [],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 0 }, created_at: row.created_at,
  };
}

export function checkChatRow(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'each line must be a JSON object with "messages"';
  const r = v as Record<string, unknown>;
  const m = checkMessages(Array.isArray(r.messages) ? r.messages.map(withTextContent) : r.messages);
  if (m) return m;
  const calls = checkToolCalls(r.messages as Record<string, unknown>[]);
  if (calls) return calls;
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
  if (r.split !== undefined && !['train', 'validation', 'test'].includes(r.split as string)) {
    return `split must be "train", "validation" or "test" (got ${JSON.stringify(r.split)})`;
  }
  for (const f of ['id', 'env', 'task_id']) if (r[f] !== undefined && typeof r[f] !== 'string') return `${f} must be a string`;
  return null;
}

/** OpenAI allows `content: null` beside tool_calls; it reads as the empty string. */
function withTextContent(m: unknown): unknown {
  const o = m as Record<string, unknown> | null;
  return o && typeof o === 'object' && o.content === null && Array.isArray(o.tool_calls) ? { ...o, content: '' } : m;
}

function checkToolCalls(messages: Record<string, unknown>[]): string | null {
  for (const [i, m] of messages.entries()) {
    if (m.tool_calls === undefined) continue;
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) return `messages[${i}].tool_calls must be a list on an assistant message`;
    for (const [j, c] of (m.tool_calls as Record<string, unknown>[]).entries()) {
      const fn = c?.function as Record<string, unknown> | undefined;
      const args = typeof fn?.arguments === 'string' ? parseArguments(fn.arguments) : fn?.arguments;
      if (typeof fn?.name !== 'string' || typeof args !== 'object' || args === null || Array.isArray(args)) {
        return `messages[${i}].tool_calls[${j}] must be {type: "function", function: {name, arguments: {...} or a JSON string of one}}`;
      }
    }
  }
  return null;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** OpenAI messages as stored: content a string, arguments an object (some writers send a JSON string). */
function normaliseMessage(m: Record<string, unknown>): OpenAiMessage {
  const content = typeof m.content === 'string' ? m.content : '';
  if (!Array.isArray(m.tool_calls)) return { role: m.role as OpenAiMessage['role'], content };
  const tool_calls = (m.tool_calls as { function: { name: string; arguments: unknown } }[]).map((c) => ({
    type: 'function' as const,
    function: { name: c.function.name, arguments: (typeof c.function.arguments === 'string' ? parseArguments(c.function.arguments) : c.function.arguments) as Record<string, unknown> },
  }));
  return { role: 'assistant', content, tool_calls };
}

/** Parses and validates chat JSONL. Rows from other tools may lack Spindle's columns; defaults fill them. */
export function parseChatJsonl(data: string | Uint8Array | ArrayBuffer, file: string): ChatRow[] {
  return parseJsonl<Record<string, unknown>>(textOf(data), file, checkChatRow).map((r, i) => ({
    messages: (r.messages as Record<string, unknown>[]).map(normaliseMessage),
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
