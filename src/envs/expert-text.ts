/**
 * Builds the assistant text an expert writes, in the layout the system prompt shows and the parser
 * reads: a short `<think>`, then one `<tool_call>` per call, or a final answer. The compact layout
 * (`<tool_call>{"name":"calc","arguments":{…}}</tool_call>`, no spaces) matches the compact system
 * prompt the shipped base sees (fewest tokens); the full layout matches the
 * Hermes/Qwen template (`<tool_call>\n{"name": "calc", "arguments": {…}}\n</tool_call>`).
 */

export interface ExpertCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type CallLayout = 'compact' | 'full';

/** `<think>…</think>` (when given) followed by one `<tool_call>` block per call. */
export function callTurn(think: string | null, calls: ExpertCall[], layout: CallLayout = 'compact'): string {
  const parts = think ? [`<think>${think}</think>`] : [];
  for (const call of calls) {
    const body = { name: call.name, arguments: call.arguments };
    parts.push(
      layout === 'compact'
        ? `<tool_call>${JSON.stringify(body)}</tool_call>`
        : `<tool_call>\n${spacedJson(body)}\n</tool_call>`,
    );
  }
  return parts.join('\n');
}

/** A final answer turn, with an optional short thought first. */
export function answerTurn(answer: string, think: string | null = null): string {
  return think ? `<think>${think}</think>\n${answer}` : answer;
}

/** JSON with `", "` and `": "` separators, as Python's json.dumps writes it in Qwen/Hermes chat templates. */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${spacedJson(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
