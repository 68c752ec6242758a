/**
 * An episode in each of the small-model call formats beyond Hermes and Llama's JSON (Mistral, Qwen3-Coder,
 * FunctionGemma, Phi-4-mini, SmolLM3, DeepSeek, gpt-oss), through runEpisode with a policy that samples
 * the family's own turns and stop tokens, on a tokenizer whose chat template is the family's
 * (tests/fixtures/family-templates/): the codec is chosen from the template and the special tokens, the
 * calls are read in the family's format and run, the tools reach the model where its template lists them,
 * and the stored trajectory's token ids are exactly the template's rendering of its stored messages (what
 * was sampled is what trains), one call per turn and two.
 */
import { describe, expect, it } from 'vitest';
import { runEpisode } from '../../src/rollout/episode.ts';
import { familyTokenizer, type Family } from '../format/family-templates.ts';
import {
  answer,
  CASES,
  env,
  expectTokensAreTheRendering,
  expression,
  FamilyPolicy,
  task,
  templateOf,
  type Case,
} from './family-scripts.ts';

describe('an episode in each small-model call format', () => {
  for (const [family, c] of Object.entries(CASES).filter(([f]) => !['qwen2.5', 'qwen3', 'llama3.1'].includes(f)) as [
    Family,
    Case,
  ][]) {
    it(`${family}: codec ${c.codec} chosen, the call read and run, tools where its template puts them, tokens = the rendering`, async () => {
      const tokenizer = familyTokenizer(family);
      expect(templateOf(tokenizer).toolSupport.codec.family).toBe(c.codec);
      const turns = [{ text: c.call(expression), stop: c.callStop }, c.final];
      const t = await runEpisode({ policy: new FamilyPolicy(tokenizer, turns), env, task, seed: 1, maxSteps: 3 });

      expect(t.finish_reason).toBe('answer');
      expect(t.steps).toHaveLength(1);
      expect(t.steps[0].tool_call).toMatchObject({
        tool_name: 'calc',
        parameters: { expression },
        error: null,
        result: answer,
      });
      expect(t.steps[0].thought).toBe(c.thought ?? null);
      expect(t.final_response).toBe(answer);
      expect(await env.evaluate(task, t)).toBe(1);
      expectTokensAreTheRendering(t, tokenizer);
      const text = tokenizer.decode(t.tokens);
      expect(text.split(c.listed).length - 1).toBe(1);
      expect(t.messages[0].content).not.toContain('calc');
      // The mask covers exactly what was sampled: each turn and its stop token.
      const masked = t.tokens.filter((_, i) => t.assistant_mask[i] === 1);
      expect(tokenizer.decode(masked)).toBe(turns.map((turn) => turn.text + turn.stop).join(''));
    });

    if (c.twoCalls) {
      const twoCalls = c.twoCalls;
      it(`${family}: two calls in one turn are both run, and render back as sampled`, async () => {
        const tokenizer = familyTokenizer(family);
        const turns = [{ text: twoCalls(expression, '1+1'), stop: c.callStop }, c.final];
        const t = await runEpisode({ policy: new FamilyPolicy(tokenizer, turns), env, task, seed: 1, maxSteps: 3 });
        expect(t.steps.map((s) => s.tool_call?.result)).toEqual([answer, '2']);
        expect(t.finish_reason).toBe('answer');
        expectTokensAreTheRendering(t, tokenizer);
      });
    }
  }
});
