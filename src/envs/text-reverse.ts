/**
 * text_reverse: write a random text backwards, character by character (Atropos's text reversal). The
 * model has `js`; the expert reverses with one line of JS. Palindromes are never drawn, so echoing the
 * question never answers it.
 *
 * Success (score 1) needs both parts of `scoreParts`: a successful js call whose code holds the text and
 * whose result is the reversed text, and a final answer that is exactly it (after removing wrapping quotes
 * and an "Answer:" label). Either alone is half credit. Splits go by the text.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { cleanAnswer, finalAnswer } from './answer.ts';
import { TEXT_REVERSE_LEVELS, TEXT_REVERSE_PROMPTS } from './data/text-levels.ts';
import { scoreParts, toolDidTheWork } from './evidence.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { drawText, jsString } from './text-common.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

const reversed = (text: string): string => [...text].reverse().join('');

export const textReverse: EnvironmentSpec = {
  name: 'text_reverse',
  description: 'Write a word or phrase backwards.',
  tags: ['text', 'tool-use', 'starter'],
  requiredTools: ['js'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    let text = drawText(rng, TEXT_REVERSE_LEVELS[difficulty]);
    while (reversed(text) === text) text = drawText(rng, TEXT_REVERSE_LEVELS[difficulty]);
    const prompt = rng.pick(TEXT_REVERSE_PROMPTS).replace('{text}', text);
    return { prompt, data: { text, answer: reversed(text) }, key: text };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    const { text, answer } = task.data as { text: string; answer: string };
    const worked = toolDidTheWork(trajectory, {
      tools: ['js'],
      mentions: (code) => code.includes(text),
      result: (value) => value === answer,
    });
    return scoreParts(worked, cleanAnswer(finalAnswer(trajectory)) === answer);
  },
  expert(task: Task): string[] {
    const code = `${jsString(String(task.data.text))}.split("").reverse().join("")`;
    return [callTurn('Reverse with js.', [{ name: 'js', arguments: { code } }]), answerTurn(String(task.data.answer))];
  },
};
