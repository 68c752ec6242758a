/** Trajectories the ONNX judge is scored on in Node (onnx.test.ts) and in Chromium (judge.e2e.test.ts). */
import type { Task, Trajectory } from '../../src/contracts.ts';
import { makeStep, makeTask, makeTrajectory } from './fixtures.ts';

export function judgeCases(): { name: string; trajectory: Trajectory; task: Task }[] {
  const task = makeTask();
  return [
    { name: 'good', trajectory: makeTrajectory(), task },
    { name: 'no answer', trajectory: makeTrajectory({ final_response: null, finish_reason: 'max_steps' }), task },
    {
      name: 'tool error',
      trajectory: makeTrajectory({
        steps: [
          makeStep({
            observation: 'Error: TypeError: cannot read properties of undefined',
            tool_call: {
              tool_name: 'calculator',
              parameters: { expression: '6*7' },
              result: 'Error',
              error: 'TypeError: cannot read properties of undefined',
              latency_ms: 1,
            },
          }),
        ],
        final_response: 'Done.',
      }),
      task,
    },
  ];
}
