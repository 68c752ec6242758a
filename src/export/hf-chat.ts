/**
 * Trajectories as Hugging Face chat JSONL: one conversation per line in the shape TRL's SFTTrainer
 * (and `tokenizer.apply_chat_template(messages, tools=tools)`) takes, plus metadata columns to filter
 * on: assistant calls in OpenAI `tool_calls`, each result its own bare `tool` message (the model's
 * template adds its own wrapping). A byte model's row renders with its template to exactly the text of
 * its tokens. Schema in docs/formats.md § HF chat JSONL. Token ids, masks, logprobs and votes are not
 * in this format; Parquet keeps everything.
 */
import type { Split, ToolSchema, Trajectory } from '../contracts.ts';
import { ChatTemplate } from '../format/chat-template.ts';
import { renderChatML } from '../format/chatml.ts';
import { fromOpenAiMessages, toOpenAiMessages, type OpenAiMessage } from '../format/openai-messages.ts';
import { isCallError } from '../format/parse.ts';
import type { ToolCallCodec } from '../format/codecs/codec.ts';
import { TOOL_CALL_CODECS } from '../format/tool-call-codec.ts';
import { ByteTokenizer, SPECIAL_TOKENS } from '../tokenizer/byte-tokenizer.ts';
import { SPINDLE_CHAT_TEMPLATE } from '../tokenizer/spindle-chat-template.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { importJsonlRows, textOf } from './jsonl.ts';
import type { JsonlRow } from '../format/jsonl.ts';
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

/** The model a trajectory was sampled from: its chat template and its tokenizer (what the token ids decode with). */
export interface RowModel {
  template: ChatTemplate;
  tokenizer: Pick<TextTokenizer, 'decode'>;
}

/** A trajectory whose row would not render as it was sampled, named with why: it is left out rather than exported wrong. */
export class ChatRowRefused extends Error {
  constructor(
    readonly trajectoryId: string,
    reason: string,
  ) {
    super(`trajectory ${trajectoryId} is not exported as chat JSONL: ${reason}`);
    this.name = 'ChatRowRefused';
  }
}

/** The calls that ran in each assistant turn (steps are numbered by turn), as `{name, arguments}`. */
function ranCalls(t: Trajectory): Map<number, string[]> {
  const ran = new Map<number, string[]>();
  for (const s of t.steps) {
    if (!s.tool_call || s.tool_call.tool_name === '') continue; // no call, or one that did not parse
    ran.set(s.turn, [...(ran.get(s.turn) ?? []), JSON.stringify([s.tool_call.tool_name, s.tool_call.parameters])]);
  }
  return ran;
}

const sameCalls = (calls: { name: string; arguments: Record<string, unknown> }[], ran: string[] | undefined) =>
  calls.length === (ran?.length ?? 0) && calls.every((c, i) => JSON.stringify([c.name, c.arguments]) === ran![i]);

/**
 * The codec the model wrote its calls in, read off the trajectory itself: the first whose reading of every
 * assistant turn gives the calls that turn ran (a turn the template or the policy failed on ran none, and
 * says nothing); null when none does or nothing ran. Hermes text from a Llama model ran no call, so it
 * does not make the trajectory Hermes.
 */
function ranCodec(t: Trajectory, ran: Map<number, string[]>): ToolCallCodec | null {
  if (ran.size === 0) return null;
  const turns = t.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
  const failed = new Set(t.steps.filter((s) => !s.tool_call).map((s) => s.turn));
  const readable = (codec: ToolCallCodec, text: string) =>
    codec.parse(text).calls.flatMap((c) => (isCallError(c) ? [] : [c]));
  const reads = (codec: ToolCallCodec) =>
    turns.every((text, k) => failed.has(k) || sameCalls(readable(codec, text), ran.get(k)));
  return TOOL_CALL_CODECS.find(reads) ?? null;
}

