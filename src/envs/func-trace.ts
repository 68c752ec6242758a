/**
 * func_trace: find with sh, run with js. The asked function lives in `lib/<name>.js` and calls another
 * (`// uses lib/shift.js` above it), which may call another, down to one that calls nothing. The
 * answer is the asked call's value, found by reading every function on the chain and running them all
 * in js. Level L has L functions: L reads and a run, L + 1 calls. In RECOVERY_SHARE of the items (from
 * level 2) one file does not say what its function uses: the first run fails with
 * `ReferenceError: 'shift' is not defined`, which names the file to read, and success needs the run
 * repeated with it.
 *
 * Success: every chain file read after the one that names it (step-evidence.ts), then a successful js
 * call that defines every chain function, makes the asked call and returns the answer; and the final
 * answer is that value. Either part alone is half credit.
 */
import type { Task } from '../contracts.ts';
import { finalAnswer, integerAnswer } from './answer.ts';
import { FUNC_NAMES, FUNC_OPS, RECOVERY_SHARE, TRACE_DECOYS, TRACE_FUNCS, TRACE_PROMPT } from './data/multi-step.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { containsToken, scoreParts } from './evidence.ts';
import type { Rng } from '../rng.ts';
import { allNeedsMet, readNeed, type StepNeed } from './step-evidence.ts';
import type { EnvironmentSpec, ToolboxSetup } from './types.ts';

export interface TraceFunction {
  name: string;
  /** One line of JavaScript: `function scale(x){return shift(x)*2}`. */
  body: string;
  /** True when its file says what it uses (`// uses lib/shift.js`); always true for the last. */
  saysUses: boolean;
}

export interface FuncTraceData {
  chain: TraceFunction[];
  x: number;
  answer: number;
  files: Record<string, string>;
  /** True when the first reasonable attempt fails by design (RECOVERY_SHARE). */
  recovery: boolean;
  [key: string]: unknown;
}

const fileOf = (name: string): string => `lib/${name}.js`;

/** `x+3`, `x*2`, `x-5`, with `inner` in place of x (`shift(x)*2`). */
function operation(rng: Rng, inner: string): { text: string; apply: (v: number) => number } {
  const op = rng.pick(FUNC_OPS);
  const k = op === '*' ? rng.int(2, 3) : rng.int(2, 9);
  return { text: `${inner}${op}${k}`, apply: (v) => (op === '+' ? v + k : op === '-' ? v - k : v * k) };
}

export const funcTrace: EnvironmentSpec = {
  name: 'func_trace',
  description: 'Work out what a function returns: read it and every function it uses, then run them in js.',
  tags: ['code', 'multi-step', 'multi-tool', 'tool-use'],
  requiredTools: ['sh', 'js'],
  systemStyle: 'compact',
  sample(rng, difficulty) {
    const n = TRACE_FUNCS[difficulty];
    const names = rng.shuffle(FUNC_NAMES);
    const x = rng.int(1, 9);
    const silent = n >= 2 && rng.chance(RECOVERY_SHARE) ? rng.int(0, n - 2) : -1;
    // Built from the last function (which calls nothing) up to the asked one.
    const chain: TraceFunction[] = [];
    const ops: ((v: number) => number)[] = [];
    for (let i = n - 1; i >= 0; i--) {
      const op = operation(rng, i === n - 1 ? 'x' : `${names[i + 1]}(x)`);
      chain.unshift({ name: names[i], body: `function ${names[i]}(x){return ${op.text}}`, saysUses: i !== silent });
      ops.unshift(op.apply);
    }
    const answer = ops.reduceRight((v, apply) => apply(v), x);
    const files: Record<string, string> = {};
    for (const name of names.slice(n, n + TRACE_DECOYS))
      files[fileOf(name)] = `function ${name}(x){return ${operation(rng, 'x').text}}\n`;
    chain.forEach((f, i) => {
      const uses = i + 1 < n && f.saysUses ? `// uses ${fileOf(chain[i + 1].name)}\n` : '';
      files[fileOf(f.name)] = `${uses}${f.body}\n`;
    });
    return {
      prompt: TRACE_PROMPT.replaceAll('{name}', chain[0].name).replace('{x}', String(x)),
      data: { chain, x, answer, files, recovery: silent >= 0 } satisfies FuncTraceData,
      key: `${chain.map((f) => `${f.body}${f.saysUses ? '' : '?'}`).join(';')}|${x}`,
    };
  },
  toolbox: (task: Task): ToolboxSetup => ({ files: (task.data as FuncTraceData).files }),
  evaluate(task, trajectory) {
    const { chain, x, answer } = task.data as FuncTraceData;
    const needs: StepNeed[] = chain.map((f, i) => readNeed(fileOf(f.name), f.body, i > 0 ? [i - 1] : undefined));
    needs.push({
      after: [chain.length - 1],
      tools: ['js'],
      met: (source, result) =>
        source.includes(`${chain[0].name}(${x})`) &&
        chain.every((f) => containsToken(source, `function ${f.name}`)) &&
        integerAnswer(result) === answer,
    });
    return scoreParts(allNeedsMet(trajectory, needs), integerAnswer(finalAnswer(trajectory)) === answer);
  },
  expert(task) {
    const { chain, x, answer } = task.data as FuncTraceData;
    const run = (upTo: number) => ({
      name: 'js',
      arguments: {
        code: `${chain
          .slice(0, upTo)
          .map((f) => f.body)
          .join('\n')}\n${chain[0].name}(${x})`,
      },
    });
    const turns: string[] = [];
    chain.forEach((f, i) => {
      const think =
        i === 0 ? 'Read it.' : chain[i - 1].saysUses ? 'Read what it uses.' : `${f.name} is missing. Read it.`;
      turns.push(callTurn(think, [{ name: 'sh', arguments: { command: `cat ${fileOf(f.name)}` } }]));
      // A file that does not say what it uses: run what is known, and let the error name the rest.
      if (!f.saysUses && i + 1 < chain.length) turns.push(callTurn('Run it.', [run(i + 1)]));
    });
    turns.push(callTurn('Run it.', [run(chain.length)]));
    return [...turns, answerTurn(String(answer))];
  },
};
