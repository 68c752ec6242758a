/**
 * What the run controls say of the model: a run's status tells whether its base model is loading
 * (a run stays 'starting' until the model is loaded and its rollout workers are up) or ready.
 */
import type { RunStatus } from '../../../pipeline/operations/events.ts';

export function modelStateText(status: RunStatus, baseModel: string): string {
  switch (status) {
    case 'starting':
      return `loading ${baseModel}…`;
    case 'running':
    case 'paused':
    case 'stopping':
      return `${baseModel} ready`;
    case 'error':
      return `${baseModel}: the run stopped`;
    default:
      return `${baseModel} (loads when a run starts)`;
  }
}
