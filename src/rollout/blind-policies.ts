/**
 * Task-blind policies: what a policy that does not do the task can score. Each one ignores what the
 * task asks, or uses only part of it, and answers. An environment whose success one of these reaches
 * beyond the environment's declared luck (`Environment.chance`) pays for something other than the task;
 * the learning benchmark prints the best of them beside every success rate.
 *
 * These are the policies we would try if we wanted to cheat, each a probe (the tool calls it makes) and a
 * reading (what it answers from the question and the last tool output), generic by tool so every
 * environment gets those its tools allow:
 * - constants, the training split's most common answer, echoes of the question (its numbers, its quoted
 *   text, all of it);
 * - fixed formulas over the question's numbers (larger − smaller, larger / smaller, smaller − larger,
 *   a − b, a / b, a × b, a + b of the first two; the sum and the product), read from all its numbers,
 *   from those after the first (a question that states its target first) or from the last two; answered
 *   as the value, or through calc / js as the expression or the tool's output;
 * - probes that read the sandbox whatever the question (`ls`, `wc -l *`, `cat *`, `cat` of every file one
 *   folder down, `grep -r . .`, `find .`, `git log -1`, `git log --oneline -n 1`, `git branch`,
 *   `git status`, `git rev-parse --abbrev-ref HEAD`, `git diff --name-only` …, git ones also through sh),
 *   each alone and all in a row, followed by an echo of the output: all of it, its first or last line,
 *   its first or last word, or the last word of its first line;
 * - every file listed, then all of them read in one command, the command repeated once per step a chain
 *   could need (a scorer that only orders its checks counts each repeat as the next step);
 * - fixed changes a careless environment would accept (delete every .tmp file, commit everything).
 *
 * A recipe may read the question text and tool outputs, never `task.data`. A formula that the question
 * itself writes out ("What is 23 + 58?" for a + b) is the task, not a shortcut: on such an item the
 * formula recipe answers nothing.
 *
 * Every recipe runs on the distinct items an evaluation with the same (items, seed) uses (evaluatePolicy,
 * `evaluationTasks`). Recipes share episodes, so the whole family costs about one episode per probe and
 * item: readings after the same calls are scored on copies of one episode with their own final answer,
 * and the read-only probes run one after another in a single episode per item, each scored on the cut
 * that keeps only its own call (what it would have seen alone, as nothing before it changed the sandbox).
 * A reading whose answer would parse as a tool call runs as its own episodes instead.
 */
import { isSuccess, type ChatMessage, type Split, type Task, type Trajectory } from '../contracts.ts';
import type { Environment } from '../envs/types.ts';
import { parseAssistant } from '../format/index.ts';
import { deriveSeed } from '../rng.ts';
import { evaluatePolicy, evaluationTasks, type EvalOptions } from './evaluate.ts';
import type { Policy } from './policy.ts';
import { ScriptedPolicy } from './scripted-policy.ts';

/** What a blind policy may look at: the question text and the tools' outputs, never the task's data. */
interface Seen {
  question: string;
  lastOutput: string;
  /** Every tool output so far, in order. */
  outputs: string[];
}

interface Call {
  name: string;
  arguments: Record<string, string>;
}

/** The tool calls a blind policy makes, whatever the task (one per turn), before it answers. */
interface Probe {
  name: string;
  calls: (seen: Seen) => Call[];
  /** True when the calls use part of the question (its numbers, its quoted text): a part-blind recipe. */
  readsQuestion?: boolean;
}

/** What a blind policy answers after its probe. */
interface Reading {
  name: string;
  answer: (seen: Seen) => string;
  /** True when the answer uses part of the question: a part-blind recipe. */
  readsQuestion?: boolean;
}

/** Recipes sharing one probe: one episode per item, scored once per reading. */
interface RecipeGroup {
  probe: Probe;
  readings: Reading[];
  /**
   * The probe's fixed calls when they only read the sandbox (ls, cat, git log …): such probes run one
   * after another in one shared episode per item, each then scored as if it had been the only one.
   */
  readOnly?: Call[];
}

