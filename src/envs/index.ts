/** Environments: the interface, the registry, deterministic randomness, and answer helpers for authors. */
export * from './types.ts';
export { defineEnvironment, validateEnvironmentSpec, EnvironmentSpecError, stableJson } from './define.ts';
export {
  listEnvironments,
  describeEnvironments,
  getEnvironment,
  hasEnvironment,
  listTags,
  registerEnvironment,
  unregisterEnvironment,
} from './registry.ts';
export { createRng, deriveSeed, hashString, type Rng } from '../rng.ts';
export { finalAnswer, integerAnswer, cleanAnswer, extractCode } from './answer.ts';
export { toolDidTheWork, successfulCalls, containsToken, scoreParts, type WorkCheck } from './evidence.ts';
export { callTurn, answerTurn, type ExpertCall } from './expert-text.ts';
export { openTaskToolbox, replayTrajectory } from './task-toolbox.ts';
