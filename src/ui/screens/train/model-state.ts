/**
 * What the run controls say of the model: a run's status tells whether its base model is loading
 * (a run stays 'starting' until the model is loaded and its rollout workers are up) or ready.
 */
import type { RunStatus } from '../../../pipeline/operations/events.ts';
import { modelPhaseText, type ModelPhase } from '../../lib/model-state.ts';

export function runModelPhase(status: RunStatus): ModelPhase {
  switch (status) {
    case 'starting':
      return 'loading';
    case 'running':
    case 'paused':
    case 'stopping':
      return 'ready';
    case 'error':
      return 'failed';
    default:
      return 'idle';
  }
}

/**
 * Before any run the base is not loaded; after one, the run's trained copy stays in the tab as the
 * Playground's policy and the next run loads the base again (model-shelf.ts).
 */
export function modelStateText(status: RunStatus, baseModel: string): string {
  const over = status === 'finished' || status === 'stopped';
  return modelPhaseText(runModelPhase(status), baseModel, {
    idle: over
      ? 'the run is over: its trained copy is the Playground’s policy; the next run loads the base again'
      : 'loads when a run starts',
    failed: 'the run stopped',
  });
}
