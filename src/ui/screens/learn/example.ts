/**
 * A made-up batch, clearly labelled as an example, so the lesson can teach before any run exists: one
 * group of four on a two-call chain (solved; answered with the intermediate product; recovered from a
 * failed call; gave up after it), its advantages, tokens and per-turn credits computed by the same
 * pipeline function as a real run's lesson, with the default settings. The ratios are made up.
 */
import { creditConfig } from '../../../pipeline/app/episode-turns.ts';
import { lessonGroup } from '../../../pipeline/app/learn.ts';
import { demoChainTrajectory, demoTask } from '../../sources/demo-data.ts';
import type { LessonBatch } from './source.ts';

const config = creditConfig();
const task = { ...demoTask('arith_tool', 2, 17), split: 'train' as const };
const group = lessonGroup([0, 1, 2, 3].map((i) => demoChainTrajectory(i, task)), config);
const ratios = [1.31, 0.93, 1.08, 0.76];

export const EXAMPLE_BATCH: LessonBatch = {
  run_id: 'example',
  step: 0,
  example: true,
  advantage: config.grpo.advantage,
  reward_scale: config.training.reward_scale,
  clip_epsilon: config.grpo.clip_epsilon,
  clip_epsilon_high: config.grpo.clip_epsilon_high,
  groups: [{ ...group, samples: group.samples.map((s, i) => ({ ...s, ratio: ratios[i] })) }],
};
