/**
 * text_reverse: write a word or phrase backwards, character by character (Atropos's text reversal).
 * The model has `js`; the expert reverses with one line of JS. The answer must match exactly (after
 * removing wrapping quotes and an "Answer:" label): 1, else 0.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { cleanAnswer, finalAnswer } from './answer.ts';
import { TEXT_REVERSE_LEVELS, TEXT_REVERSE_PROMPTS } from './data/text-levels.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { drawText, jsString } from './text-common.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

export const textReverse: EnvironmentSpec = {
  name: 'text_reverse',
  description: 'Write a word or phrase backwards.',
  tags: ['text', 'tool-use', 'starter'],
  requiredTools: ['js'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const text = drawText(rng, TEXT_REVERSE_LEVELS[difficulty]);
    const prompt = rng.pick(TEXT_REVERSE_PROMPTS).replace('{text}', text);
    return { prompt, data: { text, answer: [...text].reverse().join('') }, key: text };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    return cleanAnswer(finalAnswer(trajectory)) === task.data.answer ? 1 : 0;
  },
  expert(task: Task): string[] {
    const code = `${jsString(String(task.data.text))}.split("").reverse().join("")`;
    return [callTurn('Reverse with js.', [{ name: 'js', arguments: { code } }]), answerTurn(String(task.data.answer))];
  },
};
