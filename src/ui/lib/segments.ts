/**
 * Splits (possibly still streaming) assistant text into display segments: `<think>` reasoning,
 * `<tool_call>` blocks and plain text. Tolerates an unterminated last tag, since the text may be cut
 * mid-stream. Display only: the real parsing of calls lives in src/format.
 */

export type SegmentKind = 'think' | 'tool_call' | 'text';

export interface Segment {
  kind: SegmentKind;
  text: string;
  /** True when the closing tag has not arrived (yet). */
  open: boolean;
}

const TAGS: Record<string, SegmentKind> = { think: 'think', tool_call: 'tool_call' };
const OPEN = /<(think|tool_call)>/g;

export function splitAssistantText(text: string): Segment[] {
  const segments: Segment[] = [];
  let cursor = 0;
  const pushText = (chunk: string) => {
    const cleaned = chunk.replace(/<\|im_end\|>|<\|im_start\|>assistant\n?/g, '');
    if (cleaned.trim()) segments.push({ kind: 'text', text: cleaned, open: false });
  };
  OPEN.lastIndex = 0;
  for (let match = OPEN.exec(text); match; match = OPEN.exec(text)) {
    pushText(text.slice(cursor, match.index));
    const tag = match[1];
    const close = `</${tag}>`;
    const start = match.index + match[0].length;
    const end = text.indexOf(close, start);
    if (end === -1) {
      segments.push({ kind: TAGS[tag], text: text.slice(start), open: true });
      return segments;
    }
    segments.push({ kind: TAGS[tag], text: text.slice(start, end), open: false });
    cursor = end + close.length;
    OPEN.lastIndex = cursor;
  }
  pushText(text.slice(cursor));
  return segments;
}