/**
 * A trajectory as one chat JSONL row: calls as the model wrote them become `tool_calls` only where they
 * ran (a call the loop never ran, Hermes text from a Llama model or a two-call turn its template refused,
 * stays the text that was sampled), each result its own `tool` message.
 *
 * With the model (`opts.model`: the chat template its episodes were rendered with, and its tokenizer) the
 * row is what that template needs to render exactly the text the episode trained on (its token ids,
 * decoded), checked by rendering it as transformers would (ChatTemplate.applyChatTemplate): the
 * template's own codec, think blocks as `reasoning_content` where it reads them (Qwen3 keeps an empty
 * one), and a turn whose calls the template would write back differently (compact JSON under a template
 * that spaces it) kept as the text sampled. A row that still does not render as sampled is refused:
 * ChatRowRefused, naming the trajectory and where the renderings part. Without the model, the calls'
 * codec is the one whose reading matches the calls that ran.
 */
/**
 * Whether Python's json.dumps (a template's `tojson` in transformers) writes the value as JSON.stringify
 * does: they differ only on fractions below 1e-4 (`1e-05` against `0.00001`), which a call then keeps as text.
 */
function writtenAlikeInPython(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) || Math.abs(value) >= 1e-4;
  if (value !== null && typeof value === 'object') return Object.values(value).every(writtenAlikeInPython);
  return true;
}

const BYTES = new ByteTokenizer();
let byteModel: RowModel | null = null;

/**
 * A byte model's episode (its tokens are Spindle's ChatML of its messages in the byte tokenizer) is
 * checked against the byte models' own template (tokenizer/spindle-chat-template.ts), the one their export
 * ships: a turn that template would not write back exactly as sampled stays text.
 */
function byteModelOf(t: Trajectory): RowModel | null {
  const bytes = t.tokens.length > 0 && t.tokens.every((id) => Number.isInteger(id) && id >= 0 && id < BYTES.vocabSize);
  if (!bytes || BYTES.decode(t.tokens) !== renderChatML(t.messages)) return null;
  const hasToken = (token: string) => (SPECIAL_TOKENS as readonly string[]).includes(token);
  byteModel ??= { template: new ChatTemplate(SPINDLE_CHAT_TEMPLATE, {}, { hasToken }), tokenizer: BYTES };
  return byteModel;
}

export function trajectoryToChatRow(t: Trajectory, opts: { model?: RowModel | null } = {}): ChatRow {
  const ran = ranCalls(t);
  const tools = t.tools.map((fn) => ({ type: 'function' as const, function: fn }));
  const meta = {
    id: t.id,
    score: t.judge_score,
    success: t.success,
    env: t.env,
    task_id: t.task_id,
    split: t.split,
    difficulty: t.difficulty,
    run_id: t.run_id,
    model_id: t.model_id,
    group_id: t.group_id,
    n_steps: t.steps.length,
    finish_reason: t.finish_reason,
    created_at: t.created_at,
  };
  const asText = new Set<number>();
  const build = (codec: ToolCallCodec | null, reasoning: boolean) =>
    toOpenAiMessages(t.messages, {
      ...(codec ? { codec } : {}),
      reasoning,
      liftTurn: (turn, lifted) =>
        codec !== null &&
        !asText.has(turn) &&
        sameCalls(lifted.calls, ran.get(turn)) &&
        lifted.calls.every((c) => writtenAlikeInPython(c.arguments)),
    });
  const model = opts.model ?? byteModelOf(t);
  if (!model) return { messages: build(ranCodec(t, ran), false), tools, ...meta };
  const { template, tokenizer } = model;
  const sampled = sampledOf(t, tokenizer);
  if (!template.liftsCalls) {
    // The template takes every message as written (calls in the text, results in their <tool_response> blocks).
    const messages = t.messages.map((m) => ({ role: m.role, content: m.content }));
    const parted = partingAt(template.applyChatTemplate(messages, tools), sampled.text);
    if (parted) throw new ChatRowRefused(t.id, parted.reason);
    return { messages, tools, ...meta };
  }
  const { codec, readsReasoning } = template.toolSupport;
  for (;;) {
    const messages = build(codec, readsReasoning);
    const parted = partingAt(template.applyChatTemplate(messages, tools), sampled.text);
    if (parted === null) return { messages, tools, ...meta };
    // The first turn that renders otherwise goes as the text sampled; refused when it already did.
    const turn = sampled.turnEnds.findIndex((end) => end > parted.at);
    if (turn === -1 || asText.has(turn)) throw new ChatRowRefused(t.id, parted.reason);
    asText.add(turn);
  }
}

