/**
 * A made-up update, clearly labelled as an example, so the lesson can teach before any run exists: one
 * group of four on a two-call chain (solved; answered with the intermediate product; recovered from a
 * failed call; gave up after it), recomputed by the same pipeline functions as a real run's lesson,
 * from the default settings. The ratios are made up.
 */
import { creditConfig } from '../../../pipeline/app/episode-turns.ts';
import { demoChainTrajectory, demoTask } from '../../sources/demo-data.ts';
import type { LessonBatch } from './source.ts';

const task = { ...demoTask('arith_tool', 2, 17), split: 'train' as const };
const trajectories = [0, 1, 2, 3].map((i) => demoChainTrajectory(i, task));
const ratios = [1.31, 0.93, 1.08, 0.76];

export const EXAMPLE_BATCH: LessonBatch = {
  run_id: 'example',
  run_name: 'Example',
  step: 0,
  example: true,
  config: creditConfig(),
  groups: [{ id: 'example', env: task.env, task: task.prompt, trajectories }],
  ratios: Object.fromEntries(trajectories.map((t, i) => [t.id, ratios[i]])),
};
