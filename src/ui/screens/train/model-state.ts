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

export function modelStateText(status: RunStatus, baseModel: string): string {
  return modelPhaseText(runModelPhase(status), baseModel, {
    idle: 'loads when a run starts',
    failed: 'the run stopped',
  });
}
