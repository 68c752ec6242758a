/**
 * Synthetic agent trajectories for training and testing the shipped judge model. Four task families
 * (arithmetic, word counting, lookup, string code) each come in one good form and several bad ones.
 * Labels: 1 = good (well-formed calls that succeed, or an error the agent recovered from, then a real
 * final answer); 0 = bad (a failed call left unhandled, a malformed call, no final answer, a give-up
 * answer, or a loop of repeated calls). Seeded, so a build is reproducible.
 */
import type { ChatMessage, Trajectory, TrajectoryStep } from '../../src/contracts.ts';

export type Variant = 'good' | 'recovered' | 'tool_error' | 'malformed_call' | 'no_answer' | 'gave_up' | 'loop';
export const VARIANTS: Variant[] = [
  'good',
  'recovered',
  'tool_error',
  'malformed_call',
  'no_answer',
  'gave_up',
  'loop',
];
export const GOOD_VARIANTS: ReadonlySet<Variant> = new Set(['good', 'recovered']);

export interface Example {
  trajectory: Trajectory;
  label: 0 | 1;
  variant: Variant;
}

/** mulberry32: small, fast, seedable. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

interface Family {
  prompt: string;
  tool: string;
  args: Record<string, unknown>;
  result: string;
  answer: string;
  thought: string;
}

const WORDS = [
  'the',
  'quick',
  'brown',
  'fox',
  'jumps',
  'over',
  'lazy',
  'dog',
  'river',
  'stone',
  'light',
  'green',
  'paper',
  'cloud',
  'small',
  'bright',
];
const CAPITALS: [string, string][] = [
  ['France', 'Paris'],
  ['Japan', 'Tokyo'],
  ['Kenya', 'Nairobi'],
  ['Peru', 'Lima'],
  ['Canada', 'Ottawa'],
  ['Egypt', 'Cairo'],
  ['Norway', 'Oslo'],
  ['Chile', 'Santiago'],
];

function family(r: () => number): Family {
  switch (int(r, 0, 3)) {
    case 0: {
      const a = int(r, 2, 99);
      const b = int(r, 2, 99);
      const op = pick(r, ['+', '-', '*'] as const);
      const v = op === '+' ? a + b : op === '-' ? a - b : a * b;
      return {
        prompt: pick(r, [
          `What is ${a} ${op} ${b}?`,
          `Compute ${a} ${op} ${b}.`,
          `Please calculate ${a} ${op} ${b} for me.`,
        ]),
        tool: 'calculator',
        args: { expression: `${a}${op}${b}` },
        result: String(v),
        answer: pick(r, [`The answer is ${v}.`, `${a} ${op} ${b} = ${v}.`, `It equals ${v}.`]),
        thought: pick(r, [
          'I should use the calculator to get the exact result.',
          'Let me compute this with the calculator tool.',
          'This is arithmetic, so I will call the calculator.',
        ]),
      };
    }
    case 1: {
      const n = int(r, 3, 8);
      const text = Array.from({ length: n }, () => pick(r, WORDS)).join(' ');
      return {
        prompt: `How many words are in the sentence "${text}"?`,
        tool: 'count_words',
        args: { text },
        result: String(n),
        answer: pick(r, [`The sentence has ${n} words.`, `There are ${n} words.`, `${n} words.`]),
        thought: pick(r, [
          'I will count the words with the tool.',
          'Counting words is easy with count_words.',
          'Let me count the words precisely.',
        ]),
      };
    }
    case 2: {
      const [country, capital] = pick(r, CAPITALS);
      return {
        prompt: pick(r, [`What is the capital of ${country}?`, `Which city is the capital of ${country}?`]),
        tool: 'search',
        args: { query: `capital of ${country}` },
        result: `${capital} is the capital city of ${country}.`,
        answer: pick(r, [`The capital of ${country} is ${capital}.`, `${capital}.`, `It is ${capital}.`]),
        thought: pick(r, [
          'I will look this up to be sure.',
          'Let me search for the capital.',
          'A quick search will confirm the answer.',
        ]),
      };
    }
    default: {
      const w = pick(r, WORDS);
      const rev = [...w].reverse().join('');
      return {
        prompt: `Reverse the string "${w}".`,
        tool: 'run_js',
        args: { code: `'${w}'.split('').reverse().join('')` },
        result: rev,
        answer: pick(r, [`The reversed string is "${rev}".`, `"${rev}"`, `Reversed: ${rev}.`]),
        thought: pick(r, [
          'I will run a small JavaScript snippet to reverse it.',
          'Running code is the safest way to reverse the string.',
        ]),
      };
    }
  }
}

const ERRORS = [
  'ReferenceError: x is not defined',
  'TypeError: cannot read properties of undefined',
  'tool timed out after 2000 ms',
  'SyntaxError: unexpected token',
  'invalid arguments: expected a string',
];
const GIVE_UPS = [
  "I don't know.",
  'I cannot answer that.',
  'Sorry, I was unable to complete the task.',
  'I am not sure.',
  'Unknown.',
];

function step(
  id: number,
  thought: string | null,
  tool: string,
  args: Record<string, unknown>,
  result: string,
  error: string | null,
): TrajectoryStep {
  return {
    step_id: id,
    turn: id,
    thought,
    tool_call: { tool_name: tool, parameters: args, result, error, latency_ms: 5 },
    observation: result,
    timestamp: 0,
  };
}

function callText(thought: string | null, tool: string, args: Record<string, unknown>): string {
  return `${thought ? `<think>${thought}</think>\n` : ''}<tool_call>${JSON.stringify({ name: tool, arguments: args })}</tool_call>`;
}

export function makeExample(r: () => number, variant: Variant, index: number): Example {
  const f = family(r);
  const thought = r() < 0.85 ? f.thought : null;
  const steps: TrajectoryStep[] = [];
  const assistant: string[] = [];
  let final: string | null = f.answer;
  let finish: Trajectory['finish_reason'] = 'answer';
  const err = `Error: ${pick(r, ERRORS)}`;
  switch (variant) {
    case 'good':
      steps.push(step(0, thought, f.tool, f.args, f.result, null));
      assistant.push(callText(thought, f.tool, f.args));
      break;
    case 'recovered':
      steps.push(step(0, thought, f.tool, { input: 'bad' }, err, err.slice(7)));
      steps.push(
        step(
          1,
          pick(r, [
            'The call failed; I will fix the arguments and retry.',
            'That was an error, let me correct the call.',
          ]),
          f.tool,
          f.args,
          f.result,
          null,
        ),
      );
      assistant.push(
        callText(thought, f.tool, { input: 'bad' }),
        callText('The call failed; retrying with fixed arguments.', f.tool, f.args),
      );
      break;
    case 'tool_error':
      steps.push(step(0, thought, f.tool, f.args, err, err.slice(7)));
      assistant.push(callText(thought, f.tool, f.args));
      final = r() < 0.5 ? f.answer : pick(r, ['The answer is 42.', 'Done.', 'It is probably correct.']);
      break;
    case 'malformed_call': {
      const broken = `{"name": "${f.tool}", "arguments": {${Object.keys(f.args)[0]}: ${JSON.stringify(Object.values(f.args)[0])}`;
      steps.push(
        step(0, thought, '', {}, 'Error: could not parse the tool call JSON', 'could not parse the tool call JSON'),
      );
      assistant.push(`${thought ? `<think>${thought}</think>\n` : ''}<tool_call>${broken}</tool_call>`);
      if (r() < 0.5) {
        final = null;
        finish = 'error';
      }
      break;
    }
    case 'no_answer':
      steps.push(step(0, thought, f.tool, f.args, f.result, null));
      assistant.push(callText(thought, f.tool, f.args));
      final = null;
      finish = pick(r, ['max_steps', 'max_tokens'] as const);
      break;
    case 'gave_up':
      if (r() < 0.5) {
        steps.push(step(0, thought, f.tool, f.args, f.result, null));
        assistant.push(callText(thought, f.tool, f.args));
      }
      final = pick(r, GIVE_UPS);
      break;
    case 'loop': {
      const n = int(r, 3, 5);
      for (let i = 0; i < n; i++) {
        steps.push(step(i, i === 0 ? thought : 'Let me try the same thing again.', f.tool, f.args, f.result, null));
        assistant.push(callText(i === 0 ? thought : 'Let me try the same thing again.', f.tool, f.args));
      }
      final = null;
      finish = 'max_steps';
      break;
    }
  }
  if (final !== null) assistant.push(final);
  const messages: ChatMessage[] = [{ role: 'user', content: f.prompt }];
  assistant.forEach((a, i) => {
    messages.push({ role: 'assistant', content: a });
    if (steps[i]) messages.push({ role: 'tool', content: `<tool_response>${steps[i].observation}</tool_response>` });
  });
  const trajectory: Trajectory = {
    id: `synthetic-${index}`,
    task_id: `synthetic/${index}`,
    task_description: f.prompt,
    model_id: 'synthetic',
    steps,
    final_response: final,
    success: null,
    judge_score: null,
    token_count: 0,
    wall_time_seconds: 0,
    env: 'synthetic',
    split: 'train',
    difficulty: 1,
    seed: index,
    group_id: `g${index}`,
    run_id: null,
    messages,
    tools: [],
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    finish_reason: finish,
    votes: [],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 96 },
    created_at: 0,
  };
  return { trajectory, label: GOOD_VARIANTS.has(variant) ? 1 : 0, variant };
}

/** Balanced set: half good (good / recovered), half spread over the bad variants. */
export function makeDataset(seed: number, size: number): Example[] {
  const r = rng(seed);
  const bad = VARIANTS.filter((v) => !GOOD_VARIANTS.has(v));
  return Array.from({ length: size }, (_, i) => {
    const variant: Variant = i % 2 === 0 ? (r() < 0.75 ? 'good' : 'recovered') : pick(r, bad);
    return makeExample(r, variant, seed * 1_000_000 + i);
  });
}