const numbersIn = (text: string): string[] => text.match(/-?\d+/g) ?? [];
const quotedIn = (text: string): string => /'([^']*)'/.exec(text)?.[1] ?? /"([^"]*)"/.exec(text)?.[1] ?? '';
const linesOf = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const wordsOf = (text: string): string[] => text.split(/\s+/).filter(Boolean);

/** Calls that read the sandbox without knowing what the question asks about, per tool. */
const PROBES: Record<string, string[]> = {
  calc: ['1 + 1'],
  js: ['1'],
  sh: ['ls', 'wc -l *', 'cat *', 'cat */*', 'grep -r . .', 'find .'],
  git: [
    'log -1',
    'log --oneline -n 1',
    'log --oneline',
    'branch',
    'status',
    'rev-parse --abbrev-ref HEAD',
    'diff --name-only',
  ],
};
/** git probes run through sh too (sh routes `git …` to the git tool when the environment has one). */
const GIT_THROUGH_SH = ['git log -1', 'git log --oneline -n 1', 'git branch', 'git status'];
const ARG: Record<string, string> = { calc: 'expression', js: 'code', sh: 'command', git: 'command' };
const call = (tool: string, source: string): Call => ({ name: tool, arguments: { [ARG[tool]]: source } });

/** Echoes of the last tool output. */
const ECHOES: Reading[] = [
  { name: 'echo the output', answer: (s) => s.lastOutput },
  { name: 'echo its first line', answer: (s) => linesOf(s.lastOutput)[0] ?? '' },
  { name: 'echo its last line', answer: (s) => linesOf(s.lastOutput).at(-1) ?? '' },
  { name: 'echo its first word', answer: (s) => wordsOf(s.lastOutput)[0] ?? '' },
  { name: 'echo its last word', answer: (s) => wordsOf(s.lastOutput).at(-1) ?? '' },
  { name: 'echo the last word of its first line', answer: (s) => wordsOf(linesOf(s.lastOutput)[0] ?? '').at(-1) ?? '' },
];

/** A formula over the question's numbers: its expression and value, or null when there are too few numbers. */
interface Formula {
  name: string;
  apply: (numbers: number[]) => { expression: string; value: number } | null;
}

const term = (n: number): string => (n < 0 ? `(${n})` : String(n));
/** A formula over the first two numbers, written `x op y` with x and y chosen from them by `order`. */
const pairFormula = (
  name: string,
  op: '+' | '-' | '*' | '/',
  order: (a: number, b: number) => [number, number],
): Formula => ({
  name,
  apply: (ns) => {
    if (ns.length < 2) return null;
    const [x, y] = order(ns[0], ns[1]);
    const value = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : x / y;
    return { expression: `${term(x)} ${op} ${term(y)}`, value };
  },
});
const asGiven = (a: number, b: number): [number, number] => [a, b];
const largerFirst = (a: number, b: number): [number, number] => [Math.max(a, b), Math.min(a, b)];
const smallerFirst = (a: number, b: number): [number, number] => [Math.min(a, b), Math.max(a, b)];

/** The fixed formulas a shortcut would try on a question's numbers (countdown's "larger − smaller" among them). */
const BASE_FORMULAS: readonly Formula[] = [
  pairFormula('larger − smaller', '-', largerFirst),
  pairFormula('larger / smaller', '/', largerFirst),
  pairFormula('smaller − larger', '-', smallerFirst),
  pairFormula('a − b', '-', asGiven),
  pairFormula('a / b', '/', asGiven),
  pairFormula('a × b', '*', asGiven),
  pairFormula('a + b', '+', asGiven),
  {
    name: 'sum',
    apply: (ns) =>
      ns.length >= 2 ? { expression: ns.map(term).join(' + '), value: ns.reduce((a, b) => a + b, 0) } : null,
  },
  {
    name: 'product',
    apply: (ns) =>
      ns.length >= 2 ? { expression: ns.map(term).join(' * '), value: ns.reduce((a, b) => a * b, 1) } : null,
  },
];

