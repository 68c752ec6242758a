/**
 * SFT examples: token ids plus an assistant mask, from
 * - stored trajectories (Parquet), as chat rows of their messages and tools,
 * - HF chat JSONL rows `{"messages": [...], "tools": [...]}` (exported trajectories, or data
 *   collected from a large remote model),
 * - instruction JSONL rows `{"instruction", "input"?, "output"}` or `{"prompt", "completion"}` (e.g.
 *   skill-derived instructions from `spindle skills to-instructions`).
 *
 * A row is rendered by the model's own chat codec (format/conversation.ts `trainingTokens`: its chat
 * template, else ChatML), as an episode of that model is, so SFT teaches the text the model will be
 * prompted with and write. OpenAI-style rows (calls in `tool_calls`, bare tool results) are first put in
 * Spindle's stored form (format/openai-messages.ts), the form the codec renders.
 */
import type { ChatMessage, Role, ToolSchema } from '../contracts.ts';
import { renderSystemPrompt, splitToolResponses, type SystemPromptStyle } from '../format/index.ts';
import { fromOpenAiMessages, type OpenAiMessage, type OpenAiToolCall } from '../format/openai-messages.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { conversationFormat, trainingTokens } from '../format/conversation.ts';
import type { TrainSample } from './batch.ts';
import { readJsonl, type JsonlRow } from '../format/jsonl.ts';

export interface ChatRow {
  messages: { role: string; content: string | null; tool_calls?: unknown[] }[];
  /** Function schemas, bare or in the OpenAI/HF wrapper `{type: "function", function}` (chat JSONL's `tools` column). */
  tools?: (ToolSchema | { type: 'function'; function: ToolSchema })[];
}

export type InstructionRow =
  { instruction: string; input?: string; output: string } | { prompt: string; completion: string };

export interface SftOptions {
  /** The system prompt's style when a row has tools but no system message. */
  systemStyle?: SystemPromptStyle;
}

const ROLES: Role[] = ['system', 'user', 'assistant', 'tool'];

/** An OpenAI `tool_calls` entry (arguments as an object or a JSON string; `function` optional). */
function openAiCall(call: unknown): OpenAiToolCall {
  const fn =
    (call as { function?: { name?: string; arguments?: unknown } }).function ??
    (call as { name?: string; arguments?: unknown });
  let args = fn.arguments ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      // keep the raw string: the model should still see what was called
    }
  }
  return { type: 'function', function: { name: String(fn.name), arguments: args as Record<string, unknown> } };
}

/** The row in Spindle's stored form: calls as the codec's text, each turn's tool results in one tool message. */
function normaliseMessages(row: ChatRow, tools: ToolSchema[], tok: TextTokenizer, opts: SftOptions): ChatMessage[] {
  const open: OpenAiMessage[] = row.messages.flatMap((m, i): OpenAiMessage[] => {
    if (!ROLES.includes(m.role as Role))
      throw new Error(`sft: message ${i} has role "${m.role}"; expected one of ${ROLES.join(', ')}`);
    const content = m.content ?? '';
    // A result already in <tool_response> blocks (Spindle's own export) is read back, not wrapped twice.
    if (m.role === 'tool') return splitToolResponses(content).map((text) => ({ role: 'tool', content: text }));
    const calls =
      m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0
        ? { tool_calls: m.tool_calls.map(openAiCall) }
        : {};
    return [{ role: m.role as Role, content, ...calls }];
  });
  const out = fromOpenAiMessages(open);
  if (tools.length === 0) return out;
  // As an episode does: the tools go in the system prompt unless the model's template lists them itself.
  const rendersTools = conversationFormat(tok).rendersTools;
  const style = opts.systemStyle ?? 'full';
  if (out[0]?.role !== 'system') out.unshift(renderSystemPrompt(rendersTools ? [] : tools, { style }));
  // A system message of the row's own that does not list the tools gets them after its text, as Spindle's byte
  // models' chat template writes it (tokenizer/spindle-chat-template.ts); one that lists them (`<tools>`) stands.
  else if (!rendersTools && !out[0].content.includes('<tools>'))
    out[0] = renderSystemPrompt(tools, { style, instructions: out[0].content });
  return out;
}

/** The row's tools as function schemas (chat JSONL wraps each as `{type: "function", function}`). */
function functionSchemas(tools: NonNullable<ChatRow['tools']>): ToolSchema[] {
  return tools.map((t) =>
    'function' in t && (t as { type?: unknown }).type === 'function' ? t.function : (t as ToolSchema),
  );
}

/** Token ids and assistant mask of a conversation, in the model's own chat format (see header). */
export function chatExample(row: ChatRow, tok: TextTokenizer, opts: SftOptions = {}): TrainSample {
  if (!Array.isArray(row.messages) || row.messages.length === 0)
    throw new Error('sft: a chat row needs a non-empty "messages" array');
  const tools = functionSchemas(row.tools ?? []);
  const messages = normaliseMessages(row, tools, tok, opts);
  try {
    return trainingTokens(messages, tools, tok);
  } catch (e) {
    throw new Error(`sft: ${(e as Error).message}`, { cause: e });
  }
}

export function instructionExample(row: InstructionRow, tok: TextTokenizer, opts: SftOptions = {}): TrainSample {
  const [user, answer] =
    'instruction' in row
      ? [row.input ? `${row.instruction}\n\n${row.input}` : row.instruction, row.output]
      : [row.prompt, row.completion];
  if (typeof user !== 'string' || typeof answer !== 'string') {
    throw new Error('sft: an instruction row needs string "instruction" and "output" (or "prompt" and "completion")');
  }
  return chatExample(
    {
      messages: [
        { role: 'user', content: user },
        { role: 'assistant', content: answer },
      ],
    },
    tok,
    opts,
  );
}

/** A row of SFT JSONL as read: a chat row, an instruction row, or (the same object) another tool's row with a score. */
export type SftJsonlRow = Record<string, unknown>;

function sftRowProblem(value: unknown): string | null {
  const row = value as SftJsonlRow | null;
  const known =
    typeof row === 'object' && row !== null && (Array.isArray(row.messages) || 'instruction' in row || 'prompt' in row);
  return known ? null : 'expected "messages" (HF chat) or "instruction"/"output" or "prompt"/"completion"';
}

const lineError = (line: number, message: string, cause?: unknown) =>
  new Error(`sft: JSONL line ${line}: ${message}`, { cause });

/** The rows of SFT JSONL, each a chat or an instruction row, with its line; the first bad line throws, naming it. */
export function readSftRows(text: string): JsonlRow<SftJsonlRow>[] {
  return readJsonl<SftJsonlRow>(text, sftRowProblem, (p) => lineError(p.line, p.message));
}

/** An example of each row read by readSftRows; an error names the row's line in its file. */
export function examplesFromRows(
  rows: JsonlRow<SftJsonlRow>[],
  tok: TextTokenizer,
  opts: SftOptions = {},
): TrainSample[] {
  return rows.map(({ line, value: row }) => {
    try {
      return Array.isArray(row.messages)
        ? chatExample(row as unknown as ChatRow, tok, opts)
        : instructionExample(row as unknown as InstructionRow, tok, opts);
    } catch (e) {
      throw lineError(line, (e as Error).message, e);
    }
  });
}
