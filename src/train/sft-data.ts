/**
 * SFT examples: token ids plus an assistant mask, from
 * - stored trajectories (their own `tokens` / `assistant_mask`: exactly what the policy sampled),
 * - HF chat JSONL rows `{"messages": [...], "tools": [...]}` (the seed's `rl_finetune_supervised`
 *   on exported trajectories, or data collected from a large remote model),
 * - instruction JSONL rows `{"instruction", "input"?, "output"}` or `{"prompt", "completion"}` (the
 *   seed's `llm_finetune --method=sft` on skill-derived instructions).
 *
 * Rendering is ChatML via src/format. Each message is encoded on its own and concatenated, so the
 * mask is exact: in an assistant turn the content and its closing `<|im_end|>` are trained (mask 1),
 * the `<|im_start|>assistant\n` header and the trailing newline are not — the same split as the
 * rollout's policy tokens. OpenAI-style `tool_calls` on an assistant message become Hermes
 * `<tool_call>` blocks; tool results are wrapped in `<tool_response>` when they are not already.
 */
import type { ChatMessage, Role, ToolSchema, Trajectory } from '../contracts.ts';
import { IM_END, IM_START, formatToolResponse, renderMessage, renderSystemPrompt, type SystemPromptStyle } from '../format/index.ts';
import type { TextTokenizer } from '../model/tokenizer.ts';
import type { TrainSample } from './batch.ts';
import { jsonlLines } from '../jsonl.ts';

export interface ChatRow {
  messages: { role: string; content: string | null; tool_calls?: unknown[] }[];
  tools?: ToolSchema[];
}

export type InstructionRow = { instruction: string; input?: string; output: string } | { prompt: string; completion: string };

export interface SftOptions {
  /** The tool block added when a row has tools but no system message. */
  systemStyle?: SystemPromptStyle;
}

const ROLES: Role[] = ['system', 'user', 'assistant', 'tool'];

export function trajectoryExample(t: Pick<Trajectory, 'id' | 'tokens' | 'assistant_mask'>): TrainSample {
  if (t.tokens.length === 0) throw new Error(`sft: trajectory ${t.id} has no tokens (collected by a policy without a tokenizer); convert it as a chat row instead`);
  return { tokens: t.tokens, mask: t.assistant_mask };
}

function toolCallText(call: unknown): string {
  const fn = (call as { function?: { name?: string; arguments?: unknown } }).function ?? (call as { name?: string; arguments?: unknown });
  let args = fn.arguments ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      // keep the raw string: the model should still see what was called
    }
  }
  return `<tool_call>\n${JSON.stringify({ name: fn.name, arguments: args })}\n</tool_call>`;
}

function normaliseMessages(row: ChatRow, opts: SftOptions): ChatMessage[] {
  const out: ChatMessage[] = row.messages.map((m, i) => {
    if (!ROLES.includes(m.role as Role)) throw new Error(`sft: message ${i} has role "${m.role}"; expected one of ${ROLES.join(', ')}`);
    let content = m.content ?? '';
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      content = [content, ...m.tool_calls.map(toolCallText)].filter((s) => s !== '').join('\n');
    }
    if (m.role === 'tool' && !content.trimStart().startsWith('<tool_response>')) content = formatToolResponse(content);
    return { role: m.role as Role, content };
  });
  if (row.tools && row.tools.length > 0 && out[0]?.role !== 'system') out.unshift(renderSystemPrompt(row.tools, { style: opts.systemStyle ?? 'full' }));
  return out;
}

/** Token ids and assistant mask of a conversation (see header for the mask rule). */
export function chatExample(row: ChatRow, tok: TextTokenizer, opts: SftOptions = {}): TrainSample {
  if (!Array.isArray(row.messages) || row.messages.length === 0) throw new Error('sft: a chat row needs a non-empty "messages" array');
  const messages = normaliseMessages(row, opts);
  if (!messages.some((m) => m.role === 'assistant')) throw new Error('sft: the conversation has no assistant message to learn from');
  const tokens: number[] = [];
  const mask: number[] = [];
  const push = (text: string, m: number) => {
    for (const id of tok.encode(text)) {
      tokens.push(id);
      mask.push(m);
    }
  };
  for (const msg of messages) {
    if (msg.role !== 'assistant') {
      push(renderMessage(msg), 0);
      continue;
    }
    push(`${IM_START}assistant\n`, 0);
    push(msg.content + IM_END, 1);
    push('\n', 0);
  }
  return { tokens, mask };
}

export function instructionExample(row: InstructionRow, tok: TextTokenizer, opts: SftOptions = {}): TrainSample {
  const [user, answer] =
    'instruction' in row ? [row.input ? `${row.instruction}\n\n${row.input}` : row.instruction, row.output] : [row.prompt, row.completion];
  if (typeof user !== 'string' || typeof answer !== 'string') {
    throw new Error('sft: an instruction row needs string "instruction" and "output" (or "prompt" and "completion")');
  }
  return chatExample({ messages: [{ role: 'user', content: user }, { role: 'assistant', content: answer }] }, tok, opts);
}

/** Examples from JSONL text; each line a chat row or an instruction row. Errors name the line. */
export function examplesFromJsonl(text: string, tok: TextTokenizer, opts: SftOptions = {}): TrainSample[] {
  const out: TrainSample[] = [];
  for (const { line, value, error } of jsonlLines(text)) {
    try {
      if (error) throw new Error(error);
      const row = value as Record<string, unknown>;
      if (Array.isArray(row.messages)) out.push(chatExample(row as unknown as ChatRow, tok, opts));
      else if ('instruction' in row || 'prompt' in row) out.push(instructionExample(row as unknown as InstructionRow, tok, opts));
      else throw new Error('expected "messages" (HF chat) or "instruction"/"output" or "prompt"/"completion"');
    } catch (e) {
      throw new Error(`sft: JSONL line ${line}: ${(e as Error).message}`, { cause: e });
    }
  }
  return out;
}