/**
 * Which of the question's numbers a formula reads: all of them (a, b are the first two), those after the
 * first (a question that states its target first, "Make 24 from 3, 8"), or the last two.
 */
const NUMBER_VIEWS: { name: string; pick: (ns: number[]) => number[]; pairsOnly: boolean }[] = [
  { name: 'the numbers', pick: (ns) => ns, pairsOnly: false },
  { name: 'the numbers after the first', pick: (ns) => ns.slice(1), pairsOnly: false },
  { name: 'the last two numbers', pick: (ns) => ns.slice(-2), pairsOnly: true },
];

const FORMULAS: readonly Formula[] = NUMBER_VIEWS.flatMap((view) =>
  BASE_FORMULAS.filter((f) => !view.pairsOnly || (f.name !== 'sum' && f.name !== 'product')).map((f): Formula => ({
    name: `${f.name} of ${view.name}`,
    apply: (ns) => f.apply(view.pick(ns)),
  })),
);

/** The formula on a question, or null when the question has too few numbers or itself writes the formula out. */
function formulaFor(formula: Formula, question: string): { expression: string; value: number } | null {
  const result = formula.apply(numbersIn(question).map(Number));
  if (result === null) return null;
  const squash = (t: string) => t.replace(/[\s()]/g, '');
  return squash(question).includes(squash(result.expression)) ? null : result;
}

const NONE: Probe = { name: 'no call', calls: () => [] };

function recipeGroups(env: Environment, common: string): RecipeGroup[] {
  const tools = env.requiredTools;
  return [
    { probe: NONE, readings: blindAnswers(common) },
    ...probingGroups(tools, common),
    ...formulaToolGroups(tools),
    ...ownToolGroups(env, common),
    ...toolTrickGroups(tools, common),
  ];
}

/** Answers without a call: constants, the most common train answer, echoes of the question, formulas' values. */
function blindAnswers(common: string): Reading[] {
  const constants = ['0', '1', '2', '3', '5', '10', 'Done.', 'yes'];
  return [
    { name: 'empty answer', answer: () => '' },
    ...constants.map((c): Reading => ({ name: `always "${c}"`, answer: () => c })),
    { name: `most common train answer ("${common}")`, answer: () => common },
    ...[
      { name: 'echo the question', answer: (s: Seen) => s.question },
      { name: 'echo the quoted text', answer: (s: Seen) => quotedIn(s.question) },
      { name: 'echo the first number', answer: (s: Seen) => numbersIn(s.question)[0] ?? '0' },
      { name: 'echo the last number', answer: (s: Seen) => numbersIn(s.question).at(-1) ?? '0' },
      { name: 'echo every number', answer: (s: Seen) => numbersIn(s.question).join(' ') },
    ].map((r): Reading => ({ ...r, readsQuestion: true })),
    ...FORMULAS.map((f): Reading => ({
      readsQuestion: true,
      name: `${f.name}, answered as its value`,
      answer: (s) => {
        const result = formulaFor(f, s.question);
        return result === null ? '' : String(result.value);
      },
    })),
  ];
}

/** Every probe of the environment's tools in a row, then a guess or an echo; and each probe alone, then an echo. */
function probingGroups(tools: readonly string[], common: string): RecipeGroup[] {
  const groups: RecipeGroup[] = [];
  const all = tools.flatMap((tool) => (PROBES[tool] ?? []).map((source) => call(tool, source)));
  if (all.length) {
    groups.push({
      probe: { name: 'every probing call', calls: () => all },
      readings: [{ name: 'the most common answer', answer: () => common }, ...ECHOES],
      readOnly: all,
    });
  }
  const throughSh =
    tools.includes('sh') && tools.includes('git') ? GIT_THROUGH_SH.map((source) => call('sh', source)) : [];
  for (const c of [...all, ...throughSh])
    groups.push({
      probe: { name: `${c.name} \`${Object.values(c.arguments)[0]}\``, calls: () => [c] },
      readings: ECHOES,
      readOnly: [c],
    });
  return groups;
}

