/**
 * Task-blind policies: what a policy that does not do the task can score. Each one ignores what the
 * task asks (it may echo the question, guess the most common answer, or make a tool call that does not
 * depend on the question) and answers. An environment whose success one of these reaches beyond the
 * environment's declared luck (`Environment.chance`) pays for something other than the task; the
 * learning benchmark prints the best of them beside every success rate.
 *
 * These are the policies we would try if we wanted to cheat: constants, the training split's most
 * common answer, echoes of the question (its numbers, its quoted text, all of it), junk and probing tool
 * calls followed by a guess or by an echo of the tool's output, and fixed recipes that a careless
 * environment would accept (sum of all the numbers, delete every .tmp file, commit everything).
 */
import type { ChatMessage, Split, Task } from '../contracts.ts';
import type { Environment } from '../envs/types.ts';
import { deriveSeed } from '../rng.ts';
import { evaluatePolicy } from './evaluate.ts';
import type { Policy } from './policy.ts';
import { ScriptedPolicy } from './scripted-policy.ts';

/** What a blind policy may look at: the question text and the tools' outputs, never the task's data. */
interface Seen {
  question: string;
  lastOutput: string;
}

/** A blind policy: the tool calls it makes (whatever the task), then its answer. */
interface BlindRecipe {
  name: string;
  calls: (seen: Seen) => { name: string; arguments: Record<string, string> }[];
  answer: (seen: Seen) => string;
}

const numbersIn = (text: string): string[] => text.match(/-?\d+/g) ?? [];
const quotedIn = (text: string): string => /'([^']*)'/.exec(text)?.[1] ?? /"([^"]*)"/.exec(text)?.[1] ?? '';

/** Calls that read the sandbox without knowing what the question asks about, per tool. */
const PROBES: Record<string, string[]> = {
  calc: ['1 + 1'],
  js: ['1'],
  sh: ['ls', 'wc -l *', 'cat *'],
  git: ['log --oneline', 'branch', 'status'],
};
const ARG: Record<string, string> = { calc: 'expression', js: 'code', sh: 'command', git: 'command' };

function recipes(env: Environment, common: string): BlindRecipe[] {
  const none = () => [];
  const probes = () => env.requiredTools.flatMap((tool) => (PROBES[tool] ?? []).map((source) => ({ name: tool, arguments: { [ARG[tool]]: source } })));
  const constants = ['0', '1', '2', '3', '5', '10', 'Done.', 'yes'];
  const list: BlindRecipe[] = [
    { name: 'empty answer', calls: none, answer: () => '' },
    ...constants.map((c): BlindRecipe => ({ name: `always "${c}"`, calls: none, answer: () => c })),
    { name: `most common train answer ("${common}")`, calls: none, answer: () => common },
    { name: 'echo the question', calls: none, answer: (s) => s.question },
    { name: 'echo the quoted text', calls: none, answer: (s) => quotedIn(s.question) },
    { name: 'echo the first number', calls: none, answer: (s) => numbersIn(s.question)[0] ?? '0' },
    { name: 'echo the last number', calls: none, answer: (s) => numbersIn(s.question).at(-1) ?? '0' },
    { name: 'echo every number', calls: none, answer: (s) => numbersIn(s.question).join(' ') },
    { name: 'probing calls, then the most common answer', calls: probes, answer: () => common },
    { name: 'probing calls, then echo the last output', calls: probes, answer: (s) => s.lastOutput },
  ];
  const tools = env.requiredTools;
  if (tools.includes('calc')) {
    list.push(
      { name: 'calc of the first number, echo it', calls: (s) => [{ name: 'calc', arguments: { expression: numbersIn(s.question)[0] ?? '0' } }], answer: (s) => s.lastOutput },
      { name: 'sum of all numbers, checked by calc', calls: (s) => [{ name: 'calc', arguments: { expression: numbersIn(s.question).join(' + ') || '0' } }], answer: (s) => numbersIn(s.question).join(' + ') },
      { name: 'product of all numbers, checked by calc', calls: (s) => [{ name: 'calc', arguments: { expression: numbersIn(s.question).join(' * ') || '0' } }], answer: (s) => numbersIn(s.question).join(' * ') },
    );
  }
  if (tools.includes('js')) {
    list.push({ name: 'length of the quoted text by js, echo it', calls: (s) => [{ name: 'js', arguments: { code: `${JSON.stringify(quotedIn(s.question))}.length` } }], answer: (s) => s.lastOutput });
  }
  if (tools.includes('sh')) {
    list.push({ name: 'delete every .tmp file, list everything to list.txt', calls: () => [{ name: 'sh', arguments: { command: 'rm -f */*.tmp *.tmp; ls > list.txt' } }], answer: () => 'Done.' });
  }
  if (tools.includes('git')) {
    const git = (command: string) => ({ name: 'git', arguments: { command } });
    list.push({ name: 'branch, switch and commit everything with a common message', calls: () => [git('branch feature'), git('checkout -b dev'), git('add .'), git('commit -m "fix typo"')], answer: () => common });
  }
  return list;
}

/** A recipe as a policy: one tool call per turn, then the answer. */
function asPolicy(recipe: BlindRecipe): Policy {
  return new ScriptedPolicy({
    id: `blind:${recipe.name}`,
    turns: (context, turn) => {
      const seen = seenIn(context.messages);
      const calls = recipe.calls(seen);
      if (turn < calls.length) return `<tool_call>${JSON.stringify(calls[turn])}</tool_call>`;
      return recipe.answer(seen);
    },
  });
}

function seenIn(messages: ChatMessage[]): Seen {
  const tool = messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';
  return { question: messages.find((m) => m.role === 'user')?.content ?? '', lastOutput: tool.replace(/<\/?tool_response>/g, '').trim() };
}

/** The most common expert answer on the train split at a level: what a policy that memorised answers says. */
export function mostCommonAnswer(env: Environment, level: number, items = 300): string {
  if (!env.expert) return '1';
  const counts = new Map<string, number>();
  for (let i = 0; i < items; i++) {
    const task: Task = env.generate(deriveSeed(0, 'blind-common', env.name, level, i), level, 'train');
    const answer = env.expert(task).at(-1) ?? '';
    counts.set(answer, (counts.get(answer) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
}

export interface BlindResult {
  policy: string;
  success: number;
  n: number;
}

/** Every blind policy's success on the same held-out items an evaluation with (items, seed) uses. */
export async function evaluateBlindPolicies(env: Environment, level: number, options: { items: number; seed: number; split?: Split }): Promise<BlindResult[]> {
  const common = mostCommonAnswer(env, level);
  const results: BlindResult[] = [];
  for (const recipe of recipes(env, common)) {
    const [row] = await evaluatePolicy(asPolicy(recipe), [env], { items: options.items, seed: options.seed, levels: [level], split: options.split ?? 'test', maxSteps: 8 });
    results.push({ policy: recipe.name, success: row.success, n: row.n });
  }
  return results;
}

/** The best blind policy's success on those items. */
export async function bestBlindSuccess(env: Environment, level: number, options: { items: number; seed: number; split?: Split }): Promise<BlindResult> {
  const all = await evaluateBlindPolicies(env, level, options);
  return all.reduce((best, r) => (r.success > best.success ? r : best));
}
