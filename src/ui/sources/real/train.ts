/**
 * Training runs go through the pipeline's RunController (engine + rollout workers). Until it is
 * wired here, `start` says so plainly instead of pretending; `?demo` shows a simulated run.
 */
import { describeEnvironments } from '../../../envs/index.ts';
import type { RunController } from '../../../pipeline/events.ts';
import type { TrainSource } from '../../screens/train/train.svelte.ts';

const notWired: RunController = {
  async start() {
    throw new Error('Training is not wired into this build yet (the engine worker is missing). Open the app with ?demo to see a simulated run.');
  },
  async pause() {},
  async resume() {},
  async stop() {},
  subscribe: () => () => {},
};

export function createTrainSource(controller: RunController = notWired): TrainSource {
  return { controller, environments: async () => describeEnvironments().map((e) => e.name) };
}
