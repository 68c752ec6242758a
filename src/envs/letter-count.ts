/**
 * letter_count: how many times a letter occurs in a random text (Atropos's letter counting, which tiny
 * models get wrong without a tool). The model has `js`; the expert counts with one line of JS.
 *
 * The count is drawn uniformly over the level's range before the text is built, so answers are spread
 * evenly and no constant answer is a good guess. Success (score 1) needs both parts of `scoreParts`: a
 * successful js call whose code holds the text and the letter and whose result is the count, and a final
 * answer that is exactly that integer. Either alone is half credit. Splits go by the text.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { finalAnswer, integerAnswer } from './answer.ts';
import { LETTER_COUNT_LEVELS, LETTER_COUNT_PROMPTS } from './data/text-levels.ts';
import { scoreParts, toolDidTheWork } from './evidence.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { ALPHABET, drawText, jsString, plantLetter } from './text-common.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

export const letterCount: EnvironmentSpec = {
  name: 'letter_count',
  description: 'Count how often a letter occurs in a word or phrase.',
  tags: ['text', 'tool-use', 'starter'],
  requiredTools: ['js'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const level = LETTER_COUNT_LEVELS[difficulty];
    const letter = rng.pick([...ALPHABET]);
    const answer = rng.int(level.counts[0], level.counts[1]);
    let text = drawText(rng, level, letter);
    while (text.replace(/ /g, '').length < answer) text = drawText(rng, level, letter);
    text = plantLetter(rng, text, letter, answer);
    const prompt = rng.pick(LETTER_COUNT_PROMPTS).replace('{letter}', letter).replace('{text}', text);
    return { prompt, data: { text, letter, answer }, key: text };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    const { text, letter, answer } = task.data as { text: string; letter: string; answer: number };
    const worked = toolDidTheWork(trajectory, {
      tools: ['js'],
      mentions: (code) => code.includes(text) && code.includes(letter),
      result: (value) => integerAnswer(value) === answer,
    });
    return scoreParts(worked, integerAnswer(finalAnswer(trajectory)) === answer);
  },
  expert(task: Task): string[] {
    const code = `${jsString(String(task.data.text))}.split(${jsString(String(task.data.letter))}).length - 1`;
    return [callTurn('Count with js.', [{ name: 'js', arguments: { code } }]), answerTurn(String(task.data.answer))];
  },
};
