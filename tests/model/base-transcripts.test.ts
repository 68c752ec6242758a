/**
 * What the base-model builder trains on (scripts/base-model): the loss weights of a transcript decide
 * which way the shipped base leans at each decision, so two of them are checked on real transcripts
 * played through the sandbox. A thought is never a copy (its first letter decides whether a turn calls a
 * tool or answers, and a copy weighs 4×), and a retry transcript's misspelt call is left out of the loss
 * (trained on, the base imitated the typos).
 */
import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { createRng } from '../../src/rng.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { copyMask } from '../../scripts/base-model/copy-mask.ts';
import { maskTypoTurn, RETRY_THOUGHT, withTypoRetry } from '../../scripts/base-model/typo-retry.ts';
import { catalogFamily } from '../../scripts/base-model/universe/lookup-families.ts';
import { worldEnvironment, type Family, type Surface } from '../../scripts/base-model/universe/world.ts';

const tokenizer = new ByteTokenizer();
const marked = (tokens: number[], mask: number[]) =>
  tokens.map((t, i) => (mask[i] ? tokenizer.decode([t]) : '\u00b7')).join('');

describe('base-model transcripts', () => {
  it('copy mask: the function name and body carried into the js call are copies; no thought is', async () => {
    const env = getEnvironment('func_trace');
    const task = env.generate(11, 1, 'train');
    const t = await expertTrajectory(env, task, {
      tokenizer,
      turns: (turns) => [
        turns[0],
        turns[1],
        `<think>I know this.</think>\n${turns[turns.length - 1].replace(/^<think>.*?<\/think>\n?/s, '')}`,
      ],
    });
    const copies = marked(t.tokens, copyMask(t, tokenizer));
    const name = (task.data as { chain: { name: string }[] }).chain[0].name;
    expect(copies).toContain(`${name}.js`); // the path in the cat call
    expect(copies).toContain(`function\u00b7${name}`); // the body in the js call
    const mask = copyMask(t, tokenizer);
    let thoughts = 0;
    for (const [start, end] of t.turn_spans) {
      const pieces = t.tokens.slice(start, end).map((tok) => tokenizer.decode([tok]));
      const open = pieces.indexOf('<think>');
      const close = pieces.indexOf('</think>');
      if (open < 0 || close < 0) continue;
      thoughts++;
      expect(
        mask.slice(start + open, start + close).every((m) => m === 0),
        `no copy in the thought "${pieces.slice(open, close + 1).join('')}"`,
      ).toBe(true);
    }
    expect(thoughts).toBe(3); // "I know this." starts with the I of the prompt's "It is in": the case that was marked
  });

  it('a retry transcript trains on reading the error and calling again, not on the misspelt call', async () => {
    const env = getEnvironment('func_trace');
    const task = env.generate(7, 1, 'train');
    const pick = createRng(3);
    const t = await expertTrajectory(env, task, { tokenizer, turns: (turns) => withTypoRetry(turns, pick) ?? turns });
    const retry = t.steps.find((s) => s.thought === RETRY_THOUGHT)!;
    expect(t.steps[retry.step_id - 1].tool_call?.error).toBeTruthy(); // the misspelt call failed in the sandbox
    const mask = maskTypoTurn(t);
    const [typoStart, typoEnd] = t.turn_spans[retry.turn - 1];
    const [retryStart, retryEnd] = t.turn_spans[retry.turn];
    expect(mask.slice(typoStart, typoEnd).every((m) => m === 0)).toBe(true);
    expect(mask.slice(retryStart, retryEnd)).toEqual(t.assistant_mask.slice(retryStart, retryEnd));
    expect(mask.filter(Boolean).length).toBe(t.assistant_mask.filter(Boolean).length - (typoEnd - typoStart));
  });

  it("a universe world's retry misspells the tool, a parameter's name or a name copied from the question; the error says so and the call made again succeeds", async () => {
    const env = worldEnvironment(catalogFamily as Family<Surface>, 4242);
    const task = env.generate(11, 1, 'train');
    const kinds = new Set<string>();
    for (let seed = 1; seed <= 18; seed++) {
      const pick = createRng(seed);
      const t = await expertTrajectory(env, task, { tokenizer, turns: (turns) => withTypoRetry(turns, pick) ?? turns });
      const retry = t.steps.find((s) => s.thought === RETRY_THOUGHT)!;
      const misspelt = t.steps[retry.step_id - 1];
      expect(retry.tool_call!.error).toBeNull();
      expect(t.success).toBe(true);
      const wrongKeys = Object.keys(misspelt.tool_call!.parameters).filter((k) => !(k in retry.tool_call!.parameters));
      if (wrongKeys.length > 0) {
        kinds.add('parameter');
        const [expected] = Object.keys(retry.tool_call!.parameters).filter(
          (k) => !(k in misspelt.tool_call!.parameters),
        );
        expect(misspelt.tool_call!.error).toContain(`missing argument "${expected}"`);
        expect(Object.values(misspelt.tool_call!.parameters)).toEqual(Object.values(retry.tool_call!.parameters));
      } else if (misspelt.tool_call!.tool_name === retry.tool_call!.tool_name) {
        kinds.add('argument');
        expect(misspelt.tool_call!.error).toMatch(/no product named/);
        expect(misspelt.tool_call!.parameters).not.toEqual(retry.tool_call!.parameters);
      } else {
        kinds.add('tool');
        expect(misspelt.tool_call!.error).toContain(
          `unknown tool "${misspelt.tool_call!.tool_name}"; available tools: `,
        );
        expect(misspelt.tool_call!.error).toContain(retry.tool_call!.tool_name);
        expect(misspelt.thought).toContain(misspelt.tool_call!.tool_name); // the thought names the same wrong tool
      }
    }
    expect([...kinds].sort()).toEqual(['argument', 'parameter', 'tool']);
  });
});
