/**
 * Copy drill: the user lists words and names never seen together (random letter strings among them),
 * the assistant repeats them exactly. Builds 2–4 copied only what they had memorised: every build
 * family's names came from short word lists, so in a new world the base wrote a name it knew ("bent
 * paddle") for the one the question gave, and random letter strings stayed at 10–16% copy accuracy. Text
 * that can only be reproduced by looking back at the context is what makes a small transformer learn to
 * copy (an induction head); a level is the number of items to carry.
 */
import type { Task, Trajectory } from '../../../src/contracts.ts';
import { cleanAnswer, finalAnswer } from '../../../src/envs/answer.ts';
import { defineEnvironment } from '../../../src/envs/define.ts';
import { answerTurn } from '../../../src/envs/expert-text.ts';
import type { Rng } from '../../../src/rng.ts';
import { letters, thingNames, personNames, WORDS } from './surface.ts';

const PROMPTS = [
  'Repeat exactly: {items}',
  'Say these back, in order: {items}',
  'Copy this list: {items}',
  'Write back exactly what follows. {items}',
];

/** One item to carry: a product, a person, a word, or letters that are no word at all. */
function item(rng: Rng): string {
  const r = rng.next();
  if (r < 0.3) return thingNames(rng, 1)[0];
  if (r < 0.5) return personNames(rng, 1)[0];
  if (r < 0.7) return rng.pick([...WORDS.counter_words, ...WORDS.topics, ...WORDS.places, ...WORDS.events]);
  return letters(rng, rng.int(3, 8));
}

export const copyDrill = defineEnvironment({
  name: 'copy_drill',
  description: 'Repeat a list of words and names exactly.',
  tags: ['universe', 'copy'],
  difficulties: [1, 2, 3],
  requiredTools: [],
  sample(rng, level) {
    const items = Array.from({ length: 2 * level + rng.int(0, 2) }, () => item(rng));
    const text = items.join(', ');
    return { prompt: rng.pick(PROMPTS).replace('{items}', text), key: text, data: { answer: text } };
  },
  evaluate: (task: Task, trajectory: Trajectory) =>
    cleanAnswer(finalAnswer(trajectory)) === (task.data as { answer: string }).answer ? 1 : 0,
  expert: (task) => [answerTurn(String((task.data as { answer: string }).answer))],
});