/** Formulas through a tool: the expression checked by calc (or run by js), answered as the expression or the tool's output. */
function formulaToolGroups(tools: readonly string[]): RecipeGroup[] {
  const groups: RecipeGroup[] = [];
  for (const tool of ['calc', 'js'].filter((t) => tools.includes(t))) {
    for (const f of FORMULAS) {
      groups.push({
        probe: {
          readsQuestion: true,
          name: `${f.name} by ${tool}`,
          calls: (s) => {
            const r = formulaFor(f, s.question);
            return r === null ? [] : [call(tool, r.expression)];
          },
        },
        readings: [
          { name: 'answer the expression', answer: (s) => formulaFor(f, s.question)?.expression ?? '' },
          { name: 'echo the output', answer: (s) => (formulaFor(f, s.question) === null ? '' : s.lastOutput) },
        ],
      });
    }
  }
  return groups;
}

/**
 * An environment's own tools (a module's): each called with every argument "1", then an echo or the common answer.
 * Not read-only: a call may change the episode's state (a try used up), so each runs its own episodes.
 */
function ownToolGroups(env: Environment, common: string): RecipeGroup[] {
  const groups: RecipeGroup[] = [];
  for (const schema of env.ownTools) {
    const blindCall: Call = {
      name: schema.name,
      arguments: Object.fromEntries(Object.keys(schema.parameters.properties).map((k) => [k, '1'])),
    };
    groups.push({
      probe: { name: `${schema.name} ${JSON.stringify(blindCall.arguments)}`, calls: () => [blindCall] },
      readings: [...ECHOES, { name: 'the most common answer', answer: () => common }],
    });
  }
  return groups;
}

/** Blind uses of js, sh and git: the quoted text's length, reading or deleting every file, committing everything. */
function toolTrickGroups(tools: readonly string[], common: string): RecipeGroup[] {
  const groups: RecipeGroup[] = [];
  if (tools.includes('js')) {
    groups.push({
      probe: {
        readsQuestion: true,
        name: 'length of the quoted text by js',
        calls: (s) => [call('js', `${JSON.stringify(quotedIn(s.question))}.length`)],
      },
      readings: [{ name: 'echo it', answer: (s) => s.lastOutput }],
    });
  }
  if (tools.includes('sh')) {
    // The same read-everything command once per step a chain could need: what meets every need "in order" where
    // a scorer only checks that each need's call comes later than the one before.
    const everyFile = (s: Seen) =>
      linesOf(s.outputs[0] ?? '')
        .filter((l) => l.startsWith('./'))
        .join(' ');
    groups.push({
      probe: {
        name: 'list every file, then read them all at once, 6 times',
        calls: (s) => [
          call('sh', 'find . -type f'),
          ...(s.outputs.length ? Array.from({ length: 6 }, () => call('sh', `cat ${everyFile(s)}`)) : []),
        ],
      },
      readings: [...ECHOES, { name: 'the most common answer', answer: () => common }],
    });
    groups.push({
      probe: {
        name: 'delete every .tmp file, list everything to list.txt',
        calls: () => [call('sh', 'rm -f */*.tmp *.tmp; ls > list.txt')],
      },
      readings: [{ name: 'say done', answer: () => 'Done.' }],
    });
  }
  if (tools.includes('git')) {
    const git = (command: string) => call('git', command);
    groups.push({
      probe: {
        name: 'branch, switch and commit everything with a common message',
        calls: () => [git('branch feature'), git('checkout -b dev'), git('add .'), git('commit -m "fix typo"')],
      },
      readings: [{ name: 'the most common answer', answer: () => common }],
    });
  }
  return groups;
}

export type BlindKind = 'task-blind' | 'part-blind';

const recipeKind = (group: RecipeGroup, reading: Reading): BlindKind =>
  group.probe.readsQuestion || reading.readsQuestion ? 'part-blind' : 'task-blind';

const recipeName = (group: RecipeGroup, reading: Reading): string =>
  group.probe === NONE ? reading.name : `${group.probe.name}, then ${reading.name}`;

