/**
 * The data sources behind each screen. `?demo` gives made-up data (every screen visible without a
 * model or stored runs); otherwise the real modules: envs + rollout + judges for the playground,
 * IndexedDB for trajectories, judges, models and the lesson. Training runs and the playground's local
 * model go to the engine web worker (real/engine-client.ts).
 */
import type { JudgesSource } from '../screens/judges/source.ts';
import type { LearnSource } from '../screens/learn/source.ts';
import type { ModelsSource } from '../screens/models/source.ts';
import type { PlaygroundSource } from '../screens/playground/source.ts';
import type { TrainSource } from '../screens/train/train.svelte.ts';
import type { TrajectorySource } from '../screens/trajectories/source.ts';
import { createDemoSources } from './demo.ts';
import { createJudgesSource } from './real/judges.ts';
import { createLearnSource } from './real/learn.ts';
import { createModelsSource } from './real/models.ts';
import { createPlaygroundSource } from './real/playground.ts';
import { createTrainSource } from './real/train.ts';
import { createTrajectorySource } from './real/trajectories.ts';

export interface AppSources {
  playground: PlaygroundSource;
  train: TrainSource;
  trajectories: TrajectorySource;
  judges: JudgesSource;
  models: ModelsSource;
  learn: LearnSource;
}

function isDemo(): boolean {
  return typeof location !== 'undefined' && new URLSearchParams(location.search).has('demo');
}

export function createAppSources(): AppSources {
  if (isDemo()) return createDemoSources();
  return {
    playground: createPlaygroundSource(),
    train: createTrainSource(),
    trajectories: createTrajectorySource(),
    judges: createJudgesSource(),
    models: createModelsSource(),
    learn: createLearnSource(),
  };
}
