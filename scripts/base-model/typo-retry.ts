/**
 * The `retry` transcript variant (mix.ts MULTI_STEP_SHARES): one call of the expert's episode is made
 * first with a typo in a name it copied, the way the base miscopies (`cat lib/spix.js` for
 * `lib/spin.js`, `fold(7)` for `spin(7)`), and then again as the expert made it. Played through the real
 * agent loop, the typo's observation is the sandbox's own error, so the transcript shows reading an
 * error and correcting the call, which no expert transcript does.
 */
import type { Trajectory } from '../../src/contracts.ts';
import { callTurn, type ExpertCall } from '../../src/envs/expert-text.ts';
import type { Rng } from '../../src/rng.ts';
import { WORDS } from './universe/surface.ts';

export const RETRY_THOUGHT = 'Typo. Again.';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** One letter of `word` (at `from` or later) changed to another. */
function typo(word: string, from: number, pick: Rng): string {
  const at = pick.int(from, word.length - 1);
  const others = LETTERS.replace(word[at], '');
  return word.slice(0, at) + others[pick.int(0, others.length - 1)] + word.slice(at + 1);
}

/**
 * The call with a typo in its copied name, or null where a typo would not fail: `cat`/`find` get one in
 * the file's stem, a js run in the function it calls on its last line, and a tool of the environment's own
 * (a universe world's) in one of three places, a third of the time each: its own name (the error lists the
 * available tools, and the call made again copies the name from there; on tool lists it had never seen
 * the base wrote names that were not in them and repeated them after that error), a parameter's name
 * (withWrongParameter), or the longest word of a string argument (a product, a person, a counter: what
 * the base miscopies from the question). Whether the typo fails is the
 * tool's to say: the transcript is kept only where it did and the call made again succeeded (transcripts.ts).
 */
export function misspelledCall(call: ExpertCall, pick: Rng): ExpertCall | null {
  const args = call.arguments;
  if (call.name === 'sh' && typeof args.command === 'string') {
    const m = /^(cat |find \. -name )(\S*?)([a-z]+)(\.[a-z]+)$/.exec(args.command);
    if (!m) return null;
    return { name: 'sh', arguments: { command: `${m[1]}${m[2]}${typo(m[3], 0, pick)}${m[4]}` } };
  }
  if (call.name === 'js' && typeof args.code === 'string') {
    const m = /\n([a-z]+)(\(\d+\))$/.exec(args.code);
    if (!m) return null;
    return { name: 'js', arguments: { code: `${args.code.slice(0, m.index)}\n${typo(m[1], 0, pick)}${m[2]}` } };
  }
  if (call.name === 'sh' || call.name === 'js') return null;
  const kind = pick.int(0, 2);
  if (kind === 0 && call.name.length >= 3) return { name: wrongToolName(call.name, pick), arguments: args };
  if (kind === 1) return withWrongParameter(call, pick);
  const copied = Object.entries(args).flatMap(([key, value]) =>
    typeof value === 'string' ? (value.match(/[a-z]{3,}/g) ?? []).map((word) => ({ key, value, word })) : [],
  );
  if (copied.length === 0) return null;
  const { key, value, word } = copied.reduce((a, b) => (b.word.length > a.word.length ? b : a));
  return { name: call.name, arguments: { ...args, [key]: value.replace(word, typo(word, 1, pick)) } };
}

/**
 * A tool's name as the base gets it wrong: one letter off, or (for a name with a prefix, half the time)
 * the right stem after a prefix it remembers from other worlds (`echo_stock` for `count_stock`), which it
 * wrote on held-out worlds far more often than a one-letter typo.
 */
function wrongToolName(name: string, pick: Rng): string {
  const cut = name.indexOf('_');
  if (cut <= 0 || !pick.chance(0.5)) return typo(name, 1, pick);
  const others = WORDS.prefixes.filter((p) => p !== name.slice(0, cut));
  return `${others[pick.int(0, others.length - 1)]}${name.slice(cut)}`;
}

/**
 * Parameter names the base reaches for when a tool's own differs: its sibling tools' and other worlds'
 * spellings of the same thing. Given one of them, a tool refuses with `missing argument "item"; … expects
 * {"item"}`, and the call made again copies the name from there (before this kind of typo the base kept
 * the wrong name through every retry: 0 of 215 such errors fixed on the held-out inventory worlds).
 */
const PARAMETER_NAMES = [
  'item',
  'product',
  'name',
  'sku',
  'id',
  'key',
  'query',
  'count',
  'qty',
  'quantity',
  'amount',
  'value',
  'person',
  'who',
  'day',
  'date',
  'text',
  'path',
];

/** The call with one argument under a wrong parameter name; null when it has no arguments. */
function withWrongParameter(call: ExpertCall, pick: Rng): ExpertCall | null {
  const keys = Object.keys(call.arguments);
  if (keys.length === 0) return null;
  const key = keys[pick.int(0, keys.length - 1)];
  const others = PARAMETER_NAMES.filter((n) => !(n in call.arguments));
  const wrong = others[pick.int(0, others.length - 1)];
  const renamed = Object.fromEntries(Object.entries(call.arguments).map(([k, v]) => [k === key ? wrong : k, v]));
  return { name: call.name, arguments: renamed };
}

interface ParsedTurn {
  think: string | null;
  call: ExpertCall;
}

function parseCallTurn(turn: string): ParsedTurn | null {
  const call = /<tool_call>(.*)<\/tool_call>$/s.exec(turn);
  if (!call) return null;
  const think = /^<think>(.*?)<\/think>/s.exec(turn);
  return { think: think?.[1] ?? null, call: JSON.parse(call[1]) as ExpertCall };
}

/** The expert's turns with one call made first with a typo and then right; null when no call can carry one. */
export function withTypoRetry(turns: string[], pick: Rng): string[] | null {
  const candidates = turns.flatMap((turn, i) => {
    const parsed = parseCallTurn(turn);
    const wrong = parsed ? misspelledCall(parsed.call, pick) : null;
    return parsed && wrong ? [{ i, parsed, wrong }] : [];
  });
  if (candidates.length === 0) return null;
  const { i, parsed, wrong } = candidates[pick.int(0, candidates.length - 1)];
  // A misspelt tool is misspelt in the thought that names it too, as the base's own wrong names were.
  const think =
    wrong.name === parsed.call.name ? parsed.think : (parsed.think?.replace(parsed.call.name, wrong.name) ?? null);
  return [
    ...turns.slice(0, i),
    callTurn(think, [wrong]),
    callTurn(RETRY_THOUGHT, [parsed.call]),
    ...turns.slice(i + 1),
  ];
}

/**
 * The transcript's assistant mask with the misspelt call's turn left out of the loss: the model learns
 * to read the error and make the call again, not to misspell (trained on, the typos were imitated: the
 * base miscopied the function it ran in about one js call in five).
 */
export function maskTypoTurn(t: Trajectory): number[] {
  const retry = t.steps.find((s) => s.thought === RETRY_THOUGHT);
  if (!retry || retry.turn === 0) throw new Error('maskTypoTurn: no retry after a misspelt call in this transcript');
  const [start, end] = t.turn_spans[retry.turn - 1];
  return t.assistant_mask.map((m, i) => (i >= start && i < end ? 0 : m));
}
