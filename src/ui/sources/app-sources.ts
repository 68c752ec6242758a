/** What every screen reads its data from: one source per screen, made by the demo (demo.ts) or the real sources (index.ts). */
import type { EnvironmentsSource } from '../screens/environments/source.ts';
import type { JudgesSource } from '../screens/judges/source.ts';
import type { LearnSource } from '../screens/learn/source.ts';
import type { ModelsSource } from '../screens/models/source.ts';
import type { PlaygroundSource } from '../screens/playground/source.ts';
import type { TrainSource } from '../screens/train/train.svelte.ts';
import type { TrajectorySource } from '../screens/trajectories/source.ts';

export interface AppSources {
  playground: PlaygroundSource;
  train: TrainSource;
  trajectories: TrajectorySource;
  judges: JudgesSource;
  models: ModelsSource;
  learn: LearnSource;
  environments: EnvironmentsSource;
}