/** A probe and a reading as a policy: one tool call per turn, then the answer. */
function asPolicy(probe: Probe, reading: Reading): Policy {
  return new ScriptedPolicy({
    id: `blind:${probe.name}/${reading.name}`,
    turns: (context, turn) => {
      const seen = seenIn(context.messages);
      const calls = probe.calls(seen);
      if (turn < calls.length) return `<tool_call>${JSON.stringify(calls[turn])}</tool_call>`;
      return reading.answer(seen);
    },
  });
}

function seenIn(messages: ChatMessage[]): Seen {
  const outputs = messages
    .filter((m) => m.role === 'tool')
    .map((m) => m.content.replace(/<\/?tool_response>/g, '').trim());
  return {
    question: messages.find((m) => m.role === 'user')?.content ?? '',
    lastOutput: outputs.at(-1) ?? '',
    outputs,
  };
}

/** The episode as if its last turn had answered `text` instead (the same calls and outputs before it). */
function withAnswer(trajectory: Trajectory, text: string): Trajectory | null {
  const parsed = parseAssistant(text);
  if (parsed.calls.length > 0 || trajectory.finish_reason !== 'answer') return null;
  const messages = trajectory.messages.slice(0, -1);
  return {
    ...trajectory,
    final_response: parsed.answer,
    messages: [...messages, { role: 'assistant', content: text }],
  };
}

/** The most common expert answer on the train split at a level: what a policy that memorised answers says. */
function mostCommonAnswer(env: Environment, level: number, items = 300): string {
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
  /**
   * `task-blind`: the recipe never reads the question (constants, fixed calls, echoes of tool output);
   * `part-blind`: it reads part of it (its numbers, its quoted text) but not what it asks.
   */
  kind: BlindKind;
  success: number;
  /** Distinct items the policy ran on (the evaluation's n). */
  n: number;
}

export interface BlindOptions {
  items: number;
  seed: number;
  split?: Split;
  /** Stops the evaluation between episodes (an audit's budget). */
  signal?: AbortSignal;
}

/**
 * The episode cut down to some of its tool turns (by index), answered with `text`: what a policy that
 * made only those calls would have seen and scored, when every call only read the sandbox. Null when the
 * answer would parse as a tool call.
 */
function cutEpisode(trajectory: Trajectory, turns: number[], text: string): Trajectory | null {
  const parsed = parseAssistant(text);
  if (parsed.calls.length > 0) return null;
  const m = trajectory.messages;
  return {
    ...trajectory,
    steps: turns.map((i, j) => ({ ...trajectory.steps[i], step_id: j, turn: j })),
    messages: [m[0], m[1], ...turns.flatMap((i) => [m[2 + 2 * i], m[3 + 2 * i]]), { role: 'assistant', content: text }],
    final_response: parsed.answer,
    finish_reason: 'answer',
  };
}

/** Every blind policy's success on the same distinct held-out items an evaluation with (items, seed) uses. */
export async function evaluateBlindPolicies(
  env: Environment,
  level: number,
  options: BlindOptions,
): Promise<BlindResult[]> {
  const common = mostCommonAnswer(env, level);
  const split = options.split ?? 'test';
  const run: BlindRun = {
    env,
    level,
    evalOptions: {
      items: options.items,
      seed: options.seed,
      levels: [level],
      split,
      maxSteps: 8,
      signal: options.signal,
    },
    tasks: new Map(
      evaluationTasks(env, level, { items: options.items, seed: options.seed, split }).map((t) => [t.id, t]),
    ),
    signal: options.signal,
    results: [],
  };
  const groups = recipeGroups(env, common);
  await scoreReadOnlyGroups(run, groups);
  // The rest: one episode per item for the first reading, the others scored on it with their own answer.
  for (const group of groups.filter((g) => !g.readOnly)) {
    const [first, ...others] = group.readings;
    const episodes: Trajectory[] = [];
    const [row] = await evaluatePolicy(asPolicy(group.probe, first), [env], {
      ...run.evalOptions,
      onEpisode: (t) => episodes.push(t),
    });
    run.results.push({
      policy: recipeName(group, first),
      kind: recipeKind(group, first),
      success: row.success,
      n: row.n,
    });
    await scoreReadings(run, group, others, episodes, withAnswer);
  }
  return run.results;
}

