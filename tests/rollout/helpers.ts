/** Test helpers: a trivial character-level tokenizer with ChatML specials, and a minimal trajectory. */
import type { Trajectory } from '../../src/contracts.ts';
import type { TextTokenizer } from '../../src/tokenizer/tokenizer.ts';

const IM_START = '<|im_start|>';
const IM_END = '<|im_end|>';

/** ids 0/1 are `<|im_start|>`/`<|im_end|>`, every other character is its code point + 3 (2 is eos/pad). */
export function charTokenizer(): TextTokenizer {
  return {
    vocabSize: 0x110000 + 3,
    imEndId: 1,
    eosId: 2,
    padId: 2,
    stopIds: [1, 2],
    encode(text: string): number[] {
      const ids: number[] = [];
      for (let i = 0; i < text.length;) {
        if (text.startsWith(IM_START, i)) {
          ids.push(0);
          i += IM_START.length;
        } else if (text.startsWith(IM_END, i)) {
          ids.push(1);
          i += IM_END.length;
        } else {
          const cp = text.codePointAt(i)!;
          ids.push(cp + 3);
          i += cp > 0xffff ? 2 : 1;
        }
      }
      return ids;
    },
    decode(ids: number[]): string {
      return ids
        .map((id) => (id === 0 ? IM_START : id === 1 ? IM_END : id === 2 ? '' : String.fromCodePoint(id - 3)))
        .join('');
    },
  };
}

export function fakeTrajectory(overrides: Partial<Trajectory> = {}): Trajectory {
  return {
    id: 't1',
    task_id: 'arith_tool/train/1/1',
    task_description: 'What is 1 + 2?',
    model_id: 'test',
    steps: [],
    final_response: '3',
    success: null,
    judge_score: 1,
    token_count: 5,
    wall_time_seconds: 0.1,
    env: 'arith_tool',
    split: 'train',
    difficulty: 1,
    seed: 1,
    group_id: 'g1',
    run_id: null,
    messages: [
      { role: 'user', content: 'What is 1 + 2?' },
      { role: 'assistant', content: '3' },
    ],
    tools: [],
    tokens: [10, 11, 12, 13, 14],
    assistant_mask: [0, 0, 1, 1, 0],
    logprobs: [0, 0, -0.5, -0.25, 0],
    turn_spans: [[2, 4]],
    finish_reason: 'answer',
    votes: [],
    sampling: { temperature: 0.7, top_k: 0, top_p: 1, max_new_tokens: 64 },
    created_at: 0,
    ...overrides,
  };
}