/**
 * The text the trajectory trained on (its token ids decoded) and where each assistant turn ends in it; a
 * trajectory without token ids has nothing a row could be checked against, and is refused.
 */
function sampledOf(t: Trajectory, tokenizer: Pick<TextTokenizer, 'decode'>): { text: string; turnEnds: number[] } {
  if (t.tokens.length === 0)
    throw new ChatRowRefused(t.id, 'it has no token ids (the episode trained on nothing) to check its row against');
  return {
    text: tokenizer.decode(t.tokens),
    turnEnds: t.turn_spans.map(([, end]) => tokenizer.decode(t.tokens.slice(0, end)).length),
  };
}

/** Null when the row renders as sampled; else the first position where they part, and a line saying how. */
function partingAt(rendered: string, sampled: string): { at: number; reason: string } | null {
  if (rendered === sampled) return null;
  let at = 0;
  while (at < rendered.length && at < sampled.length && rendered[at] === sampled[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 40), at + 40));
  const reason = `the model's template renders its row as ${around(rendered)} where the episode sampled ${around(sampled)} (character ${at})`;
  return { at, reason };
}

/**
 * A trajectory from a chat row: what the row carries, with empty token data (so it can seed SFT, but
 * not GRPO, which needs the sampling logprobs). The task description is the first user message.
 */
export function chatRowToTrajectory(row: ChatRow): Trajectory {
  const messages = fromOpenAiMessages(row.messages);
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  return {
    id: row.id,
    task_id: row.task_id,
    task_description: messages.find((m) => m.role === 'user')?.content ?? '',
    model_id: row.model_id,
    steps: [],
    final_response: lastAssistant?.content ?? null,
    success: row.success,
    judge_score: row.score,
    token_count: 0,
    wall_time_seconds: 0,
    env: row.env,
    split: row.split,
    difficulty: row.difficulty,
    seed: 0,
    group_id: row.group_id,
    run_id: row.run_id,
    messages,
    tools: row.tools.map((t) => t.function),
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    finish_reason: row.finish_reason,
    votes: [],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 0 },
    created_at: row.created_at,
  };
}

function checkChatRow(v: unknown): string | null {
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
  if (r.score !== undefined && r.score !== null && !(typeof r.score === 'number' && r.score >= 0 && r.score <= 1))
    return 'score must be a number in [0, 1] or null';
  if (r.split !== undefined && !['train', 'validation', 'test'].includes(r.split as string)) {
    return `split must be "train", "validation" or "test" (got ${JSON.stringify(r.split)})`;
  }
  for (const f of ['id', 'env', 'task_id'])
    if (r[f] !== undefined && typeof r[f] !== 'string') return `${f} must be a string`;
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
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls))
      return `messages[${i}].tool_calls must be a list on an assistant message`;
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
    function: {
      name: c.function.name,
      arguments: (typeof c.function.arguments === 'string'
        ? parseArguments(c.function.arguments)
        : c.function.arguments) as Record<string, unknown>,
    },
  }));
  return { role: 'assistant', content, tool_calls };
}

/** Parses and validates chat JSONL. Rows from other tools may lack Spindle's columns; defaults fill them. */
export function parseChatJsonl(data: string | Uint8Array | ArrayBuffer, file: string): ChatRow[] {
  return chatJsonlRows(data, file).map((r) => r.value);
}

/** The same rows, each with its line in the file. */
export function chatJsonlRows(data: string | Uint8Array | ArrayBuffer, file: string): JsonlRow<ChatRow>[] {
  return importJsonlRows<Record<string, unknown>>(textOf(data), file, checkChatRow).map(({ line, value: r }, i) => ({
    line,
    value: {
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
    },
  }));
}
