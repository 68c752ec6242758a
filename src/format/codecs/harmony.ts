/**
 * gpt-oss's harmony format. An assistant turn is a run of messages, each a header and a body:
 *
 *   <|channel|>analysis<|message|>Add them.<|end|>
 *   <|start|>assistant<|channel|>commentary to=functions.calc <|constrain|>json<|message|>{"expression": "2+3"}   (then <|call|>)
 *   <|start|>assistant<|channel|>final<|message|>5                                                                 (then <|return|>)
 *
 * (the generation prompt ends with `<|start|>assistant`, so the turn opens with the first header). The
 * analysis channel is the thought; a message addressed `to=functions.<tool>` is a call whose body is its
 * JSON arguments (the recipient may sit in the role part of the header too); final and commentary text is
 * the answer. Text without a header is all answer. A call whose JSON is cut off or not an object, and one
 * addressed to anything but `functions.`, are `{ error, raw }`. Linear in the turn.
 *
 * Lifted, a turn gives the template its analysis as `thinking` (the field gpt-oss's templates read), the
 * final text as content and the calls with their arguments' JSON as written; a turn in any other shape
 * (several analyses, a preamble beside calls, text outside messages) reaches the template as written.
 */
import {
  callError,
  isCallError,
  MAX_CALLS_PER_TURN,
  TagFinder,
  tooManyCalls,
  type ParsedAssistant,
  type ParsedCall,
} from '../parse.ts';
import type { LiftedTurn, ToolCallCodec } from './codec.ts';
import { functionName, namedCall } from './marked-turn.ts';

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
const ENDS = ['<|end|>', '<|call|>', '<|return|>'];
/** A header longer than this is not one: the text is read as plain answer text from there. */
const MAX_HEADER = 400;
/** Messages read from one turn: room for MAX_CALLS_PER_TURN calls, each with an analysis and a preamble. */
const MAX_MESSAGES = 4 * MAX_CALLS_PER_TURN;
const SHAPE = 'expected <|channel|>commentary to=functions.<tool> <|constrain|>json<|message|>{...}';

interface HarmonyMessage {
  channel: string | null;
  recipient: string | null;
  body: string;
}

/** The turn's messages; text outside any header is one message without a channel. */
function messagesOf(text: string): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  const tags = new TagFinder(text);
  let pos = 0;
  while (pos < text.length) {
    const header = text.startsWith(START, pos) ? pos + START.length : pos;
    const at = tags.next(MESSAGE, header);
    if (at === -1 || at - header > MAX_HEADER) {
      out.push({ channel: null, recipient: null, body: text.slice(pos) });
      break;
    }
    const head = text.slice(header, at);
    const from = at + MESSAGE.length;
    const stops = [...ENDS, START].map((t) => ({ t, at: tags.next(t, from) })).filter((s) => s.at !== -1);
    const stop = stops.reduce<{ t: string; at: number } | null>((a, s) => (a === null || s.at < a.at ? s : a), null);
    const end = stop?.at ?? text.length;
    out.push({
      channel: /<\|channel\|>\s*([\w-]+)/.exec(head)?.[1] ?? null,
      recipient: /\bto=([^\s<]+)/.exec(head)?.[1] ?? null,
      body: text.slice(from, end),
    });
    pos = stop === null ? text.length : stop.t === START ? end : end + stop.t.length;
    // A turn of thousands of tiny messages: the rest is not read (a call past the limit would not run anyway).
    if (out.length >= MAX_MESSAGES) break;
  }
  return out;
}

function callOf(m: HarmonyMessage): ParsedCall {
  const recipient = m.recipient ?? '';
  const name = recipient.startsWith('functions.') ? functionName(recipient.slice('functions.'.length)) : null;
  if (name === null) {
    return callError(
      `a message to ${recipient} is not a tool call Spindle runs (tools are addressed to=functions.<tool>); ${SHAPE}`,
      m.body,
    );
  }
  return namedCall(name, m.body, SHAPE);
}

function parseHarmony(text: string): ParsedAssistant {
  if (!text.includes(MESSAGE)) return { thought: null, calls: [], answer: text.trim(), errors: [] };
  const thought: string[] = [];
  const answer: string[] = [];
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  for (const m of messagesOf(text)) {
    if (m.recipient !== null) {
      if (calls.length >= MAX_CALLS_PER_TURN) {
        errors.push(tooManyCalls(calls.length));
        break;
      }
      const call = callOf(m);
      calls.push(call);
      if (isCallError(call)) errors.push(call.error);
    } else if (m.channel === 'analysis') thought.push(m.body.trim());
    else if (m.body.trim() !== '') answer.push(m.body.trim());
  }
  return { thought: thought.length ? thought.join('\n') : null, calls, answer: answer.join('\n'), errors };
}

/** The turn as gpt-oss's templates take it: one analysis at most, then calls or one final message. */
function liftHarmony(text: string): LiftedTurn | null {
  if (!text.includes(MESSAGE)) return null;
  const messages = messagesOf(text);
  const analysis = messages.filter((m) => m.recipient === null && m.channel === 'analysis');
  const rest = messages.filter((m) => !analysis.includes(m));
  if (analysis.length > 1 || (analysis.length === 1 && messages[0] !== analysis[0]) || rest.length === 0) return null;
  const reasoning = analysis.length ? { reasoning: analysis[0].body } : {};
  if (rest.every((m) => m.recipient !== null)) {
    const calls = rest.map(callOf);
    if (calls.some(isCallError)) return null;
    const read = calls as { name: string; arguments: Record<string, unknown> }[];
    return { content: '', ...reasoning, calls: read.map((c, i) => ({ ...c, argumentsText: rest[i].body })) };
  }
  if (rest.length !== 1 || rest[0].channel !== 'final') return null;
  return { content: rest[0].body, ...reasoning, calls: [] };
}

export const HARMONY_CALLS: ToolCallCodec = {
  family: 'harmony',
  summary:
    'gpt-oss harmony: <|channel|>commentary to=functions.<tool> <|constrain|>json<|message|>{…}<|call|>, ' +
    'thinking in the analysis channel',
  fallback: false,
  argumentsAs: 'text',
  reasoningField: 'thinking',
  shows: 'to=functions.',
  syntax: 'to=functions.',
  tokens: [CHANNEL, MESSAGE, '<|call|>'],
  parse: parseHarmony,
  lift: liftHarmony,
};
