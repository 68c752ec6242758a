/**
 * long_plan: a long route of dependent calls over two tools. The prompt gives the first locker's number
 * as a sum (`locker 23 + 19`); calc works it out, sh reads `lockers/42.txt`, whose note gives the next
 * number the same way (`next: locker 6 * 7`), down to a locker that holds a word; the answer is that
 * word. Level L has L + 1 lockers on the route, so success takes 2(L + 1) calls: 4, 6, 8, 10 and 12, each
 * call's argument shown only by the observation before it. Dead-end lockers hold other words. In
 * RECOVERY_SHARE of the items one note writes a product with `×` (`6 × 7`): copying it into calc fails
 * with "unexpected character '×' … (use * to multiply)", and success needs the corrected call.
 *
 * Success: each locker number worked out by a successful calc call that uses the note's two numbers and
 * gives the number, after the read that showed the note; each locker read by a call that names it and
 * shows its note, after that calc call (step-evidence.ts); and the final answer is the word. Either
 * part alone is half credit.
 */
import type { Task } from '../contracts.ts';
import type { Rng } from '../rng.ts';
import { cleanAnswer, finalAnswer, integerAnswer } from './answer.ts';
import { RECOVERY_SHARE } from './data/multi-step.ts';
import { CONTENT_WORDS } from './data/shell.ts';
import {
  ADD_RANGE,
  FACTOR_RANGE,
  LOCKER_RANGE,
  lockerFile,
  PLAN_DECOYS,
  PLAN_LOCKERS,
  PLAN_PROMPT,
} from './data/long-plan.ts';
import { containsToken, scoreParts } from './evidence.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { allNeedsMet, readNeed, type StepNeed } from './step-evidence.ts';
import type { EnvironmentSpec, ToolboxSetup } from './types.ts';

export interface RouteStop {
  a: number;
  b: number;
  op: '+' | '-' | '*';
  /** How the prompt or the previous note writes it: `23 + 19`, or `6 × 7` in a recovery item. */
  written: string;
  /** The locker number: the expression's value. */
  n: number;
  /** What the locker holds: the next stop's expression, or the word. */
  content: string;
}

export interface LongPlanData {
  route: RouteStop[];
  word: string;
  files: Record<string, string>;
  /** True when the first reasonable attempt fails by design (RECOVERY_SHARE). */
  recovery: boolean;
  [key: string]: unknown;
}

/** An expression whose value is a locker number not yet taken; a product when `product` is set. */
function drawStop(rng: Rng, taken: Set<number>, product: boolean): Omit<RouteStop, 'content'> {
  for (;;) {
    const op = product ? '*' : rng.pick(['+', '-', '*'] as const);
    let a: number;
    let b: number;
    if (op === '*') [a, b] = [rng.int(...FACTOR_RANGE), rng.int(...FACTOR_RANGE)];
    else if (op === '+') [a, b] = [rng.int(...ADD_RANGE), rng.int(...ADD_RANGE)];
    else [a, b] = [rng.int(LOCKER_RANGE[0] + 2, LOCKER_RANGE[1]), rng.int(...ADD_RANGE)];
    const n = op === '*' ? a * b : op === '+' ? a + b : a - b;
    if (n < LOCKER_RANGE[0] || n > LOCKER_RANGE[1] || taken.has(n)) continue;
    taken.add(n);
    return { a, b, op, written: `${a} ${op} ${b}`, n };
  }
}

const calc = (expression: string) => ({ name: 'calc', arguments: { expression } });
const sh = (command: string) => ({ name: 'sh', arguments: { command } });

export const longPlan: EnvironmentSpec = {
  name: 'long_plan',
  description:
    'Follow a long route: work out each locker number with calc, read that locker with sh, to the word at the end.',
  tags: ['shell', 'files', 'multi-step', 'multi-tool', 'tool-use', 'curriculum-5'],
  requiredTools: ['sh', 'calc'],
  systemStyle: 'compact',
  sample(rng, difficulty) {
    const k = PLAN_LOCKERS[difficulty];
    const taken = new Set<number>();
    // The prompt's expression is never the one written with ×: the designed failure follows a read.
    const times = rng.chance(RECOVERY_SHARE) ? rng.int(1, k - 1) : -1;
    const stops = Array.from({ length: k }, (_, i) => drawStop(rng, taken, i === times));
    if (times >= 0) stops[times].written = `${stops[times].a} × ${stops[times].b}`;
    const [word, ...otherWords] = rng.shuffle(CONTENT_WORDS);
    const route: RouteStop[] = stops.map((s, i) => ({
      ...s,
      content: i + 1 < k ? `next: locker ${stops[i + 1].written}` : `word: ${word}`,
    }));
    const files: Record<string, string> = {};
    // Dead ends: some name another dead end, the rest hold a word of their own.
    const decoys = Array.from({ length: PLAN_DECOYS }, () => drawStop(rng, taken, false));
    decoys.forEach((d, i) => {
      files[lockerFile(d.n)] =
        i > 0 && rng.chance(0.5) ? `next: locker ${decoys[i - 1].written}\n` : `word: ${otherWords[i]}\n`;
    });
    for (const stop of route) files[lockerFile(stop.n)] = `${stop.content}\n`;
    return {
      prompt: PLAN_PROMPT.replace('{expr}', route[0].written),
      data: { route, word, files, recovery: times >= 0 } satisfies LongPlanData,
      key: `${route.map((s) => s.written).join('>')}=${word}`,
    };
  },
  toolbox: (task: Task): ToolboxSetup => ({ files: (task.data as LongPlanData).files }),
  evaluate(task, trajectory) {
    const { route, word } = task.data as LongPlanData;
    // Needs 2i (calc of stop i, after the read that showed it) and 2i + 1 (the read of locker i, after that calc).
    const needs: StepNeed[] = route.flatMap((stop, i): StepNeed[] => [
      {
        after: i > 0 ? [2 * i - 1] : undefined,
        tools: ['calc'],
        met: (source, result) =>
          containsToken(source, String(stop.a)) &&
          containsToken(source, String(stop.b)) &&
          integerAnswer(result) === stop.n,
      },
      readNeed(lockerFile(stop.n), stop.content, [2 * i]),
    ]);
    return scoreParts(allNeedsMet(trajectory, needs), cleanAnswer(finalAnswer(trajectory)) === word);
  },
  expert(task) {
    const { route, word } = task.data as LongPlanData;
    const turns: string[] = [];
    route.forEach((stop, i) => {
      turns.push(callTurn(i === 0 ? 'Work out the first locker.' : 'Work out the next locker.', [calc(stop.written)]));
      if (stop.written.includes('×'))
        turns.push(callTurn('calc wants * to multiply.', [calc(`${stop.a} * ${stop.b}`)]));
      turns.push(callTurn('Read it.', [sh(`cat ${lockerFile(stop.n)}`)]));
    });
    return [...turns, answerTurn(word)];
  },
};