/** One level's blind evaluation: its evaluation settings and items, and the results so far. */
interface BlindRun {
  env: Environment;
  level: number;
  evalOptions: EvalOptions;
  tasks: Map<string, Task>;
  signal: AbortSignal | undefined;
  results: BlindResult[];
}

/** The read-only probes: one episode per item making every such call once, each group scored on its own calls. */
async function scoreReadOnlyGroups(run: BlindRun, groups: RecipeGroup[]): Promise<void> {
  const shared: Call[] = [];
  for (const group of groups)
    for (const c of group.readOnly ?? [])
      if (!shared.some((d) => JSON.stringify(d) === JSON.stringify(c))) shared.push(c);
  if (!shared.length) return;
  const episodes: Trajectory[] = [];
  await evaluatePolicy(
    asPolicy({ name: 'every read-only probe', calls: () => shared }, { name: 'nothing', answer: () => '' }),
    [run.env],
    { ...run.evalOptions, maxSteps: shared.length + 1, onEpisode: (t) => episodes.push(t) },
  );
  const complete = episodes.filter((e) => e.steps.length === shared.length);
  if (complete.length !== episodes.length)
    throw new Error(`blind policies: the shared probe episode on ${run.env.name} level ${run.level} stopped early`);
  for (const group of groups.filter((g) => g.readOnly)) {
    const turns = group.readOnly!.map((c) => shared.findIndex((d) => JSON.stringify(d) === JSON.stringify(c)));
    await scoreReadings(run, group, group.readings, episodes, (episode, text) => cutEpisode(episode, turns, text));
  }
}

/** Scores each reading on the episodes as `cut` reshapes them; a reading `cut` cannot express runs its own episodes. */
async function scoreReadings(
  run: BlindRun,
  group: RecipeGroup,
  readings: Reading[],
  episodes: Trajectory[],
  cut: (episode: Trajectory, text: string) => Trajectory | null,
): Promise<void> {
  for (const reading of readings) {
    let wins = 0;
    let cuttable = true;
    for (const episode of episodes) {
      run.signal?.throwIfAborted();
      const text = reading.answer(seenIn(cut(episode, '')?.messages ?? episode.messages));
      const copy = cut(episode, text);
      if (copy === null) {
        cuttable = false;
        break;
      }
      if (isSuccess(await run.env.evaluate(run.tasks.get(episode.task_id)!, copy))) wins++;
    }
    if (cuttable) {
      run.results.push({
        policy: recipeName(group, reading),
        kind: recipeKind(group, reading),
        success: episodes.length ? wins / episodes.length : 0,
        n: episodes.length,
      });
    } else {
      const [own] = await evaluatePolicy(asPolicy(group.probe, reading), [run.env], run.evalOptions);
      run.results.push({
        policy: recipeName(group, reading),
        kind: recipeKind(group, reading),
        success: own.success,
        n: own.n,
      });
    }
  }
}

const best = (results: BlindResult[]): BlindResult => results.reduce((b, r) => (r.success > b.success ? r : b));

/** The best blind policy's success on those items. */
export async function bestBlindSuccess(env: Environment, level: number, options: BlindOptions): Promise<BlindResult> {
  return best(await evaluateBlindPolicies(env, level, options));
}

/**
 * The best task-blind and the best part-blind policy on those items, what a success rate is reported
 * beside; `part` is null when no recipe reads the question on this environment (it has none to read).
 */
export async function bestBlindByKind(
  env: Environment,
  level: number,
  options: BlindOptions,
): Promise<{ task: BlindResult; part: BlindResult | null }> {
  const all = await evaluateBlindPolicies(env, level, options);
  const part = all.filter((r) => r.kind === 'part-blind');
  return { task: best(all.filter((r) => r.kind === 'task-blind')), part: part.length ? best(part) : null };
}
