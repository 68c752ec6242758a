/**
 * What a screen says of the model it runs: not loaded yet (and when it will be), loading, ready, or
 * failed. The Train screen's run controls and the Playground say it alike (components/ModelState.svelte).
 */
export type ModelPhase = 'idle' | 'loading' | 'ready' | 'failed';

export interface ModelNotes {
  /** When an idle model loads: "loads when a run starts". */
  idle: string;
  /** What stopped it: "the run stopped". */
  failed: string;
}

export function modelPhaseText(phase: ModelPhase, model: string, notes: ModelNotes): string {
  switch (phase) {
    case 'loading':
      return `loading ${model}…`;
    case 'ready':
      return `${model} ready`;
    case 'failed':
      return `${model}: ${notes.failed}`;
    case 'idle':
      return `${model} (${notes.idle})`;
  }
}
