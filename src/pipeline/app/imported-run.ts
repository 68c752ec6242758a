/** The run that holds imported adapters' checkpoints: stored like a run, never trained, never compared. */
export const IMPORTED_RUN = 'imported';
