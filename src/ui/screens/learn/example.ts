/** A hand-made batch, clearly labelled as an example, so the lesson can teach before any run exists. */
import type { LessonBatch } from './source.ts';

const piece = (text: string, value: number | null) => ({ text, value });

export const EXAMPLE_BATCH: LessonBatch = {
  run_id: 'example',
  step: 0,
  example: true,
  advantage: 'zscore',
  reward_scale: 1,
  clip_epsilon: 0.2,
  clip_epsilon_high: null,
  groups: [
    {
      env: 'arith_tool',
      task: 'What is 17 * 23 + 4?',
      samples: [
        { trajectory_id: 'a', final_response: '395', score: 1, ratio: 1.31, tokens: [piece('<tool_call>', 0.4), piece('calc', 0.9), piece('(17*23+4)', 1.1), piece('</tool_call>', 0.4), piece(' 395', 1.2)] },
        { trajectory_id: 'b', final_response: '391', score: 0, ratio: 0.93, tokens: [piece('17*23', -0.6), piece(' is', -0.2), piece(' 387', -1.1), piece(' so', -0.2), piece(' 391', -1.2)] },
        { trajectory_id: 'c', final_response: '395', score: 1, ratio: 1.08, tokens: [piece('<think>', 0.2), piece('use calc', 0.7), piece('</think>', 0.2), piece(' 395', 1.0)] },
        { trajectory_id: 'd', final_response: null, score: 0.2, ratio: 0.76, tokens: [piece('<tool_call>', -0.3), piece('{"nam', -0.9), piece('e":', -0.5), piece(' …', -0.4)] },
      ],
    },
  ],
};
