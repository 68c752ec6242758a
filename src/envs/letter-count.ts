/**
 * letter_count: how many times a letter occurs in a word or phrase (Atropos's letter counting, which
 * tiny models get wrong without a tool). The model has `js`; the expert counts with one line of JS.
 * Exact integer answer: 1, anything else 0.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { finalAnswer, lastInteger } from './answer.ts';
import { LETTER_COUNT_LEVELS, LETTER_COUNT_PROMPTS } from './data/text-levels.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { drawText, jsString } from './text-common.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

export const letterCount: EnvironmentSpec = {
  name: 'letter_count',
  description: 'Count how often a letter occurs in a word or phrase.',
  tags: ['text', 'tool-use', 'starter'],
  requiredTools: ['js'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const level = LETTER_COUNT_LEVELS[difficulty];
    const text = drawText(rng, level);
    const present = [...new Set(text.replace(/\s/g, ''))];
    const absent = [...ALPHABET].filter((c) => !present.includes(c));
    const letter = rng.chance(level.absentLetter) && absent.length ? rng.pick(absent) : rng.pick(present);
    const answer = [...text].filter((c) => c === letter).length;
    const prompt = rng.pick(LETTER_COUNT_PROMPTS).replace('{letter}', letter).replace('{text}', text);
    return { prompt, data: { text, letter, answer }, key: `${letter}|${text}` };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    return lastInteger(finalAnswer(trajectory)) === task.data.answer ? 1 : 0;
  },
  expert(task: Task): string[] {
    const code = `${jsString(String(task.data.text))}.split(${jsString(String(task.data.letter))}).length - 1`;
    return [callTurn('Count with js.', [{ name: 'js', arguments: { code } }]), answerTurn(String(task.data.answer))];
  },
};
