import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import { renderChatML } from '../../src/format/index.ts';
import { expertTranscripts } from '../../src/rollout/expert.ts';
import { charTokenizer } from './helpers.ts';

describe('expertTranscripts', () => {
  it('builds scored, tokenized SFT transcripts from train items only', async () => {
    const tokenizer = charTokenizer();
    const env = getEnvironment('letter_count');
    const batch = await expertTranscripts(env, { perLevel: 3, difficulties: [1, 2], tokenizer, baseSeed: 10 });
    expect(batch).toHaveLength(6);
    expect(batch.map((t) => t.difficulty)).toEqual([1, 1, 1, 2, 2, 2]);
    for (const t of batch) {
      expect(t.split).toBe('train');
      expect(t.success).toBe(true);
      expect(t.model_id).toBe('expert:letter_count');
      expect(tokenizer.decode(t.tokens)).toBe(renderChatML(t.messages));
      // Short, natural turns: a brief thought and one call, then the bare answer.
      const [call, answer] = t.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
      expect(call).toMatch(
        /^<think>[^<]{1,40}<\/think>\n<tool_call>\{"name":"js","arguments":\{"code":".*"\}\}<\/tool_call>$/,
      );
      expect(answer).toMatch(/^\d+$/);
    }
  });
});
